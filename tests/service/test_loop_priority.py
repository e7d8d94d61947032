"""Issue 41 (item 1): on the service's loop, the callbacks of serving code run before those of a run's
dispatch (service/api/priority.py): a callback scheduled in a `SERVING` context runs ahead of those already
queued, so does the read of a connection accepted by a server opened inside `serving()`, also when its
bytes arrive in the middle of a long pass (within `POLL_EVERY` callbacks); a task started
in `background()` is not served first. In the real service, a request's handler runs served first and a
run's dispatch does not. Nothing here is timed: only the order in which callbacks run."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

from srbench.service.api import priority
from srbench.service.wire.views import RunViews
from srbench.stages.dispatch import pacing

from .helpers import Api, freeze, manifest, single


def test_a_served_callback_runs_before_those_queued_before_it() -> None:
    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        assert priority.install(loop) and not priority.install(loop)        # once
        order: list[Any] = []
        for i in range(3):
            loop.call_soon(order.append, i)
        with priority.serving():
            loop.call_soon(order.append, "served")
            loop.call_soon(order.append, "served after")      # served callbacks keep their order
        background = priority.background()
        with priority.serving():
            loop.call_soon(order.append, "background", context=background)
        await asyncio.sleep(0.01)
        return order
    assert asyncio.run(main()) == ["served", "served after", 0, 1, 2, "background"]


async def served_reader(loop: asyncio.AbstractEventLoop,
                        order: list[str]) -> tuple[asyncio.Server, socket.socket, asyncio.Event]:
    """A server opened in `serving()` whose connection appends "read" to `order` when bytes arrive, a client
    connected to it (its connection made), and the event set once the bytes are read."""
    connected, got = asyncio.Event(), asyncio.Event()

    class Reader(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            connected.set()

        def data_received(self, data: bytes) -> None:
            order.append("read")
            got.set()
    with priority.serving():
        server = await loop.create_server(Reader, "127.0.0.1", 0)
    client = socket.create_connection(("127.0.0.1", server.sockets[0].getsockname()[1]))
    await connected.wait()
    return server, client, got


def test_a_served_connection_is_read_before_the_callbacks_queued_before_its_bytes_arrived() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        priority.install(loop)
        order: list[str] = []
        server, client, got = await served_reader(loop, order)
        try:
            client.sendall(b"x")                      # readable at the loop's next select
            for i in range(200):
                loop.call_soon(order.append, f"queued {i}")
            await got.wait()
            await asyncio.sleep(0.01)
        finally:
            client.close()
            server.close()
        return order
    order = asyncio.run(main())
    assert order[0] == "read" and len(order) == 201, order[:5]


def test_bytes_that_arrive_mid_pass_are_read_within_poll_every_callbacks_not_after_the_pass() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        priority.install(loop)
        order: list[str] = []
        server, client, got = await served_reader(loop, order)
        try:
            def step(i: int) -> None:
                order.append(f"queued {i}")
                if i == 100:
                    client.sendall(b"x")              # arrives in the middle of one pass of 500 callbacks
            for i in range(500):
                loop.call_soon(step, i)
            await got.wait()
            await asyncio.sleep(0.01)
        finally:
            client.close()
            server.close()
        return order
    order = asyncio.run(main())
    read = order.index("read")
    assert order.index("queued 100") < read <= order.index("queued 100") + priority.POLL_EVERY + 1, read
    assert read < order.index("queued 499")                 # within the pass, not after it


def test_callbacks_from_other_threads_never_queue_a_second_look() -> None:
    """The look for served sockets is queued by the loop's thread alone: a thread that calls the loop while it
    looks (its select lets other threads run) never queues another, so the looks never fill the queue."""
    async def main() -> int:
        loop = asyncio.get_running_loop()
        priority.install(loop)
        served = loop._call_soon.__self__                   # type: ignore[attr-defined]
        most = 0

        def step() -> None:
            nonlocal most
            most = max(most, sum(1 for h in list(loop._ready) if h is served.poller))   # type: ignore[attr-defined]

        class Selector:                                     # another thread calls the loop during each look
            looks = 0

            def select(self, timeout: float) -> Any:
                self.looks += 1
                if self.looks <= 10:
                    t = threading.Thread(target=loop.call_soon_threadsafe, args=(step,))
                    t.start()
                    t.join()
                return real.select(timeout)
        real, served.selector = served.selector, Selector()
        for _ in range(3000):
            loop.call_soon(step)
        for _ in range(5000):
            if len(loop._ready) <= 1:                       # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.001)
        return most
    assert asyncio.run(asyncio.wait_for(main(), 60)) == 1


def test_the_service_serves_requests_first_and_dispatches_in_the_background(
        api: Api, sim: Any, prepare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[bool] = []
    one = RunViews.one

    def spied_one(self: RunViews, *args: Any, **kwargs: Any) -> Any:
        served.append(priority.SERVING.get())
        return one(self, *args, **kwargs)
    monkeypatch.setattr(RunViews, "one", spied_one)
    dispatching: list[bool] = []
    enter = pacing.LoopPacer.enter

    async def spied_enter(self: pacing.LoopPacer) -> None:
        dispatching.append(priority.SERVING.get())
        await enter(self)
    monkeypatch.setattr(pacing.LoopPacer, "enter", spied_enter)

    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})
    assert api.wait(run["id"])["status"] == "completed"
    assert served and all(served), served                   # POST /runs and GET /runs/{id}: served first
    assert dispatching and not any(dispatching), dispatching  # the run's cells: not
