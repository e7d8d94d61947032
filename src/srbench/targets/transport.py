"""Transport: one streamed OpenAI-compatible chat completion, bounded by the run's limits (RUN-7).

`stream_chat` POSTs a body built by `build_body` to ``{base_url}/chat/completions`` through the
caller's pooled ``aiohttp.ClientSession`` (made by :func:`new_session`) and reads the Server-Sent
Events stream chunk by chunk (``iter_any`` into an incremental SSE decoder, never line by line, so
that the kept transcript is byte-exact evidence for REP-2 and the byte cap holds before an
over-long line is buffered). It never raises for anything the endpoint does: every outcome is a
:class:`CallOutcome` whose ``error_class`` is one of

    connect_error, connection_reset, timeout_total, timeout_idle, http_<status>, bad_content_type,
    bad_event, stream_error, truncated_stream, output_too_long, stream_too_large, repetition,
    invalid_usage, cancelled.

Limits: an absolute deadline (``asyncio.timeout`` around the whole call) and, separately, an idle
timeout between received chunks (also bounding the wait for response headers); a connect timeout;
caps on output characters (content + reasoning), usage output tokens and raw stream bytes; and the
repetition guard of :func:`srbench.targets.sse.repeats`. Cancellation is an ``asyncio.Event``: the
streaming task is cancelled and the response's connection is closed, never reused.

The client is aiohttp rather than httpx because a streamed call costs several times less CPU in it
(measured by ``benchmarks/dispatch.py``); the session's trace hooks tell whether request bytes left
this host (a call that never left cannot have been billed).

Tool calls (``delta.tool_calls``: per ``index`` an ``id``, ``type``, ``function.name`` once and
``function.arguments`` in pieces) are accumulated into ``CallOutcome.tool_calls`` in the OpenAI shape
``[{id, type: function, function: {name, arguments}}]``; their argument text counts as output for
the character cap, the repetition guard and the time to first token.

A call is ``completed`` only when ``[DONE]`` arrived AND the last finish_reason is one of stop,
length, tool_calls, function_call. Every response header is kept (evidence for router attribution).
The API key never appears in an error, a header kept or the transcript: every credential value from
the request headers is masked as ``***``, and so is every credential-bearing response header
(set-cookie, authorization, api-key). Which HTTP errors are systematic: :mod:`srbench.targets.failures`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from pydantic import JsonValue

from srbench.targets.failures import systematic_kind
from srbench.targets.idle import Idle
from srbench.targets.outcome import (
    ALLOWED_EXTRAS,
    TERMINAL_FINISH_REASONS,
    CallOutcome,
    StreamLimits,
    build_body,
    chat_url,
)
from srbench.targets.sse import (
    SSEDecoder,
    StreamTooLarge,
    credential_values,
    error_message,
    one_line,
)
from srbench.targets.stream_state import Stop, StreamCall

__all__ = ["StreamLimits", "CallOutcome", "build_body", "chat_url", "new_session", "stream_chat", "ALLOWED_EXTRAS",
           "TERMINAL_FINISH_REASONS"]

ERROR_BODY_BYTES = 4096
MAX_HEADER_BYTES = 256 * 1024
DONE_GRACE_S = 0.5          # after [DONE], how long to wait for the server to end the body
# response headers kept as evidence: all of them; the values of these are credentials and are masked
_MASKED_RESPONSE_HEADERS = frozenset({"set-cookie", "authorization", "proxy-authorization", "api-key", "x-api-key"})


def new_session(connections: int = 64) -> aiohttp.ClientSession:
    """A pooled session for :func:`stream_chat` (call it inside the event loop that will use it).

    Its trace hooks mark, per call, whether the request started and whether its bytes were sent.
    Proxy variables and ~/.netrc are not read (trust_env=False: reading them costs every request)."""
    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(_traced)
    trace.on_request_headers_sent.append(_bytes_sent)
    trace.on_request_chunk_sent.append(_bytes_sent)
    connector = aiohttp.TCPConnector(limit=connections, limit_per_host=0)
    # a router's x-vsr-model-usage header lists every child call: allow long header lines
    return aiohttp.ClientSession(connector=connector, trace_configs=[trace], trust_env=False,
                                 timeout=aiohttp.ClientTimeout(total=None),
                                 max_line_size=MAX_HEADER_BYTES, max_field_size=MAX_HEADER_BYTES)


async def _traced(session: aiohttp.ClientSession, ctx: Any, params: Any) -> None:
    if isinstance(call := getattr(ctx, "trace_request_ctx", None), StreamCall):
        call.traced = True


async def _bytes_sent(session: aiohttp.ClientSession, ctx: Any, params: Any) -> None:
    if isinstance(call := getattr(ctx, "trace_request_ctx", None), StreamCall):
        call.request_started = True
        if call.idle is not None:           # the wait for the response head starts now
            call.idle.wait(call.limits.idle_timeout_s)


async def _read_some(response: aiohttp.ClientResponse, limit: int, call: StreamCall, idle: float) -> bytes:
    buf = bytearray()
    try:
        async with asyncio.timeout(idle):
            async for chunk in response.content.iter_any():
                call.out.bytes_received += len(chunk)
                buf += chunk
                if len(buf) >= limit:
                    break
    except (TimeoutError, aiohttp.ClientError):
        pass
    return bytes(buf[:limit])


async def _exchange(client: aiohttp.ClientSession, call: StreamCall, url: str, headers: Mapping[str, str],
                    content: bytes, idle: Idle) -> None:
    lim = call.limits
    # the idle limit bounds the wait for the response head (from the request's bytes) and every later read:
    # one deadline per call (targets/idle.py), not aiohttp's sock_read timer per chunk
    timeout = aiohttp.ClientTimeout(total=None, connect=lim.connect_timeout_s, sock_connect=lim.connect_timeout_s)
    hdrs = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    host = urlsplit(url).hostname or url
    try:
        response = await client.request("POST", url, data=content, headers=hdrs, timeout=timeout,
                                        allow_redirects=False, trace_request_ctx=call)
    except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError, aiohttp.InvalidURL) as e:
        call.connect_failed = True
        raise Stop("connect_error", f"cannot connect to {host}: {type(e).__name__} {e}") from None
    except aiohttp.ClientError as e:
        raise Stop("connection_reset", f"{host} closed the connection: {type(e).__name__} {e}") from None
    except asyncio.CancelledError:
        if idle.expired():
            raise _timeout(call, idle, f"no response from {host} within {lim.idle_timeout_s}s") from None
        raise
    call.response = True
    try:
        await _read(response, call, idle)
    finally:
        # a body read to its end gives the connection back to the pool; anything else closes it
        if response.content.at_eof():
            response.release()
        else:
            response.close()


def _timeout(call: StreamCall, idle: Idle, idle_message: str) -> Stop:
    """The stop for a limit of `idle` that fired: the total time, or the idle one."""
    if idle.total:
        return Stop("timeout_total", f"no complete answer within {call.limits.total_timeout_s}s")
    return Stop("timeout_idle", idle_message)


async def _read(response: aiohttp.ClientResponse, call: StreamCall, idle: Idle) -> None:
    lim, out = call.limits, call.out
    out.http_status = response.status
    for k, v in response.headers.items():       # every header is evidence (a later router adapter reads it)
        k = k.lower()
        v = "***" if k in _MASKED_RESPONSE_HEADERS else v
        out.headers[k] = f"{out.headers[k]}, {v}" if k in out.headers else v
    if not 200 <= response.status < 300:
        body = await _read_some(response, ERROR_BODY_BYTES, call, lim.idle_timeout_s)
        call.raw += body
        status, text = response.status, error_message(body)
        kind = systematic_kind(status, text + "\n" + body.decode("utf-8", errors="replace"))
        raise Stop(f"http_{status}", f"HTTP {status}: {one_line(text, 200) or response.reason or ''}",
                    systematic=kind)
    ctype = response.headers.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "text/event-stream":
        call.raw += await _read_some(response, ERROR_BODY_BYTES, call, lim.idle_timeout_s)
        raise Stop("bad_content_type", f"expected text/event-stream, got {ctype or 'no content type'!r}")
    decoder = SSEDecoder(lim.max_stream_bytes or 0)
    chunks = response.content.iter_any()
    while True:
        idle.wait(min(lim.idle_timeout_s, DONE_GRACE_S) if out.done else lim.idle_timeout_s)
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            break
        except asyncio.CancelledError:
            if not idle.expired():
                raise
            if out.done:
                break
            raise _timeout(call, idle, f"no data for {lim.idle_timeout_s}s") from None
        except aiohttp.ClientPayloadError as e:
            if out.done:
                break
            cause = e.__cause__ or e
            if "encoding" in type(cause).__name__.lower() and "transfer" not in type(cause).__name__.lower():
                raise Stop("bad_event", f"the stream cannot be decoded: {cause}") from None
            raise Stop("connection_reset", f"the stream broke: {type(e).__name__} {e}") from None
        except aiohttp.ClientError as e:
            if out.done:
                break
            raise Stop("connection_reset", f"the stream broke: {type(e).__name__} {e}") from None
        call.receive(chunk)
        try:
            events = decoder.feed(chunk)
        except StreamTooLarge as e:
            raise Stop("stream_too_large", str(e)) from None
        for ev in events:
            call.event(ev)
    for ev in decoder.close():
        call.event(ev)
    call.end_of_stream()


async def _run(client: aiohttp.ClientSession, call: StreamCall, url: str, headers: Mapping[str, str],
               content: bytes) -> None:
    lim = call.limits
    call.out.started_at = time.time()
    call.t0 = time.perf_counter()
    # the idle deadline (the connect has its own limit on top) and the total one: one timer (targets/idle.py)
    idle = call.idle = Idle(lim.idle_timeout_s + (lim.connect_timeout_s or 0.0), lim.total_timeout_s)
    try:
        await _exchange(client, call, url, headers, content, idle)
    except asyncio.CancelledError:
        if not idle.expired():
            raise
        stop = _timeout(call, idle, f"no data for {lim.idle_timeout_s}s")
        if idle.total and call.out.done:
            call.settle()
        else:
            call.failure = stop
    except Stop as stop:
        call.failure = stop
    finally:
        idle.close()


class _CancelWatch:
    """The calls in flight under one cancel event, and one task that cancels them when it is set: no
    waiter task and `asyncio.wait` per call (issue 31, item 5). It ends when its last call leaves."""

    def __init__(self, event: asyncio.Event) -> None:
        self.event = event
        self.calls: dict[asyncio.Task[Any], StreamCall] = {}
        self.task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        await self.event.wait()
        if _WATCHES.get(self.event) is self:
            del _WATCHES[self.event]           # a call that joins from now on gets a watch of its own
        for task, call in self.calls.items():
            call.cancel_requested = True
            task.cancel()

    def leave(self, task: asyncio.Task[Any]) -> None:
        self.calls.pop(task, None)
        if not self.calls and not self.task.done():
            self.task.cancel()
            if _WATCHES.get(self.event) is self:
                del _WATCHES[self.event]


_WATCHES: dict[asyncio.Event, _CancelWatch] = {}


def _join(event: asyncio.Event, task: asyncio.Task[Any], call: StreamCall) -> _CancelWatch:
    watch = _WATCHES.get(event)
    if watch is None:
        watch = _WATCHES[event] = _CancelWatch(event)
    watch.calls[task] = call
    return watch


async def stream_chat(client: aiohttp.ClientSession, *, url: str, headers: Mapping[str, str],
                      body: Mapping[str, JsonValue], limits: StreamLimits, cancel: asyncio.Event | None = None,
                      on_dispatch: Callable[[], Awaitable[None]] | None = None) -> CallOutcome:
    """Stream one chat completion and return its outcome (never raises for endpoint behaviour).

    `on_dispatch` is awaited right before the request is handed to aiohttp (the journal commits
    `dispatching` there); if it raises, nothing is sent and the exception propagates. When
    `cancel` is already set, nothing is sent and the outcome is `cancelled` with sent=False. The call
    runs in the caller's task; setting `cancel` cancels it there (a cancellation of the caller's own
    task from elsewhere propagates as ever).
    """
    call = StreamCall(limits)
    secrets = credential_values(headers)
    if cancel is not None and cancel.is_set():
        call.cancelled, call.connect_failed = True, True
        return call.outcome(secrets)
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    if on_dispatch is not None:
        await on_dispatch()
    if cancel is None:
        await _run(client, call, url, headers, content)
        return call.outcome(secrets)
    task = asyncio.current_task()
    assert task is not None
    base = task.cancelling()
    watch = _join(cancel, task, call)
    arrived = False
    try:
        await _run(client, call, url, headers, content)
    except asyncio.CancelledError:
        if not call.cancel_requested or task.uncancel() > base:
            raise                       # (also) the caller's own task was cancelled
        arrived = True
    finally:
        watch.leave(task)
    if call.cancel_requested:
        if not arrived:                 # taken in by the call on its way: taken back from the task here
            task.uncancel()
        if call.out.done and call.failure is None:    # cancelled while draining after [DONE]
            call.settle()
        else:
            call.cancelled = True
    return call.outcome(secrets)
