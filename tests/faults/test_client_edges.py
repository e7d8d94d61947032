"""The client's edges: what it hides of a URL, and how it sends a body.

- `hide_credentials` hid everything up to a URL's last `@`, so a path holding `@` after the host
  (`https://host/users/@me`) lost its host in every message; only the authority's userinfo is hidden now,
  a secret holding an unencoded `/` included.
- A request body was serialised twice (once to look for NaN, once by httpx); it is serialised once, and an
  argument whose bytes are not UTF-8 (`experiment create $'\\xff'`) is one line, not httpx's
  UnicodeEncodeError traceback.
"""

from __future__ import annotations

import json

import httpx
import pytest

from srbench.client.api import Client
from srbench.errors import InvalidInput, hide_credentials

from .conftest import cli_env, run_cli


@pytest.mark.parametrize(("text", "shown"), [
    ("https://u:secret@host/x", "https://***@host/x"),
    ("https://host/users/@me", "https://host/users/@me"),
    ("https://host:8443/a@b/c@d?q=x@y", "https://host:8443/a@b/c@d?q=x@y"),
    ("https://user@host/a@b", "https://***@host/a@b"),
    ("https://u:p@ss@host/x@y", "https://***@host/x@y"),
    ("s3://KEY:se/cr+et@bucket/prefix@1", "s3://***@bucket/prefix@1"),
    ("http://[::1]:8080/x@y", "http://[::1]:8080/x@y"),
    ("cannot reach 'http://t:pw@127.0.0.1:9/backup' nor https://h2/@me.",
     "cannot reach 'http://***@127.0.0.1:9/backup' nor https://h2/@me."),
])
def test_only_the_userinfo_of_a_url_is_hidden(text: str, shown: str) -> None:
    assert hide_credentials(text) == shown


def _echoing_client(seen: list[httpx.Request]) -> Client:
    client = Client("http://127.0.0.1:9", "t" * 32)

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b'{"ok": true}', headers={"Content-Type": "application/json"})
    client._http = httpx.Client(base_url=client.url, transport=httpx.MockTransport(answer))
    return client


def test_a_body_is_serialised_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def twice(*_a: object, **_k: object) -> str:
        raise AssertionError("the body was serialised a second time, by httpx")
    monkeypatch.setattr(httpx._content, "json_dumps", twice)
    seen: list[httpx.Request] = []
    body = {"name": "ünï ✓", "n": [1, 2.5], "nested": {"k": None}}
    assert _echoing_client(seen).post("/experiments", body) == {"ok": True}
    assert seen[0].headers["content-type"] == "application/json"
    assert seen[0].content == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert json.loads(seen[0].content) == body


def test_text_that_is_not_utf8_is_one_line_naming_it() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(InvalidInput) as refused:
        _echoing_client(seen).post("/experiments", {"name": "bad\udcff", "idempotency_key": None})
    assert refused.value.message.startswith("request body: name holds bytes that are not UTF-8 text"), refused.value
    assert seen == []


def test_a_non_utf8_argument_is_a_usage_error_not_a_traceback(tmp_path) -> None:
    proc = run_cli(["--url", "http://127.0.0.1:9", "experiment", "create", "bad\udcfe"], tmp_path,
                   cli_env(SR_BENCH_TOKEN="t" * 32))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: request body: name holds bytes that are not UTF-8 text"), proc.stderr
