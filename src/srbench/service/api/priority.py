"""Requests before dispatch on the service's one event loop (issue 41, item 1).

Runs dispatch on the loop that also answers HTTP. A pass of the loop runs every callback that was ready when
it began, in the order they became ready, so with ~800 zero-latency cells in flight (100k cells, 50 targets)
a request waited for the rest of the pass in which its bytes arrived, then a whole pass for its read
callback, then another for its handler's task (~2.5 passes of 0.05-0.4 s each on a loaded 2-core host;
GET /runs/{id} + GET /runs/{id}/live p95 0.26-0.45 s, each handler ~2 ms of CPU).

`install` makes the loop run the callbacks of serving code first: those whose context has `SERVING` set
go to the front of the ready queue instead of its end, so they run next, in the pass they became ready in.
The server's listening socket is opened with `SERVING` set (`serving()`), so every connection it accepts,
its reads and each request's handler task carry it; work a handler starts in the background (a run's
dispatch, a preparation) is created in `background()`, which clears it. A request then waits only for the
rest of the pass it arrived in; within a long pass the loop also looks for served sockets that became
ready every `POLL_EVERY` callbacks (a select that waits for nothing; the others' events are left to the
pass's own select), so a request waits for at most that many callbacks, not a whole pass. Nothing is lost
or reordered within the dispatch: a pass still runs as many callbacks as were ready when it began (one
served callback ahead of it moves one of them to the next pass).

It reorders `asyncio`'s pure-Python selector loop (its ready deque, `_call_soon`, `_add_callback` and
selector, the same in CPython 3.11-3.13); any other loop (uvloop, a proactor) is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import selectors
import threading
from asyncio import base_events
from collections.abc import Callable, Iterator
from typing import Any

SERVING: contextvars.ContextVar[bool] = contextvars.ContextVar("srbench_serving", default=False)


POLL_EVERY = 32     # callbacks of a long pass between two looks for served sockets that became ready


class _Served:
    """The loop's ready queue with served callbacks first, and a look for served sockets every `POLL_EVERY`
    callbacks of a long pass."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ready = loop._ready                          # type: ignore[attr-defined]
        self.selector = loop._selector                    # type: ignore[attr-defined]
        self.poller = asyncio.Handle(self.poll, (), loop, contextvars.Context())
        self.polling = False

    def first(self, handle: asyncio.Handle) -> None:
        """Queue `handle` after the served callbacks at the front of the queue, before everything else (served
        callbacks keep their order: a transport's `connection_made` before its reader). Only the loop pops
        from the front, so the indexes read here stay put while other threads append at the end."""
        ready = self.ready
        i, n = 0, len(ready)
        while i < n and ready[i]._context.get(SERVING, False):
            i += 1
        ready.insert(i, handle)

    def last(self, handle: asyncio.Handle) -> None:
        self.ready.append(handle)
        if not self.polling and len(self.ready) > POLL_EVERY and threading.get_ident() == self.loop._thread_id:  # type: ignore[attr-defined]
            self.polling = True                 # the loop's thread alone queues the look: it is queued once at most
            self.ready.insert(POLL_EVERY, self.poller)

    def call_soon(self, callback: Callable[..., Any], args: tuple[Any, ...],
                  context: contextvars.Context | None) -> asyncio.Handle:
        handle = asyncio.Handle(callback, args, self.loop, context)
        if SERVING.get() if context is None else context.get(SERVING, False):
            self.first(handle)
        else:
            self.last(handle)
        return handle

    def add_callback(self, handle: asyncio.Handle) -> None:     # a selector event (a socket read or write)
        if handle.cancelled():
            return
        if handle._context.get(SERVING, False):                 # type: ignore[attr-defined]
            self.first(handle)
        else:
            self.last(handle)

    def poll(self) -> None:
        """Within a long pass: queue first the served sockets that are ready now (a request that arrived
        mid-pass waits `POLL_EVERY` callbacks, not the rest of the pass). Other sockets are left to the
        pass's own select, which reports them again."""
        for key, mask in self.selector.select(0):
            reader, writer = key.data
            for handle, bit in ((reader, selectors.EVENT_READ), (writer, selectors.EVENT_WRITE)):
                if mask & bit and handle is not None and not handle.cancelled() and handle._context.get(SERVING, False):
                    self.first(handle)
        self.polling = len(self.ready) > POLL_EVERY
        if self.polling:
            self.ready.insert(POLL_EVERY, self.poller)


def install(loop: asyncio.AbstractEventLoop) -> bool:
    """Serve `loop`'s `SERVING` callbacks first (once; False when the loop is not asyncio's own)."""
    if (not isinstance(loop, base_events.BaseEventLoop) or getattr(loop, "_srbench_priority", False)
            or not all(hasattr(loop, a) for a in ("_ready", "_selector", "_add_callback", "_call_soon"))):
        return False
    served = _Served(loop)
    loop._call_soon = served.call_soon          # type: ignore[attr-defined]
    loop._add_callback = served.add_callback    # type: ignore[attr-defined]
    loop._srbench_priority = True               # type: ignore[attr-defined]
    return True


@contextlib.contextmanager
def serving() -> Iterator[None]:
    """What opens the server's sockets inside serves first (their accepted connections and requests too)."""
    token = SERVING.set(True)
    try:
        yield
    finally:
        SERVING.reset(token)


def background() -> contextvars.Context:
    """A context for a task a request starts that must not be served first (a run's dispatch)."""
    ctx = contextvars.copy_context()
    ctx.run(SERVING.set, False)
    return ctx


__all__ = ["POLL_EVERY", "SERVING", "background", "install", "serving"]
