"""Helpers for the service tests: a raw HTTP client returning (status, body), manifest builders."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.discovery import API_PREFIX
from srbench.service.api.server import Runner
from srbench.simulate import samples

TERMINAL = ("completed", "failed", "cancelled", "interrupted", "stopped_early")
PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
FAST_LIMITS = {"concurrency": 4, "total_timeout_s": 10, "idle_timeout_s": 5, "case_timeout_s": 10,
               "max_run_seconds": 30}
REVISIONS = {"mmlu-pro": samples.SAMPLE_REVISION, "gpqa-diamond": samples.SAMPLE_REVISION,
             "arc-agi-2": ArcAgi2.source.revision}


SERVICE_ENV = ("SR_BENCH_OBJECTS_URL", "SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_TOKEN_ENV")


def isolated_env(tmp_path: Path, monkeypatch: Any) -> None:
    """No service, token or object store of the caller's environment leaks into a test, and
    SR_BENCH_HOME is the test's own."""
    for name in SERVICE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))


def free_port() -> int:
    """A loopback port free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def blackhole() -> Iterator[int]:
    """A loopback port that never answers a connection, as an address behind a firewall dropping packets: a
    listener whose accept queue is full, so the kernel drops further SYNs. Skips where a kernel accepts anyway."""
    import pytest  # deferred: benchmarks/ scripts import these helpers without pytest

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            pytest.skip("this kernel accepts connections past a full accept queue: no blackhole on loopback")
        except TimeoutError:
            pass
        yield port
    finally:
        for sock in (*fillers, listener):
            sock.close()


@contextmanager
def loopback_process(cmd: list[str], ready_url: str, log_path: Path, *, timeout: float = 30, token: str | None = None,
                     **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server process (output to `log_path`), wait until `ready_url` answers 200, stop it after.
    A readiness request to sr-bench's /health carries `token` (else the process env's SR_BENCH_TOKEN):
    it needs it, as upstream's does."""
    if token is None and ready_url.endswith("/health"):
        token = (popen.get("env") or {}).get("SR_BENCH_TOKEN")
    ready_headers = {"Authorization": f"Bearer {token}"} if token else {}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **popen)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"{cmd[0]} exited: " + log_path.read_text(errors="replace")[-2000:])
            try:
                if httpx.get(ready_url, headers=ready_headers, timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{cmd[0]} did not start: " + log_path.read_text(errors="replace")[-2000:]
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def processes_under(root: Path) -> list[str]:
    """Command lines of the live processes whose working directory is inside `root` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd == root or root in cwd.parents:
            found.append(cmd)
    return found


class Api:
    """Raw HTTP against the service: every call returns (status, parsed JSON body)."""

    def __init__(self, url: str, token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        self.http = httpx.Client(base_url=url + API_PREFIX, headers=headers, timeout=30)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        resp = self.http.request(method, path, json=body) if body is not None else self.http.request(method, path)
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, resp.content

    def get(self, path: str) -> tuple[int, Any]:
        return self.call("GET", path)

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        return self.call("POST", path, body)

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, data = self.call(method, path, body)
        assert status < 300, (status, data)
        return data

    def error(self, method: str, path: str, body: Any, status: int, code: str | None = None) -> str:
        """Assert an error answer; return its message."""
        got, data = self.call(method, path, body)
        assert got == status, (got, data)
        assert isinstance(data, dict) and isinstance(data.get("error"), str) and isinstance(data.get("code"), str), data
        if code is not None:
            assert data["code"] == code, data
        return data["error"]

    def run_count(self) -> int:
        return len(self.ok("GET", "/runs")["runs"])

    def wait(self, run_id: str, timeout: float = 20, until: Callable[[dict[str, Any]], bool] | None = None
             ) -> dict[str, Any]:
        until = until or (lambda r: r["status"] in TERMINAL)
        deadline = time.monotonic() + timeout
        while True:
            run = self.ok("GET", f"/runs/{run_id}")
            if until(run):
                return run
            assert time.monotonic() < deadline, f"run {run_id} did not get there in {timeout}s: {run}"
            time.sleep(0.02)

    def close(self) -> None:
        self.http.close()


def single(tid: str, base_url: str, model: str | None = None, **extra: Any) -> dict[str, Any]:
    model = model or tid
    return {"id": tid, "kind": "single", "base_url": base_url, "model": model, "prices": {model: PRICE}, **extra}


def manifest(dataset: dict[str, Any], targets: list[Any], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"version": "sr-bench-1.0", "name": "service-test", "profile": dataset["profile"],
                           "seed": dataset["seed"], "dataset": {"path": dataset["path"], "sha256": dataset["sha256"]},
                           "targets": targets, "limits": dict(FAST_LIMITS)}
    out.update(extra)
    return out


def freeze(api: Api, m: dict[str, Any]) -> dict[str, Any]:
    return api.ok("POST", "/plans", {"manifest": m})["manifest"]


class DashboardThread:
    """The Dashboard app on its own loop in a thread, on a free loopback port."""

    def __init__(self, app: web.Application) -> None:
        self.app, self.url = app, ""
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None

    def _main(self) -> None:
        async def go() -> None:
            self._stop = asyncio.Event()
            runner = Runner(self.app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
            self._ready.set()
            await self._stop.wait()
            await runner.cleanup()
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(go())

    def __enter__(self) -> DashboardThread:
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


@contextmanager
def sandbox_api(tmp_path: Path, monkeypatch: Any) -> Iterator[Api]:
    """A client of an embedded service on the test's own store, for tests that pick the code-grading
    sandbox (`code_grade.use_sandbox`): the choice is reset when the service has stopped."""
    from srbench.client.embedded import EmbeddedService
    from srbench.stages.grading import code as code_grade

    isolated_env(tmp_path, monkeypatch)
    try:
        with EmbeddedService(tmp_path / "store") as svc:
            a = Api(svc.url, svc.token)
            a.store_dir = tmp_path / "store"
            yield a
            a.close()
    finally:
        code_grade.use_sandbox(None)
