"""The Dashboard process in front of the real service: sign-in, the allowlisted proxy, secrets, the CLI."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import COOKIE, dashboard_key
from srbench.discovery import CONNECT_TIMEOUT_S
from srbench.errors import InvalidInput

from .helpers import DashboardThread, blackhole, freeze, manifest, single

KEY = "dash-key-0123456789abcdef"


@pytest.fixture
def dash(service) -> Iterator[DashboardThread]:
    with DashboardThread(make_dashboard(service.url, service.token, KEY)) as d:
        yield d


@contextlib.contextmanager
def signed_in(dash: DashboardThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=dash.url, timeout=30, follow_redirects=False) as c:
        r = c.post("/login", data={"key": KEY})
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(COOKIE + "=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        yield c


def test_nothing_without_signing_in(dash) -> None:
    with httpx.Client(base_url=dash.url, follow_redirects=False) as c:
        assert c.get("/").status_code == 303 and c.get("/").headers["location"] == "/login"
        r = c.get("/api/runs")
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        c.cookies.set(COOKIE, "forged")
        assert c.get("/api/runs").status_code == 401
        c.cookies.clear()
        bad = c.post("/login", data={"key": "not-the-key"})
        assert bad.status_code == 401 and COOKIE not in bad.headers.get("set-cookie", "")
        assert "not the key of this Dashboard" in bad.text
        page = c.get("/login")
        assert page.status_code == 200 and "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert c.get("/static/core.js").status_code == 200           # public assets, no data in them
        assert c.get("/static/../auth.py").status_code == 404


def test_runs_created_elsewhere_show_up_and_the_service_token_never_does(dash, service, api, prepare, sim) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
    api.wait(run_id)
    with signed_in(dash) as c:
        page = c.get("/")
        assert page.status_code == 200 and "/static/core.js" in page.text
        runs = c.get("/api/runs").json()["runs"]
        assert [r["id"] for r in runs] == [run_id] and runs[0]["progress"]["completed"] == 14
        assert runs[0]["target_info"] == [{"id": "m", "kind": "single", "model": "sim-strong"}]
        assert c.get(f"/api/runs/{run_id}/report").json()["summary"]["planned_cells"] == 14
        calls = c.get(f"/api/runs/{run_id}/calls", params={"offset": 10, "limit": 100}).json()
        assert calls["total"] == 14 and len(calls["calls"]) == 4
        one = c.get(f"/api/runs/{run_id}/calls/{calls['calls'][0]['cell_id']}").json()
        assert one["record"]["status"] == "completed"
        cases = c.get(f"/api/datasets/{ds['id']}/cases", params={"limit": 25}).json()
        assert cases["total"] == 14 and all("answer" not in x for x in cases["cases"])
        scripts = [f"/static/{m}.js" for m in ("core", "runs", "tabs", "create", "browse", "main")]
        assert all(c.get(p).status_code == 200 for p in scripts) and all(p in page.text for p in scripts)
        bodies = [c.get(p).text for p in ("/", *scripts, "/api/runs", f"/api/runs/{run_id}/events",
                                          "/api/targets", f"/api/runs/{run_id}/report")]
        assert not any(service.token in b for b in bodies)
        assert c.post("/logout").status_code == 403                  # no CSRF header: still signed in
        assert c.get("/api/runs").status_code == 200
        assert c.post("/logout", headers={"X-SR-Bench-Dashboard": "1"}).status_code == 303
        assert c.get("/api/runs").status_code == 401                 # the session is gone


def test_only_the_allowlist_passes(dash, api, service) -> None:
    with signed_in(dash) as c:
        for method, path in [("GET", "/api/store/verify"), ("POST", "/api/runs/x/cancel"), ("POST", "/api/shutdown"),
                             ("POST", "/api/targets"), ("GET", "/api/runs/..%2Fshutdown"),
                             ("GET", "/api/runs/%2E%2E/targets"), ("GET", "/api/objects/b3:00")]:
            r = c.request(method, path, headers={"X-SR-Bench-Dashboard": "1"}, json={})
            assert r.status_code == 404, (method, path, r.status_code)
        for path in ("/api/comparisons", "/api/runs", "/api/plans", "/api/runs/x/recover"):
            assert c.post(path, json={}).status_code == 403               # no CSRF header: refused here
        r = c.post("/api/comparisons", json={}, headers={"X-SR-Bench-Dashboard": "1"})
        assert r.status_code == 400 and "baseline_run_id" in r.json()["error"]   # the service's answer
    assert api.ok("GET", "/health")["status"] == "ready" and api.run_count() == 0        # still running, no run


def test_a_stopped_service_is_a_clear_502(tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with DashboardThread(make_dashboard(f"http://127.0.0.1:{port}", "t", KEY)) as d, signed_in(d) as c:
        r = c.get("/api/runs")
        assert r.status_code == 502 and "does not answer" in r.json()["error"]


def test_a_service_that_never_answers_a_connection_is_a_502_within_seconds(tmp_path) -> None:
    """A blackholed service (a loopback listener whose accept queue is full) was waited for up to the 600 s a
    request may take; the connection is given CONNECT_TIMEOUT_S."""
    with blackhole() as port, DashboardThread(make_dashboard(f"http://127.0.0.1:{port}", "t", KEY)) as d, \
            signed_in(d) as c:
        r = c.get("/api/runs")
    assert r.status_code == 502 and r.json()["error"] == (
        f"the sr-bench service does not answer: no connection within {CONNECT_TIMEOUT_S:g} s "
        "(ConnectionTimeoutError)"), r.text


def test_key_file_is_private_and_made_once(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("SR_BENCH_DASHBOARD_KEY", raising=False)
    key, where = dashboard_key(tmp_path)
    assert len(key) >= 16 and where == str(tmp_path / "dashboard.key")
    assert oct(os.stat(where).st_mode & 0o777) == "0o600" and dashboard_key(tmp_path)[0] == key
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "real").write_text("x" * 20)
    os.chmod(other / "real", 0o600)
    (other / "dashboard.key").symlink_to(other / "real")
    with pytest.raises(InvalidInput, match="symlinks are refused"):
        dashboard_key(other)
    monkeypatch.setenv("SR_BENCH_DASHBOARD_KEY", "short")
    with pytest.raises(InvalidInput, match="at least 16"):
        dashboard_key(tmp_path)


def test_cli_dashboard_serves_the_external_service(service, api, tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "SR_BENCH_URL": service.url, "SR_BENCH_TOKEN": service.token,
           "SR_BENCH_DASHBOARD_KEY": KEY, "SR_BENCH_STATE_ROOT": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "dashboard", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/login", data={"key": KEY}, follow_redirects=False)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
        assert r.status_code == 303
        with httpx.Client(cookies={COOKIE: r.cookies[COOKIE]}) as c:
            runs = c.get(f"http://127.0.0.1:{port}/api/runs")
        assert runs.status_code == 200 and runs.json()["runs"] == []
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert f":{port}/" in out and service.token not in out + err and KEY not in out + err
    assert api.ok("GET", "/health")["status"] == "ready"        # stopping the Dashboard left the service alone
    assert not Path(tmp_path, ".sr-bench").joinpath("default", "dashboard.key").exists()   # the env key was used
