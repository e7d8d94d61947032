"""`sr-bench serve` on a network (issue 38, item 7): the token and the Dashboard keys are judged by one
entropy estimate (`service.api.auth.weakness`); a non-loopback listen needs TLS or an explicit --insecure;
with --tls-cert/--tls-key the service serves HTTPS (here on loopback: a test cannot bind a network
address), and the CLI and the Dashboard trust it through --ca-file / SR_BENCH_CA_FILE."""

from __future__ import annotations

import json
import os
import secrets
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import check_listen_keys
from srbench.discovery import service_file
from srbench.errors import InvalidInput
from srbench.service.api.auth import MIN_BITS, check_listen_token, listen_tls, weakness

from .helpers import DashboardThread, free_port
from .tls import self_signed

STRONG = secrets.token_urlsafe(32)
GUESSABLE = ("password12345678", "0123456789abcdef", "qwertyuiopasdfgh", "aaaaaaaaaaaaaaaaaaaa",
             "abcabcabcabcabcabcabc", "correct-horse-battery", "Summer2024Summer2024")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_HOME=str(tmp_path / "home"), **extra)
    return env


def _cli(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "srbench.cli.main", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("secret", GUESSABLE)
def test_a_guessable_secret_is_refused_by_one_rule_for_token_and_keys(secret) -> None:
    """Long enough, many different characters, still guessable: a word, a sequence, a keyboard run, a repeat."""
    weak = weakness(secret)
    assert weak is not None and "bits of entropy" in weak and f"at least {MIN_BITS}" in weak
    with pytest.raises(InvalidInput) as token:
        check_listen_token("0.0.0.0", secret)
    with pytest.raises(InvalidInput) as key:
        check_listen_keys("0.0.0.0", secret, "SR_BENCH_DASHBOARD_KEY", [])
    for exc in (token, key):                             # the same words from the same function, never the secret
        assert exc.value.code == "weak_token" and weak in exc.value.message and secret not in exc.value.message
    check_listen_token("127.0.0.1", secret)              # loopback takes any token
    check_listen_keys("::1", secret, "env", [])


def test_random_secrets_pass() -> None:
    for secret in (STRONG, secrets.token_hex(16), secrets.token_urlsafe(20)):
        assert weakness(secret) is None, secret
    assert weakness(secrets.token_urlsafe(200)) is None          # longer than zxcvbn takes: judged by its start


def test_a_network_serve_needs_tls_or_insecure(tmp_path) -> None:
    env = _env(tmp_path, SR_BENCH_TOKEN=STRONG)
    store = tmp_path / "store"
    out = _cli(["serve", "--store", str(store), "--host", "0.0.0.0", "--port", "0"], env, timeout=30)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "needs TLS" in lines[0] and "--tls-cert" in lines[0] and "--insecure" in lines[0]
    assert STRONG not in out.stdout + out.stderr and not service_file(store).exists()
    with pytest.raises(InvalidInput) as exc:
        listen_tls("0.0.0.0", None, None, False)
    assert exc.value.code == "tls_required"
    assert listen_tls("0.0.0.0", None, None, True) is None         # --insecure: the operator said so
    assert listen_tls("127.0.0.1", None, None, False) is None      # loopback: plain HTTP
    with pytest.raises(InvalidInput, match="go together"):
        listen_tls("127.0.0.1", str(tmp_path / "c.pem"), None, False)
    out = _cli(["serve", "--store", str(store), "--host", "0.0.0.0", "--port", "0", "--tls-cert", str(tmp_path / "no"),
                "--tls-key", str(tmp_path / "no")], env, timeout=30)
    assert out.returncode == 2 and "cannot serve TLS" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def _wait_https(store: Path, proc: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 30
    while not service_file(store).exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
        time.sleep(0.1)
    return str(json.loads(service_file(store).read_text())["url"])


def test_the_service_serves_https_and_the_cli_trusts_its_ca_file(tmp_path) -> None:
    cert, key = self_signed(tmp_path)
    store, port = tmp_path / "store", free_port()
    env = _env(tmp_path, SR_BENCH_TOKEN=STRONG)
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(store), "--host",
                             "127.0.0.1", "--port", str(port), "--tls-cert", str(cert), "--tls-key", str(key)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _wait_https(store, proc)
        assert url == f"https://127.0.0.1:{port}"                         # where the CLI finds it: https
        listed = _cli(["--store", str(store), "runs", "--json"], _env(tmp_path, SR_BENCH_TOKEN=STRONG,
                                                                       SR_BENCH_CA_FILE=str(cert)))
        assert listed.returncode == 0 and json.loads(listed.stdout)["runs"] == [], listed.stderr
        by_url = _cli(["--url", url, "--ca-file", str(cert), "runs", "--json"], env)
        assert by_url.returncode == 0, by_url.stderr
        untrusted = _cli(["--url", url, "runs", "--json"], env)          # the system's trust store: not this cert
        lines = untrusted.stderr.strip().splitlines()
        assert untrusted.returncode != 0 and len(lines) == 1, untrusted.stderr
        assert "not trusted" in lines[0] and "SR_BENCH_CA_FILE" in lines[0] and STRONG not in untrusted.stderr
        found = _cli(["--store", str(store), "runs", "--json"], env)     # found by service.json, same answer,
        assert found.returncode != 0 and "not trusted" in found.stderr  # and no second service started
        with pytest.raises(httpx.TransportError):                        # no plain HTTP on that port
            httpx.get(f"http://127.0.0.1:{port}/api/sr-bench/v1/health", timeout=5).raise_for_status()
        trust = ssl.create_default_context(cafile=str(cert))
        with DashboardThread(make_dashboard(url, STRONG, STRONG, verify=trust)) as dash, \
                httpx.Client(base_url=dash.url, follow_redirects=False) as browser:
            assert browser.post("/login", data={"key": STRONG}).status_code == 303
            health = browser.get("/api/health")                           # the Dashboard proxies over https
            assert health.status_code == 200 and health.json()["status"] == "ready", health.text
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert STRONG not in out + err
