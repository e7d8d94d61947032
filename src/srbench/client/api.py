"""The thin client every CLI command uses: finds (or starts) the service and calls its API."""

from __future__ import annotations

import json as jsonlib
import math
import os
import shlex
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from srbench.discovery import (
    API_PREFIX,
    CA_ENV,
    CONNECT_TIMEOUT_S,
    client_verify,
    default_port,
    ensure_token,
    env_token,
    read_service_info,
    resolve_store,
    store_command,
    store_identity_of,
    token_env_name,
)
from srbench.errors import (
    Conflict,
    Forbidden,
    IntegrityError,
    InvalidInput,
    NotFound,
    ServiceUnavailable,
    SourceUnavailable,
    SrBenchError,
    Unauthorized,
    hide_credentials,
)

_BY_STATUS: dict[int, type[SrBenchError]] = {400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                              409: Conflict, 413: InvalidInput, 422: IntegrityError,
                                              424: SourceUnavailable}


class Client:
    """The API over HTTP; errors (upstream's ``{"error": message, "code": code}``) become typed errors.
    `actor` (id, role) sends the actor headers, as a trusted proxy does; `verify` is how an https
    service's certificate is checked (`discovery.client_verify`)."""

    def __init__(self, url: str, token: str, timeout: float = 600, actor: tuple[str, str] | None = None,
                 verify: ssl.SSLContext | bool = True) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.verify = verify
        headers = {"Authorization": f"Bearer {token}"}
        if actor is not None:
            headers |= {"X-SR-Bench-Actor-ID": actor[0], "X-SR-Bench-Actor-Role": actor[1]}
        self._http = httpx.Client(base_url=self.url + API_PREFIX, trust_env=not _is_local(self.url),
                                  headers=headers, verify=verify,
                                  timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S)))

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, **kw: Any) -> Any:
        bad = next((seg for seg in path.split("/") if seg in (".", "..") or "?" in seg or "#" in seg), None)
        if bad is not None:          # an id the user typed would leave its route (`dataset show ../targets`)
            raise InvalidInput(f"{bad!r} in {path!r}: an id holds no '?', '#' or a '.'/'..' path segment")
        if "json" in kw:             # serialised once, here: httpx would serialise it again
            kw["content"] = _json_body(kw.pop("json"))
            kw["headers"] = {**kw.get("headers", {}), "Content-Type": "application/json"}
        try:
            resp = self._http.request(method, path, **kw)
        except httpx.TransportError as exc:
            raise ServiceUnavailable(f"cannot reach the sr-bench service at {hide_credentials(self.url)}: "
                                     f"{_transport_problem(exc)}") from None
        try:
            data = resp.json()
        except ValueError:
            data = None
        if resp.status_code >= 400:
            body = data if isinstance(data, dict) else {}
            message = body.get("error")
            if isinstance(message, dict):      # a proxy in front may answer {"error": {"message": …}}
                message = message.get("message")
            cls = _BY_STATUS.get(resp.status_code, SrBenchError)
            raise cls(message if isinstance(message, str) and message else f"service answered HTTP {resp.status_code}",
                      code=body.get("code") if isinstance(body.get("code"), str) else None,
                      details={k: v for k, v in body.items() if k not in ("error", "code")})
        return data

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, json: Any = None) -> Any:
        return self.request("POST", path, json=json if json is not None else {})

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def pages(self, path: str, kind: str, *, after: int = 0, limit: int = 500, **params: Any) -> list[Any]:
        """Every item of a cursor-paged route (`after` / `next_cursor`)."""
        items: list[Any] = []
        while True:
            page = self.get(path, after=after, limit=limit, **params)
            items += page[kind]
            if page.get("next_cursor") is None:
                return items
            after = page["next_cursor"]


def _json_body(body: Any) -> bytes:
    """`body` as the UTF-8 JSON httpx would send (compact, not ASCII-escaped), serialised once. A NaN or an
    infinity (`--margin nan`, `options set … x=Infinity`), or text that is not Unicode (an argument's bytes
    that are not UTF-8: `experiment create $'\\xff'`), is one line naming where it is, not a traceback."""
    try:
        text = jsonlib.dumps(body, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        where = _first(body, "", _non_finite)
        raise InvalidInput(f"request body: {where or 'a value'} is not a finite number (NaN and infinities cannot "
                           "be sent as JSON); give a finite number") from None
    try:
        return text.encode()
    except UnicodeEncodeError:
        where = _first(body, "", _not_unicode)
        raise InvalidInput(f"request body: {where or 'a value'} holds bytes that are not UTF-8 text; give it as "
                           "UTF-8 (check the terminal's or the file's encoding)") from None


def _non_finite(value: Any, where: str) -> str | None:
    return f"{where or 'the value'} ({value})" if isinstance(value, float) and not math.isfinite(value) else None


def _not_unicode(value: Any, where: str) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        value.encode()
    except UnicodeEncodeError:
        return where or "the value"
    return None


def _first(value: Any, where: str, found: Callable[[Any, str], str | None]) -> str | None:
    """Where in `value` (a JSON-like body) `found` first names a problem, e.g. ``set.test_timeout_s (nan)``."""
    hit = found(value, where)
    if hit:
        return hit
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, item in items:
        hit = _first(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key), found)
        if hit:
            return hit
    return None


def _transport_problem(exc: httpx.TransportError) -> str:
    """The exception's name, what was waited for on a connect timeout, or what to do when the service's TLS
    certificate is not trusted."""
    untrusted = _untrusted(exc)
    if untrusted is not None:
        return untrusted
    if isinstance(exc, httpx.ConnectTimeout):      # an address that drops packets: say what was waited for
        return f"no connection within {CONNECT_TIMEOUT_S:g} s (ConnectTimeout): check the URL and the network"
    return type(exc).__name__


def _untrusted(exc: httpx.TransportError) -> str | None:
    """What to do when `exc` is the service's TLS certificate not being trusted, else None."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ssl.SSLCertVerificationError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return None
    return (f"its TLS certificate is not trusted ({cause.verify_message}); give its certificate or CA with "
            f"--ca-file or {CA_ENV}")


def _is_local(url: str) -> bool:
    """A loopback service is never reached through HTTP(S)_PROXY (a proxy cannot reach it)."""
    host = httpx.URL(url).host
    return host in ("localhost", "::1") or host.startswith("127.")


def _healthy(url: str, token: str, store_id: str | None = None, verify: ssl.SSLContext | bool = True) -> bool:
    """Does `url` answer /health (which needs the token) for this store?"""
    try:
        r = httpx.get(url + "/health", headers={"Authorization": f"Bearer {token}"}, timeout=2,
                      trust_env=not _is_local(url), verify=verify)
        return r.status_code == 200 and (store_id is None or r.json().get("store_id") == store_id)
    except httpx.TransportError as exc:
        untrusted = _untrusted(exc)
        if untrusted is not None:                               # say so, start nothing
            raise ServiceUnavailable(f"cannot reach the sr-bench service at {hide_credentials(url)}: "
                                     f"{untrusted}") from None
        return False
    except (httpx.HTTPError, ValueError):
        return False


def _refuses(url: str, token: str, verify: ssl.SSLContext | bool) -> bool:
    """Does the service at `url` answer, refusing `token` (401/403)?"""
    try:
        r = httpx.get(url + "/health", headers={"Authorization": f"Bearer {token}"}, timeout=2,
                      trust_env=not _is_local(url), verify=verify)
    except httpx.HTTPError:
        return False
    return r.status_code in (401, 403)


def _check_url(url: str) -> None:
    """--url / SR_BENCH_URL is an http(s) URL with a host (a malformed one was httpx's traceback)."""
    try:
        parsed = httpx.URL(url)
        ok = parsed.scheme in ("http", "https") and bool(parsed.host)
    except (httpx.InvalidURL, ValueError, TypeError):
        ok = False
    if not ok:
        raise InvalidInput(f"--url / SR_BENCH_URL {hide_credentials(repr(url))} is not an http(s) URL of an sr-bench "
                           "service (e.g. http://127.0.0.1:8090)")
    if parsed.userinfo:             # never echoed, never sent: the service's token is the credential
        raise InvalidInput(f"--url / SR_BENCH_URL {hide_credentials(url)} carries a user name or password: drop them "
                           f"from the URL (the service is reached with its token, {token_env_name()})")


def connect(store: str | None = None, *, autostart: bool = True, url: str | None = None,
            ca_file: str | None = None) -> Client:
    """`url` (``--url``) or SR_BENCH_URL → that external service (no local worker). Else the store's own
    service, started when none runs unless `autostart` is off (``--no-autostart``). An https service's
    certificate is checked against `ca_file` (``--ca-file``) or SR_BENCH_CA_FILE, else the system's."""
    external = url or os.environ.get("SR_BENCH_URL")
    verify = client_verify(ca_file)
    if external:
        _check_url(external)
        token = env_token()
        if not token:
            raise InvalidInput(f"--url / SR_BENCH_URL names a service but {token_env_name()} is not set: export "
                               "the service's token privately (its file is <store>.service-token beside its store)")
        if store is not None and _is_local(external):    # upstream's check: the URL serves this store
            if not _healthy(external.rstrip("/"), token, store_identity_of(resolve_store(store)), verify):
                raise InvalidInput(f"{hide_credentials(external)} is not the service of the store {store} (or does not answer): "
                                   "select its --store or another --url")
        return Client(external, token, verify=verify)
    store_dir = resolve_store(store)
    info = read_service_info(store_dir)
    if info is None and not autostart:          # `stop`, --no-autostart: nothing made for a store never started
        raise ServiceUnavailable(f"no sr-bench service is running for the store {store_dir}")
    token = env_token() or ensure_token(store_dir)
    if info is not None and _healthy(info.url, token, info.store_id, verify):
        return Client(info.url, token, verify=verify)
    if info is not None and env_token() and _refuses(info.url, token, verify):
        raise InvalidInput(f"the service of the store {store_dir} (at {info.url}, pid {info.pid}) refuses the token "
                           f"in {token_env_name()}: it is not this store's; unset {token_env_name()} (the store's own "
                           "token file is read), or set this store's token")
    if not autostart:
        raise ServiceUnavailable(f"no sr-bench service is running for the store {store_dir}")
    return Client(start_local_service(store_dir, token), token)


def start_local_service(store_dir: Path, token: str, wait_s: float = 20.0) -> str:
    """Start `sr-bench serve` for a local store in the background and wait until it answers."""
    store_dir.mkdir(parents=True, exist_ok=True)
    log_path = store_dir.parent / f"{store_dir.name}.service.log"
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    log = os.fdopen(fd, "ab")
    default_port()                          # a bad SR_BENCH_PORT is one line here, not in the log
    cmd = [sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(store_dir), "--host", "127.0.0.1"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()
    try:
        url = _wait_started(proc, store_dir, token, wait_s)
    except BaseException:               # refused, too slow, or ^C: nothing this command started keeps running
        _stop_started(proc)
        raise
    print(f"sr-bench: started the service for the store {store_dir} at {url} (pid {proc.pid}); "
          "it keeps running in the background with this shell's environment and the variables of "
          f"{store_dir.name}.env beside the store (keys, credentials): `{store_command(store_dir)}` "
          "stops it", file=sys.stderr)
    return url


def _wait_started(proc: subprocess.Popen[bytes], store_dir: Path, token: str, wait_s: float) -> str:
    """The URL of the service `proc` once it answers for the store; its refusal or a timeout as one line."""
    log_path = store_dir.parent / f"{store_dir.name}.service.log"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        info = read_service_info(store_dir)
        if info is not None and info.pid == proc.pid and _healthy(info.url, token, info.store_id):
            return info.url
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace").strip()
            last = tail.splitlines()[-1] if tail else "no output"
            last = last.removeprefix("error: ")          # one "error:" (main.py adds it)
            raise ServiceUnavailable(f"the local sr-bench service did not start: {last}")
        time.sleep(0.05)
    raise ServiceUnavailable(f"the local sr-bench service did not answer within {wait_s:g} s and was stopped (its "
                             f"log: {log_path}); try again when the host is less busy, or start it in the "
                             f"foreground: `sr-bench serve --store {shlex.quote(str(store_dir))}`")


def _stop_started(proc: subprocess.Popen[bytes]) -> None:
    """The service this command started and then gave up on does not keep running unseen in the background."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
