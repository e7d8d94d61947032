"""The simulator (simulate/server.py) on its own event loop in a daemon thread, for the CLI demo and sync tests."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from srbench.schemas.wire import WireJSON
from srbench.simulate.scripted import ScriptHook
from srbench.simulate.server import FaultHook, SimServer, start_simulator


class SimulatorThread:
    """The simulator on its own event loop in a daemon thread (for the CLI demo and sync tests).

    ``with SimulatorThread(models=...) as sim: httpx.post(sim.v1_url + "/chat/completions", ...)``
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> None:
        self._args = (host, port)
        self._kwargs = kwargs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.server: SimServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None, "the simulator is not running"
        return self.server.url

    @property
    def v1_url(self) -> str:
        return self.url + "/v1"

    @property
    def router_url(self) -> str:
        return self.url + "/router/v1"

    @property
    def log(self) -> list[WireJSON]:
        assert self.server is not None, "the simulator is not running"
        return self.server.log

    def set_fault(self, fault: FaultHook | None) -> None:
        assert self.server is not None, "the simulator is not running"
        self.server.fault = fault

    def set_script(self, script: ScriptHook | None) -> None:
        assert self.server is not None, "the simulator is not running"
        self.server.script = script

    def start(self) -> SimulatorThread:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="sr-bench-simulator", daemon=True)
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(start_simulator(*self._args, **self._kwargs), loop)
        try:
            self.server = fut.result(timeout=10)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self.server is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
