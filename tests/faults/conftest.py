"""Fixtures of the fault-tolerance suite: a loopback-only network guard, one real service per module on a
tmp store, a prepared smoke dataset, a store snapshot, and the CLI as a subprocess.

The service helpers of ``tests/service`` are reused by import (``service.helpers`` / ``service.conftest``:
pytest puts ``tests/`` on ``sys.path`` for the packages below it).
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.conftest import sources  # noqa: F401  (session fixture: native-format smoke sources)
from service.helpers import REVISIONS, Api, single
from srbench.client.embedded import EmbeddedService

_SERVICE_ENV = ("SR_BENCH_OBJECTS_URL", "SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_TOKEN_ENV", "SR_BENCH_STORE")


# -- no network but loopback -----------------------------------------------------------------------------
def _loopback(host: Any) -> bool:
    if host in (None, "", "localhost", b"localhost"):
        return True
    if isinstance(host, bytes):
        host = host.decode()
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


class NetworkGuard:
    """Refuses name lookups and connections to anything but loopback in this process (the embedded
    service and the simulator run here; a benchmark `fetch` would otherwise try the internet)."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self._orig = (socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex)

    def _check(self, host: Any) -> None:
        if not _loopback(host):
            self.refused.append(str(host))
            raise OSError(f"tests/faults: network access to {host!r} is disabled (loopback only)")

    def install(self) -> None:
        getaddrinfo, connect, connect_ex = self._orig
        guard = self

        def guarded_getaddrinfo(host: Any, *args: Any, **kw: Any) -> Any:
            guard._check(host)
            return getaddrinfo(host, *args, **kw)

        def guarded_connect(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._check(address[0])
            return connect(sock, address)

        def guarded_connect_ex(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._check(address[0])
            return connect_ex(sock, address)

        socket.getaddrinfo = guarded_getaddrinfo  # type: ignore[assignment]
        socket.socket.connect = guarded_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]

    def uninstall(self) -> None:
        socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex = self._orig  # type: ignore[method-assign]


@pytest.fixture(scope="package", autouse=True)
def network_guard() -> Iterator[NetworkGuard]:
    guard = NetworkGuard()
    guard.install()
    try:
        yield guard
    finally:
        guard.uninstall()


# -- one service per module --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        for name in _SERVICE_ENV:
            mp.delenv(name, raising=False)
        mp.setenv("SR_BENCH_HOME", str(tmp_path_factory.mktemp("faults-home")))
        yield mp


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, clean_env: pytest.MonkeyPatch) -> Iterator[EmbeddedService]:
    with EmbeddedService(tmp_path_factory.mktemp("faults") / "store") as svc:
        yield svc


@pytest.fixture(scope="module")
def api(service: EmbeddedService) -> Iterator[Api]:
    a = Api(service.url, service.token)
    yield a
    a.close()


@pytest.fixture(scope="module")
def dataset(api: Api, sources: dict[str, Path]) -> dict[str, Any]:  # noqa: F811
    """The 14-case MMLU-Pro smoke dataset, prepared from the local synthetic source (no download)."""
    return api.ok("POST", "/datasets/prepare", {
        "benchmark": "mmlu-pro", "profile": "smoke", "source_path": str(sources["mmlu-pro"]),
        "revision": REVISIONS["mmlu-pro"]})


# -- the store, before and after ---------------------------------------------------------------------------
JOURNAL_TABLES = ("refs", "runs", "cells", "events", "action_cache", "action_last")


def store_snapshot(store: Path) -> dict[str, Any]:
    """Every file under the store (with a content hash, except the live SQLite files) and the journal's
    row counts. Two snapshots are equal iff nothing was written."""
    files: dict[str, str | None] = {}
    for p in sorted(store.rglob("*")):
        if not p.is_file():
            continue
        rel = str(p.relative_to(store))
        live = rel.startswith("journal.sqlite3") or rel == "service.lock"
        files[rel] = None if live else hashlib.sha256(p.read_bytes()).hexdigest()
    conn = sqlite3.connect(f"file:{store / 'journal.sqlite3'}?mode=ro", uri=True)
    try:
        rows = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in JOURNAL_TABLES}
        last = {"events": conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0],
                **{t: conn.execute(f"SELECT COALESCE(MAX(updated_at), 0) FROM {t}").fetchone()[0]
                   for t in ("refs", "runs", "cells")}}
    finally:
        conn.close()
    return {"files": files, "rows": rows, "last": last}


def settled_snapshot(store: Path, quiet_s: float = 0.15, timeout_s: float = 10.0) -> dict[str, Any]:
    """A snapshot once the store has stopped changing (a finished run still writes its final report)."""
    deadline = time.monotonic() + timeout_s
    last = store_snapshot(store)
    while True:
        time.sleep(quiet_s)
        now = store_snapshot(store)
        if now == last or time.monotonic() > deadline:
            return now
        last = now


# -- the CLI -----------------------------------------------------------------------------------------------
def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(extra)
    return env


def run_cli(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "srbench.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def real_ids(api: Api, dataset: dict[str, Any]) -> dict[str, str]:
    """Ids of a real (failed, fast) run, its dataset, one cell and its call record."""
    api.ok("POST", "/targets", {"targets": [single("dead", "http://127.0.0.1:9/v1", "m")]})
    plan = api.ok("POST", "/plans", {"manifest": {
        "version": "sr-bench-1.0", "profile": "smoke", "seed": dataset["seed"],
        "dataset": {"path": dataset["path"], "sha256": dataset["sha256"]}, "targets": [{"id": "dead"}]}})["manifest"]
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    api.wait(run_id)
    cell = api.ok("GET", f"/runs/{run_id}/calls")["calls"][0]
    experiment = api.ok("POST", "/experiments", {"name": "fuzz"})
    return {"run_id": run_id, "dataset_id": dataset["id"], "cell_id": cell["cell_id"], "digest": cell["call"],
            "call_id": cell["id"], "experiment_id": experiment["id"]}
