"""Security (SVC-3, SVC-6, TG-5): the token on every route but health, the private token file, and a full
scan for a model credential after runs against endpoints that accept it, reject it, and echo it back."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.helpers import REVISIONS, Api, single
from srbench.discovery import API_PREFIX, token_path
from srbench.service.route_table import ROUTES
from srbench.simulate.behaviour import SimModel, messages_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .conftest import cli_env, run_cli, settled_snapshot, store_snapshot


# -- the token on every route ------------------------------------------------------------------------------
def _fill(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"{(\w+)}", lambda m: ids.get(m.group(1), "dummy-" + m.group(1)), path)


def _bad_auth(token: str) -> dict[str, dict[str, str | bytes] | None]:
    return {
        "none": None,
        "empty": {"Authorization": ""},
        "wrong": {"Authorization": "Bearer " + secrets.token_urlsafe(24)},
        "scheme only": {"Authorization": "Bearer"},
        "no scheme": {"Authorization": token},
        "basic": {"Authorization": "Basic " + base64.b64encode(f"x:{token}".encode()).decode()},
        "prefix": {"Authorization": "Bearer " + token[:-1]},
        "suffix": {"Authorization": "Bearer " + token + "x"},
        "double space": {"Authorization": "Bearer  " + token},
        "tab": {"Authorization": "Bearer\t" + token},
        "swapped case": {"Authorization": "Bearer " + token.swapcase()},
        "other header": {"X-Api-Key": token},
        "cookie": {"Cookie": f"token={token}"},
        "not UTF-8": {"Authorization": b"Bearer \xe9" + token.encode()},        # was a 500 (UnicodeEncodeError)
    }


def test_every_route_needs_the_token(service, api, real_ids) -> None:
    """Real ids fill the path parameters, so that a 403 can only be the token's doing."""
    before = settled_snapshot(service.store_dir)
    refused = 0
    with httpx.Client(base_url=service.url + API_PREFIX, timeout=10) as anon:
        for label, headers in _bad_auth(service.token).items():
            for method, path, *_ in ROUTES:
                url = _fill(path, real_ids) + (f"?token={service.token}" if label == "none" else "")
                resp = anon.request(method, url, headers=headers, json={} if method == "POST" else None)
                assert resp.status_code == 403, (label, method, path, resp.status_code, resp.text[:200])
                assert resp.json() == {"error": "Service authorization required: missing or wrong service token",
                                       "code": "unauthorized"}
                assert service.token not in resp.text
                refused += 1
            assert anon.get("/openapi.json", headers=headers).status_code == 403, label
    assert refused == len(_bad_auth("x")) * len(ROUTES)          # /health too, as upstream
    # nothing written by the refused POSTs, and the refused /shutdown stopped nothing
    assert store_snapshot(service.store_dir) == before
    # positive control: with the token every GET route is served
    for method, path, name, *_ in ROUTES:
        if method == "GET" and name != "get_preparation":     # a preparation job would download a source
            query = {"dataset_selection": "?profile=smoke", "robustness_run": f"?perturbed={real_ids['run_id']}"}
            status, data = api.get(_fill(path, real_ids) + query.get(name, ""))
            if name in ("diagnose_run", "robustness_run"):      # the real run is no router's: served, and refused
                assert status == 400 and data.get("code") not in (None, "unauthorized"), (path, status, data)
                continue
            assert status == 200, (path, status, data)


def test_a_cli_started_service_keeps_its_token_private(tmp_path) -> None:
    """The managed token (SVC-3) is a 0600 regular file even under umask 0, never a symlink; the store is 0700."""
    env = cli_env(SR_BENCH_PORT="0", SR_BENCH_HOME=str(tmp_path / "home"))
    old = os.umask(0)
    try:
        proc = run_cli(["runs"], tmp_path, env)                 # autostarts `serve` on the managed store
    finally:
        os.umask(old)
    try:
        assert proc.returncode == 0, proc.stderr
        store = tmp_path / ".sr-bench" / "default" / "store"
        tok = token_path(store)
        st = os.lstat(tok)
        assert stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode), st
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.getuid(), oct(st.st_mode)
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(store / "journal.sqlite3").st_mode) & 0o077 == 0
        token = tok.read_text().strip()
        assert len(token) >= 32
        info = json.loads((store / "service.json").read_text())
        ok = httpx.get(info["url"] + API_PREFIX + "/runs", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert ok.status_code == 200
        cmdline = Path(f"/proc/{info['pid']}/cmdline").read_bytes()
        assert token.encode() not in cmdline                  # the service token is no argument either
        # a token file swapped for a symlink is refused by the next command, which does not follow it
        target = tmp_path / "planted"
        target.write_text("planted-token")
        target.chmod(0o600)
        tok.unlink()
        tok.symlink_to(target)
        again = run_cli(["runs"], tmp_path, env)
        assert again.returncode == 2 and "symlink" in again.stderr, again.stderr
        assert target.read_text() == "planted-token"
        tok.unlink()
        tok.write_text(token)
        tok.chmod(0o600)
    finally:
        run_cli(["stop"], tmp_path, env)


# -- the credential scan -----------------------------------------------------------------------------------
ROLE = b'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "A"}}]}\n\n'


def _echo_faults(index: dict[str, int]) -> Any:
    """The accepting endpoint echoes the Authorization header back in four places, by case."""
    echo = {
        1: Fault(content="Answer: A. (you sent {authorization})", echo_authorization=True,
                 headers={"x-vsr-echo": "{authorization}"}, label="echo-content"),
        2: Fault(status=500, body='{"error": {"message": "upstream refused {authorization}"}}',
                 echo_authorization=True, label="echo-500"),
        3: Fault(raw_sse=(ROLE, b'data: {"error": {"message": "key {authorization} is rate limited"}}\n\n'),
                 echo_authorization=True, label="echo-event"),
        4: Fault(raw_sse=(ROLE, b'data: {"choices": [{"index": 0, "delta": {"content": "{authorization}"}, '
                               b'"finish_reason": "stop"}], "model": "{authorization}", '
                               b'"usage": {"prompt_tokens": 3, "completion_tokens": 1, "note": "{authorization}"}}'
                               b'\n\ndata: [DONE]\n\n'), echo_authorization=True, label="echo-everywhere"),
    }
    return lambda body: echo.get(index[messages_key(body["messages"])] % 6)


@pytest.fixture
def scan_setup(tmp_path: Path, sources: dict[str, Path]) -> Iterator[dict[str, Any]]:
    secret = "sk-srb-scan-" + secrets.token_hex(16)
    env = cli_env(SR_BENCH_PORT="0", SR_BENCH_HOME=str(tmp_path / "home"), SRB_SCAN_KEY=secret)
    rejecting = Fault(status=401, body='{"error": {"message": "Incorrect API key provided: {authorization}"}}',
                      echo_authorization=True, label="echo-401")
    with SimulatorThread(models=[SimModel("sim-strong", skill=0.9)], api_key=secret) as acc, \
            SimulatorThread(models=[SimModel("sim-strong", skill=0.9)], fault=lambda body: rejecting) as rej:
        try:
            yield {"secret": secret, "env": env, "cwd": tmp_path, "acc": acc, "rej": rej,
                   "source": sources["mmlu-pro"]}
        finally:
            run_cli(["stop"], tmp_path, env)


def _cli(setup: dict[str, Any], *args: str, ok: bool = True) -> Any:
    proc = run_cli(list(args), setup["cwd"], setup["env"], timeout=60)
    setup.setdefault("outputs", []).append(proc.stdout + proc.stderr)
    if ok:
        assert proc.returncode == 0, (args, proc.stderr[-1500:])
    return proc


def _all_pages(api: Api, path: str, key: str) -> list[Any]:
    items: list[Any] = []
    while True:
        page = api.ok("GET", f"{path}{'&' if '?' in path else '?'}offset={len(items)}&limit=100")
        items += page[key]
        if not page[key] or len(items) >= page["total"]:
            return items


def test_a_model_credential_appears_nowhere(scan_setup) -> None:
    s = scan_setup
    secret, cwd, acc, rej = s["secret"], s["cwd"], s["acc"], s["rej"]
    ds = json.loads(_cli(s, "dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                         "--source-path", str(s["source"]), "--revision", REVISIONS["mmlu-pro"]).stdout)
    cases = decode_cases(Path(ds["path"]).read_bytes())
    acc.set_fault(_echo_faults({messages_key([m.model_dump() for m in c.messages]): i for i, c in enumerate(cases)}))
    targets = [single("accepts", acc.v1_url, "sim-strong", api_key_env="SRB_SCAN_KEY"),
               single("rejects", rej.v1_url, "sim-strong", api_key_env="SRB_SCAN_KEY")]
    (cwd / "targets.json").write_text(json.dumps(targets))
    _cli(s, "target", "register", "--file", str(cwd / "targets.json"))
    run_ids = []
    for tid in ("accepts", "rejects"):
        m = {"version": "sr-bench-1.0", "name": f"scan-{tid}", "profile": "smoke", "seed": ds["seed"],
             "dataset": {"path": ds["path"], "sha256": ds["sha256"]}, "targets": [{"id": tid}],
             "limits": {"concurrency": 2, "total_timeout_s": 10, "idle_timeout_s": 5}}
        (cwd / f"{tid}.json").write_text(json.dumps(m))
        _cli(s, "plan", "--manifest", str(cwd / f"{tid}.json"), "--output", str(cwd / f"{tid}.frozen.json"))
        out = _cli(s, "run", "--manifest", str(cwd / f"{tid}.frozen.json"), ok=False)
        assert out.returncode == 1, out.stderr[-800:]                 # both runs have failed cells
        run_ids.append(json.loads(out.stdout)["run_id"])
        _cli(s, "show", run_ids[-1], "--calls")
        _cli(s, "show", run_ids[-1], "--events")
        _cli(s, "report", run_ids[-1], "--output", str(cwd / f"{tid}.report.json"))

    # the endpoints saw the key: the accepting one answered, the rejecting one refused (and dispatch stopped)
    assert sum(e["status"] == 200 for e in acc.log) >= 8 and all(e["status"] != 401 for e in acc.log)
    assert [e["status"] for e in rej.log] and all(e["status"] == 401 for e in rej.log) and len(rej.log) <= 2

    store = cwd / ".sr-bench" / "default" / "store"
    info = json.loads((store / "service.json").read_text())
    token = token_path(store).read_text().strip()
    api = Api(info["url"], token)
    texts: dict[str, str] = {"openapi": json.dumps(api.ok("GET", "/openapi.json")),
                             "targets": json.dumps(api.ok("GET", "/targets")), "runs": json.dumps(api.ok("GET", "/runs"))}
    masked = 0
    for run_id in run_ids:
        run = api.ok("GET", f"/runs/{run_id}")
        texts[f"{run_id} run"] = json.dumps(run)
        texts[f"{run_id} events"] = json.dumps(api.ok("GET", f"/runs/{run_id}/events"))
        texts[f"{run_id} report"] = json.dumps(api.ok("GET", f"/runs/{run_id}/report"))
        texts[f"{run_id} results"] = json.dumps(_all_pages(api, f"/runs/{run_id}/results", "results"))
        for c in _all_pages(api, f"/runs/{run_id}/calls", "calls"):
            full = api.ok("GET", f"/runs/{run_id}/calls/{c['cell_id']}")
            texts[f"{run_id} call {c['cell_id']}"] = json.dumps(full)
            masked += "***" in json.dumps(full.get("record"))
        assert run["status"] == "failed", run
    # the echoes arrived and were masked: content, 500 body, error event, model/usage, 401 body
    assert masked >= 5, masked
    rej_calls = [t for k, t in texts.items() if k.startswith(run_ids[1] + " call")]
    assert any("Incorrect API key provided: ***" in t for t in rej_calls), rej_calls[0][:3000]
    texts["cli outputs"] = "\n".join(s["outputs"])

    assert store / "journal.sqlite3-wal" in set(store.iterdir()), "the WAL should exist while the service runs"
    leaks = _scan_files(cwd, secret)
    leaks += [name for name, text in texts.items() if secret in text]
    assert leaks == [], f"the credential leaked into: {leaks}"

    # the service process has the key in its environment (it sent it), but not in its argv
    cmdline = Path(f"/proc/{info['pid']}/cmdline").read_bytes()
    assert secret.encode() not in cmdline and b"serve" in cmdline, cmdline
    environ = Path(f"/proc/{info['pid']}/environ").read_bytes()
    assert f"SRB_SCAN_KEY={secret}".encode() in environ.split(b"\0")
    api.close()

    # after a clean stop (the WAL checkpointed into the database) the files are still clean
    _cli(s, "stop")
    _wait_gone(info["pid"])
    assert _scan_files(cwd, secret) == []


def _scan_files(root: Path, secret: str) -> list[str]:
    needles = [secret.encode(), secret.encode("utf-16-le"), base64.b64encode(secret.encode())]
    leaks, scanned = [], 0
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            data = p.read_bytes()
            scanned += 1
            if any(n in data for n in needles):
                leaks.append(str(p.relative_to(root)))
    names = {p.name for p in root.rglob("*")}
    assert scanned > 30 and "store.service.log" in names and "journal.sqlite3" in names, (scanned, sorted(names)[:20])
    return leaks


def _wait_gone(pid: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return
        except FileNotFoundError:
            return
        time.sleep(0.05)


# -- a non-loopback listen needs a strong token (SVC-6) ----------------------------------------------------
@pytest.mark.parametrize("token", ["x", "short-token-15c", "a" * 40, "abab" * 10])
def test_a_non_loopback_listen_refuses_a_weak_token(tmp_path, token) -> None:
    """`SR_BENCH_TOKEN=x sr-bench serve --host 0.0.0.0` is one line saying how to make a token, before any
    socket is bound (a listening service would run into the timeout instead)."""
    env = cli_env(SR_BENCH_HOME=str(tmp_path / "home"), SR_BENCH_TOKEN=token)
    try:
        proc = run_cli(["serve", "--store", str(tmp_path / "store"), "--host", "0.0.0.0", "--port", "0"],
                       tmp_path, env, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the service listened on 0.0.0.0 with the weak token {token!r}")
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "strong service token" in lines[0] and "SR_BENCH_TOKEN" in lines[0], proc.stderr
    assert "secrets.token_urlsafe" in lines[0]
    assert token not in lines[0]                       # the refused secret is not echoed
    assert not (tmp_path / "store" / "service.json").exists()


def test_token_strength_rule() -> None:
    from srbench.errors import InvalidInput
    from srbench.service.api.auth import check_listen_token

    check_listen_token("127.0.0.1", "x")                    # loopback: any token
    check_listen_token("0.0.0.0", secrets.token_urlsafe(32))  # what the refusal says to make
    check_listen_token("::", secrets.token_hex(16))
    for weak in ("", "x", "123456789012345", "1111111111111111", "12341234123412341234", "password12345678",
                 "0123456789abcdef", "correct-horse-battery", "qwertyuiopasdfghjkl"):
        with pytest.raises(InvalidInput, match="strong service token"):
            check_listen_token("0.0.0.0", weak)
