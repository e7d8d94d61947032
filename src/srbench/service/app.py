"""The service's composition root (issue 39, item 9): the `Service` object every handler shares, the app factory
serving the route table (`service.route_table`) under /api/sr-bench/v1 with its OpenAPI document, and `serve`.
It sits above the routes; `service/api/` is the HTTP edge below them.

One service per store (an exclusive lock on ``service.lock``) is the journal's only writer. Every
route but /health needs the bearer token (`service.actors`: the token, actor headers, roles and
scope). Errors are upstream's JSON ``{"error": message, "code": code}`` (`service.wire`).
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import logging
import os
import re
import signal
import socket
import ssl
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, ValidationError

from srbench import VERSION
from srbench.cas import ObjectStore
from srbench.discovery import API_PREFIX, dir_identity, service_file, store_command, store_identity_of
from srbench.errors import (
    IntegrityError,
    InvalidInput,
    SourceUnavailable,
    SrBenchError,
    hide_credentials,
    storage_fault,
)
from srbench.rules import Engine
from srbench.service import route_table
from srbench.service.api import priority
from srbench.service.api.actors import access_middleware
from srbench.service.api.auth import check_listen_token, listen_tls
from srbench.service.api.faults import DamageLog
from srbench.service.api.http import MAX_BODY, SERVICE
from srbench.service.api.middleware import error_middleware, no_store_middleware
from srbench.service.api.server import Runner
from srbench.service.datasets import preparations
from srbench.service.journal.schema import refuse_foreign
from srbench.service.journal.writer import Journal, JournalActionCache
from srbench.service.runs.heap import settle
from srbench.service.runs.manager import RunManager
from srbench.service.runs.run_checks import arrow_on_system_malloc, limit_malloc_arenas
from srbench.service.store.env_file import credential_fault, env_file_path, load_env_file
from srbench.service.store.task_resources import scope_for, sweep_leftovers
from srbench.service.team.reach import unreachable
from srbench.service.wire.figures import ReportFigures
from srbench.service.wire.views import RunViews

log = logging.getLogger("srbench.service")


class Service:
    """Everything the handlers share: the store, the journal, the rule engine and the runs."""

    def __init__(self, store_dir: Path, store_identity: str | None = None) -> None:
        limit_malloc_arenas()           # before the journal's and the runs' threads allocate (issue 42)
        arrow_on_system_malloc()        # before a dataset preparation loads pyarrow
        self.store_dir = store_dir
        refuse_foreign(str(store_dir / "journal.sqlite3"))   # another program's store: left as it is
        store_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(store_dir, 0o700)
        info = _store_info(store_dir)
        self.store_id = store_identity or store_identity_of(store_dir)
        objects_url = objects_location(store_dir, info)
        self.objects_shared = objects_url is not None      # a team object store other journals may use
        if not self.objects_shared:
            refuse_lost_journal(store_dir)
        self.objects = open_objects(objects_url) if objects_url else ObjectStore(str(store_dir / "cas"))
        self.journal = Journal(str(store_dir / "journal.sqlite3"), objects=self.objects)
        self.engine = Engine(self.objects, JournalActionCache(self.journal))
        self.runs = RunManager(self.objects, self.journal, self.engine)
        self.runs.store_dir = store_dir             # where its env file is, for errors that name it
        self.views = RunViews(self.runs)
        self.figures: ReportFigures = self.runs.figures     # upstream's report figures, per report digest
        self.preparing: dict[str, asyncio.Task[None]] = {}
        self.started_at = time.time()
        self.stopping = asyncio.Event()
        self.damage = DamageLog()

    def close(self) -> None:
        self.journal.close()


def check_store_identity(value: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise InvalidInput("--store-identity must be a SHA-256 digest (64 lower-case hex characters)")
    return value


class StoreInfo(BaseModel):
    """A store's ``store.json``: its id, the version that made it, and where its objects live. Keys this
    version does not know are kept as read (an older or newer sr-bench may have written them)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    store_id: str | None = None
    """The store's id (``store-`` and 16 hex characters), made on first start."""
    version: str | None = None
    """The sr-bench version that made the store."""
    objects_url: str | None = None
    """The team object store (``SR_BENCH_OBJECTS_URL``) the store's objects live in; absent: its own ``cas/``."""

    def text(self) -> str:
        """The file's text: the keys set, in the order read or made (the bytes the dict of before wrote)."""
        return json.dumps(self.model_dump(exclude_unset=True))


def _store_info(store_dir: Path) -> StoreInfo:
    """The store's ``store.json`` (its id, and where its objects live), made on first start."""
    path = store_dir / "store.json"
    if path.exists():
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"{path} cannot be read ({exc}): it is damaged; restore the store from a copy, "
                               "or give another --store") from None
        if not isinstance(raw, dict):
            raise InvalidInput(f"{path} is damaged (not a JSON object): restore the store from a copy, or give "
                               "another --store")
        try:
            return StoreInfo.model_validate(raw)
        except ValidationError as exc:
            raise InvalidInput(f"{path} is damaged ({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}): restore "
                               "the store from a copy, or give another --store") from None
    info = StoreInfo(store_id="store-" + uuid.uuid4().hex[:16], version=VERSION)
    path.write_text(info.text())
    return info


def open_objects(url: str) -> ObjectStore:
    """The team object store at `url`; one line naming it when fsspec cannot open it (an unknown
    protocol, a missing filesystem package, a path under a file, refused credentials)."""
    try:
        return ObjectStore(url)
    except SrBenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - fsspec raises many kinds; each is one line here
        fault = credential_fault(exc)
        if fault is not None:
            raise fault from None
        raise InvalidInput(hide_credentials(f"the object store {url} cannot be opened ({type(exc).__name__}: {exc}): "
                                            "give SR_BENCH_OBJECTS_URL an fsspec URL this host can write "
                                            "(s3://bucket/prefix, a directory …)")) from None


def refuse_lost_journal(store_dir: Path) -> None:
    """A store whose own cas/ holds objects but whose journal is gone is refused, nothing created: a new,
    empty journal would show none of its runs, datasets or targets, and `store gc --apply` would then
    delete every object as unreachable."""
    if (store_dir / "journal.sqlite3").exists():
        return
    cas = store_dir / "cas"
    held = [d for d in (cas / "objects", cas / "packs") if d.is_dir() and next(d.iterdir(), None) is not None]
    if held:
        raise IntegrityError(f"the store {store_dir} holds objects (in {', '.join(d.name + '/' for d in held)} of "
                             "cas/) but its journal journal.sqlite3 is missing: restore it from a copy of the store; "
                             "nothing was created (a new journal would list none of its runs, and `store gc` would "
                             "call every object unreachable)")


def objects_location(store_dir: Path, info: StoreInfo) -> str | None:
    """Where the store's objects live when not in its own ``cas/``: ``SR_BENCH_OBJECTS_URL``, recorded
    in ``store.json`` (`info`) on first use so that later starts without the variable find the same objects."""
    path = store_dir / "store.json"
    recorded, wanted = info.objects_url, os.environ.get("SR_BENCH_OBJECTS_URL") or None
    if wanted is None or wanted == recorded:
        return recorded
    if recorded is not None:
        raise InvalidInput(f"the store {store_dir} keeps its objects at {hide_credentials(recorded)}; "
                           f"SR_BENCH_OBJECTS_URL names {hide_credentials(wanted)} (unset it, or use another store "
                           "for that object store)")
    if (store_dir / "journal.sqlite3").exists() and (store_dir / "cas").exists():
        raise InvalidInput(f"the store {store_dir} keeps its objects in its own cas/; SR_BENCH_OBJECTS_URL would "
                           "hide them (use a new store for the team object store, or push runs to it)")
    why = unreachable(wanted)                     # (fsspec's http store opens without asking its server)
    if why is not None:
        raise SourceUnavailable(f"cannot reach the object store {hide_credentials(wanted)} ({why}): check "
                                "SR_BENCH_OBJECTS_URL and that its server is up and reachable from this host; "
                                "nothing was recorded")
    open_objects(wanted)                          # a URL that cannot be opened is never recorded
    if not wanted.startswith("memory://"):        # memory:// lives as long as one process: never recorded
        info.objects_url = wanted
        tmp = path.with_suffix(".tmp")
        tmp.write_text(info.text())
        os.replace(tmp, path)
    return wanted


def make_app(service: Service, token: str) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY,
                          middlewares=[no_store_middleware, error_middleware, access_middleware(token)])
    app[SERVICE] = service
    for route in route_table.ROUTES:        # each declared on its handler in service/routes/ (`service.api.bindings`)
        assert route.handler is not None, route.name
        app.router.add_route(route.method, API_PREFIX + route.path, route.handler)
        for alias in route.aliases:
            app.router.add_route(route.method, alias, route.handler)
    async def openapi(request: web.Request) -> web.Response:
        return web.json_response(route_table.openapi())

    app.router.add_get(API_PREFIX + "/openapi.json", openapi)

    async def on_shutdown(app: web.Application) -> None:
        for task in list(service.preparing.values()):
            task.cancel()
        await service.runs.shutdown()

    app.on_shutdown.append(on_shutdown)
    return app


async def _listen(runner: web.AppRunner, host: str, port: int, fallback: bool,
                  tls: ssl.SSLContext | None) -> web.TCPSite:
    site = web.TCPSite(runner, host, port, ssl_context=tls)
    try:
        await site.start()
    except OSError as exc:
        if not (fallback and port != 0 and exc.errno == errno.EADDRINUSE):
            raise InvalidInput(f"cannot listen on {host}:{port}: {_listen_problem(exc)}") from None
        site = web.TCPSite(runner, host, 0, ssl_context=tls)
        await site.start()
    return site


def _listen_problem(exc: OSError) -> str:
    """Why a listen failed, and the fix (a host name that does not resolve said "Unknown error -2")."""
    if isinstance(exc, socket.gaierror):
        return (f"{exc.strerror or exc} (--host is not a name or address of this host); give --host an address "
                "of this host (127.0.0.1, ::1, 0.0.0.0)")
    what = os.strerror(exc.errno) if exc.errno else str(exc)
    if exc.errno == errno.EADDRINUSE:
        return f"{what}; pick another port (--port, or SR_BENCH_PORT; 0 = any free port) or stop what holds it"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{what}; give --host an address of this host (127.0.0.1, ::1, 0.0.0.0)"
    return what


class StoreLock:
    """Exclusive lock: one service per store."""

    def __init__(self, store_dir: Path) -> None:
        store_dir.mkdir(parents=True, exist_ok=True)
        self.fh = open(store_dir / "service.lock", "a+")  # noqa: SIM115 - held for the service lifetime
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read(32).strip()
            self.fh.close()
            who = (f" (pid {holder}: `{store_command(store_dir)}`, or end that process)"
                   if holder.isdigit() else "")
            raise InvalidInput(f"another sr-bench service already owns the store {store_dir}{who}") from None
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(str(os.getpid()))
        self.fh.flush()

    def release(self) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


async def serve(store_dir: Path, host: str, port: int, token: str, *, ready: Any = None,
                port_fallback: bool = False, store_identity: str | None = None, tls_cert: str | None = None,
                tls_key: str | None = None, insecure: bool = False) -> None:
    """Run the service until SIGTERM/SIGINT or POST /shutdown: HTTPS with `tls_cert`/`tls_key`; a
    non-loopback `host` needs a strong token and TLS or `insecure` (`auth.listen_tls`).

    With `port_fallback` (the default port, not one the user asked for), a port another program or
    another store's service holds is replaced by a free one; the URL is recorded in the store's
    ``service.json``, where clients find it. An explicit port that is taken is a one-line error."""
    check_listen_token(host, token)
    tls = listen_tls(host, tls_cert, tls_key, insecure)
    loaded = load_env_file(store_dir)            # keys and credentials that survive restarts (never echoed)
    if loaded:
        log.info("read %d variable(s) from %s", len(loaded), env_file_path(store_dir))
    refuse_foreign(str(store_dir / "journal.sqlite3"))      # before the lock file is made there
    lock = StoreLock(store_dir)
    # hand the GIL over sooner so the journal writer's commits are not held up by the event loop
    sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
    service = Service(store_dir, store_identity)
    try:
        try:
            service.runs.recover_after_restart()
            preparations.fail_interrupted(service.journal)
        except Exception as exc:                # a damaged journal page met on the first write: named, one line
            fault = storage_fault(exc)
            if fault is None:
                raise
            raise type(fault)(fault.message.replace("the store's journal", f"the journal {service.journal.path}",
                                                    1)) from None
        sweep_leftovers(scope_for(store_dir))      # task containers a killed process of this store left
        app = make_app(service, token)
        runner = Runner(app, handle_signals=False)
        await runner.setup()
        settle()        # the heap built so far out of the collector's passes (runs/heap.py)
        priority.install(asyncio.get_running_loop())     # requests before dispatch on this loop (issue 41)
        with priority.serving():                # its connections and requests are served first
            site = await _listen(runner, host, port, port_fallback, tls)
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"{'https' if tls is not None else 'http'}://{'[' + host + ']' if ':' in host else host}:{bound}"
        info = {"url": url, "pid": os.getpid(), "store_id": service.store_id, "started_at": time.time(),
                "store_dir": dir_identity(store_dir)}
        tmp = service_file(store_dir).with_suffix(".tmp")
        tmp.write_text(json.dumps(info))
        os.replace(tmp, service_file(store_dir))
        if ready is not None:
            ready(url, service)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, service.stopping.set)
            except (NotImplementedError, RuntimeError):
                pass
        await service.stopping.wait()
        await runner.cleanup()
    finally:
        try:
            info_now = json.loads(service_file(store_dir).read_text())
            if info_now.get("pid") == os.getpid():
                service_file(store_dir).unlink()
        except (FileNotFoundError, ValueError):
            pass
        service.close()
        lock.release()
