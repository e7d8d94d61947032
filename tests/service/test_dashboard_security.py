"""The Dashboard on a network (issue 25, item 3): the key only by POST (its rate limit:
test_check_limits.py), strong keys and TLS (or an explicit --insecure) on a
non-loopback bind, CSRF on sign-out, and the security headers on every answer (303, 404, 405 too)."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import COOKIE
from srbench.dashboard.listen import listen_tls
from srbench.errors import InvalidInput

from .helpers import DashboardThread, free_port
from .tls import self_signed

KEY = "dash-sec-key-Jq7vX2mLp9ZrT4wK"           # ~96 bits by the entropy estimate
WEAK = "aaaaaaaaaaaaaaaa"
HEADERS = {"content-security-policy": "frame-ancestors 'none'", "x-frame-options": "DENY",
           "x-content-type-options": "nosniff", "cache-control": "no-store"}


@pytest.fixture
def dash(service) -> Iterator[DashboardThread]:
    with DashboardThread(make_dashboard(service.url, service.token, KEY)) as d:
        yield d


def test_the_key_is_never_taken_from_a_url(dash) -> None:
    with httpx.Client(base_url=dash.url, follow_redirects=False) as c:
        r = c.get("/login", params={"key": KEY})
        assert r.status_code == 400 and COOKIE not in r.headers.get("set-cookie", "")
        assert "never in a URL" in r.text and c.get("/api/runs").status_code == 401


@pytest.mark.parametrize(("body", "ctype"), [
    (b"key=\xe9", "application/x-www-form-urlencoded"),                   # a raw byte that is not UTF-8
    (b"key=x", "application/x-www-form-urlencoded; charset=bogus"),       # a charset Python does not know
])
def test_a_sign_in_form_that_cannot_be_read_is_a_400(dash, body, ctype) -> None:
    """Each was aiohttp's UnicodeDecodeError / LookupError: a 500 from the Dashboard."""
    with httpx.Client(base_url=dash.url, follow_redirects=False) as c:
        r = c.post("/login", content=body, headers={"Content-Type": ctype})
        assert r.status_code == 400 and "could not be read" in r.text, (r.status_code, r.text[:200])
        assert COOKIE not in r.headers.get("set-cookie", "")
        assert c.post("/login", data={"key": KEY}).status_code == 303        # the right key still signs in


def test_a_session_cookie_of_bytes_that_are_not_utf8_is_signed_out_not_a_500(dash) -> None:
    """A cookie holding a raw byte like 0xe9 reached the session lookup as a surrogate: a 500 on every page."""
    import socket

    host, port = dash.url.split("//")[1].rstrip("/").split(":")
    for request in (b"GET /api/runs HTTP/1.1\r\n", b"GET / HTTP/1.1\r\n",
                    b"POST /logout HTTP/1.1\r\nX-SR-Bench-Dashboard: 1\r\nContent-Length: 0\r\n"):
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(request + b"Host: x\r\nConnection: close\r\nCookie: " + COOKIE.encode() + b"=\xe9\xff\r\n\r\n")
            status = s.recv(200).split(b"\r\n")[0]
        assert status.split()[1] in (b"303", b"401"), (request, status)


def test_signing_out_needs_the_csrf_header(dash) -> None:
    with httpx.Client(base_url=dash.url, follow_redirects=False) as c:
        assert c.post("/login", data={"key": KEY}).status_code == 303
        refused = c.post("/logout")                            # what a form on another local port can send
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        assert c.get("/api/health").status_code == 200         # still signed in
        assert c.post("/logout", headers={"X-SR-Bench-Dashboard": "1"}).status_code == 303
        assert c.get("/api/health").status_code == 401


def test_every_answer_carries_the_security_headers(dash) -> None:
    with httpx.Client(base_url=dash.url, follow_redirects=False) as c:
        answers = {"303": c.get("/"), "404": c.get("/no-such-page"), "404 static": c.get("/static/nope.js"),
                   "405": c.put("/login"), "200": c.get("/login"), "401": c.get("/api/runs"),
                   "403": c.post("/logout"), "400": c.get("/login?key=x")}
        assert [answers[k].status_code for k in ("303", "404", "405")] == [303, 404, 405]
        for what, r in answers.items():
            for name, value in HEADERS.items():
                assert value in r.headers.get(name, ""), (what, name, dict(r.headers))


def test_a_weak_key_is_refused_on_a_network_bind(tmp_path) -> None:
    with pytest.raises(InvalidInput, match="strong Dashboard key") as exc:
        listen_tls("0.0.0.0", WEAK, "SR_BENCH_DASHBOARD_KEY", [], None, None, True)
    assert exc.value.code == "weak_token" and "bits of entropy" in exc.value.message
    with pytest.raises(InvalidInput, match="user 'bob'"):
        listen_tls("0.0.0.0", KEY, "env", [("short-key", "bob", "read")], None, None, True)
    assert listen_tls("127.0.0.1", WEAK, "env", [], None, None, False) is None      # loopback: any key
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_DASHBOARD_KEY=WEAK, SR_BENCH_HOME=str(tmp_path), SR_BENCH_URL="http://127.0.0.1:9",
               SR_BENCH_TOKEN="t" * 20)
    out = subprocess.run([sys.executable, "-m", "srbench.cli.main", "dashboard", "--host", "0.0.0.0", "--insecure"],
                         env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode != 0 and "strong Dashboard key" in out.stderr and WEAK not in out.stdout + out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_network_bind_needs_tls_or_insecure(tmp_path) -> None:
    with pytest.raises(InvalidInput, match="--tls-cert and --tls-key") as exc:
        listen_tls("0.0.0.0", KEY, "env", [], None, None, False)
    assert exc.value.code == "tls_required"
    assert listen_tls("0.0.0.0", KEY, "env", [], None, None, True) is None           # the operator said so
    with pytest.raises(InvalidInput, match="go together"):
        listen_tls("0.0.0.0", KEY, "env", [], str(tmp_path / "c.pem"), None, False)
    with pytest.raises(InvalidInput, match="cannot serve TLS"):
        listen_tls("0.0.0.0", KEY, "env", [], str(tmp_path / "c.pem"), str(tmp_path / "k.pem"), False)


def test_the_dashboard_serves_tls_on_a_network_bind_with_a_secure_cookie(service, tmp_path) -> None:
    cert, key = self_signed(tmp_path)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_DASHBOARD_KEY=KEY, SR_BENCH_HOME=str(tmp_path), SR_BENCH_URL=service.url,
               SR_BENCH_TOKEN=service.token)
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "dashboard", "--host", "0.0.0.0", "--port",
                             str(port), "--tls-cert", str(cert), "--tls-key", str(key)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trust = ssl.create_default_context(cafile=str(cert))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.post(f"https://127.0.0.1:{port}/login", data={"key": KEY}, verify=trust)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.2)
        assert r.status_code == 303 and "Secure" in r.headers["set-cookie"] and "HttpOnly" in r.headers["set-cookie"]
        with pytest.raises(httpx.TransportError):                      # no plain HTTP on that port
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=5).raise_for_status()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert "https://0.0.0.0 (not loopback" in out and KEY not in out + err


def test_the_sign_out_button_sends_the_header(browser, dash) -> None:
    from .browser import sign_in

    page = browser.new_page()
    sign_in(page, dash.url, KEY)
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(dash.url + "/login")
    status = page.evaluate("fetch('/api/runs', {credentials: 'same-origin'}).then(r => r.status)")
    assert status == 401                                       # the session is closed, not only the page left
