"""The real service on its own event loop in a background thread (demo and tests)."""

from __future__ import annotations

import asyncio
import secrets
import threading
from pathlib import Path
from typing import Any

from srbench.client.api import Client
from srbench.service.app import serve


class EmbeddedService:
    """``with EmbeddedService(store_dir) as svc: svc.client.get("/runs")`` — loopback, random port."""

    def __init__(self, store_dir: Path, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        self.store_dir = store_dir
        self.host, self.port = host, port
        self.token = token or secrets.token_urlsafe(24)
        self.url = ""
        self.service: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def _ready_cb(self, url: str, service: Any) -> None:
        self.url, self.service = url, service
        self._ready.set()

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(serve(self.store_dir, self.host, self.port, self.token, ready=self._ready_cb))
        except BaseException as exc:
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    def start(self) -> EmbeddedService:
        self._ready.clear()
        self._error = None
        self.url = ""
        self._thread = threading.Thread(target=self._main, name="sr-bench-service", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None:
            raise self._error
        if not self.url:
            raise RuntimeError("embedded service did not start")
        self.client = Client(self.url, self.token)
        return self

    def stop(self) -> None:
        if self._loop is not None and self.service is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self.service.stopping.set)
            self._thread.join(timeout=30)
        self.client.close()

    def __enter__(self) -> EmbeddedService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
