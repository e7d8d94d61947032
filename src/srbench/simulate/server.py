"""A simulated OpenAI-compatible endpoint and a simulated MoM router on aiohttp (loopback, no network).

Routes
    POST /v1/chat/completions          one of the simulated models (``model`` in the body)
    GET  /v1/models                    the simulated models
    POST /router/v1/chat/completions   the simulated router: picks a model by its RouterRule and
                                       streams that model's answer with the ``x-vsr-*`` headers
    GET  /router/v1/models             the router's one model name
    POST /router/v1/preview            the router's decision and model, no inference (simulate/preview.py)
    GET  /config/hash, /config/router, /config/router/recipes   its config API (simulate/router_config.py)
    GET  /health

A streamed answer is: a role delta, the content in a few deltas, a chunk with finish_reason
"stop" (or "length" when the request's max_tokens cuts it), a usage chunk (``choices: []``), then
``data: [DONE]``. ``stream: false`` gets one JSON completion. Every request answered is appended
to ``SimServer.log``. Per-request faults for tests come from the ``fault`` hook (see :class:`Fault`).

Scripted replies (agents, user simulators)
    The ``script`` hook ``script(body) -> Scripted | None`` is asked for every request (after the
    fault hook, on both endpoints; None: the model answers as usual). A :class:`Scripted` reply
    streams its ``content`` and then its ``tool_calls``: per tool call one delta with ``index``,
    ``id``, ``type: function`` and ``function.name`` (arguments ""), then the arguments in a few
    ``function.arguments`` pieces; the finish reason is ``tool_calls`` when there are tool calls,
    else ``stop`` (``finish_reason`` overrides it). Usage follows the usual formulas over the content
    and the tool calls' names and arguments. The body carries the whole conversation (``messages``,
    ``tools``), so a script is a pure function of it: e.g. "no tool result yet → call the tool; a tool
    result → answer; a simulated user's prompt → reply ``###STOP###``". :func:`tool_call` builds one.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web

from srbench.schemas.wire import WireJSON
from srbench.simulate.behaviour import (
    MessageList,
    RouterRule,
    SimModel,
    messages_key,
    reply_for,
    usage_for,
)
from srbench.simulate.preview import handle_preview
from srbench.simulate.router_config import RouterConfigState, add_config_routes
from srbench.simulate.scripted import Scripted, ScriptHook, tool_call
from srbench.simulate.scripted import chunk as _chunk
from srbench.simulate.scripted import pieces as _pieces
from srbench.simulate.scripted import tool_chunks as _tool_chunks

__all__ = ["Fault", "Scripted", "SimServer", "start_simulator", "DEFAULT_MODELS", "tool_call"]

DEFAULT_MODELS = (
    SimModel("sim-strong", skill=0.9, cached_fraction=0.5),
    SimModel("sim-weak", skill=0.4),
)


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour for one request (all fields optional; combine as needed)."""

    status: int | None = None                 # answer this HTTP status with `body`
    body: str = ""
    content_type: str | None = None           # e.g. "application/json" on a 200 (not SSE)
    close_before_first_byte: bool = False     # drop the connection before any response byte
    close_after_chunks: int | None = None     # drop the connection after N SSE chunks
    headers_delay_s: float = 0.0              # a pause before the response headers (any answer)
    stall_s: float = 0.0                      # go silent this long ...
    stall_after_chunks: int = 1               # ... after this many SSE chunks
    chunk_delay_s: float | None = None        # a pause before every SSE chunk (a steady trickle)
    omit_done: bool = False                   # end the body without data: [DONE]
    omit_usage: bool = False                  # no usage chunk
    omit_finish: bool = False                 # no finish_reason chunk
    usage: Any = None                         # serve this usage object instead (bad usage)
    content: str | None = None                # serve this completion text instead of the answer
    chunk_chars: int | None = None            # content delta size (default: about 4 deltas)
    raw_sse: bytes | tuple[bytes, ...] | None = None   # send these SSE bytes (chunks) verbatim
    headers: Mapping[str, str] = field(default_factory=dict)
    echo_authorization: bool = False          # replace "{authorization}" in body/content/raw_sse/headers
    #                                           with the request's Authorization value (a leaky endpoint)
    label: str = "fault"

    def echoed(self, authorization: str) -> Fault:
        """This fault with the ``{authorization}`` placeholder filled in (itself when not echoing)."""
        if not self.echo_authorization:
            return self
        fill = lambda s: s.replace("{authorization}", authorization)  # noqa: E731
        raw: bytes | tuple[bytes, ...] | None = self.raw_sse
        if isinstance(raw, bytes):
            raw = raw.replace(b"{authorization}", authorization.encode())
        elif raw is not None:
            raw = tuple(r.replace(b"{authorization}", authorization.encode()) for r in raw)
        return replace(self, body=fill(self.body), content=None if self.content is None else fill(self.content),
                       raw_sse=raw, headers={k: fill(v) for k, v in self.headers.items()})


FaultHook = Callable[[WireJSON], "Fault | None"]


def _error(status: int, message: str, code: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "code": code}},
                             status=status)


class SimServer:
    """The simulator. Build with :func:`start_simulator`; `fault` may be replaced at any time."""

    def __init__(self, models: tuple[SimModel, ...] | list[SimModel] = DEFAULT_MODELS, *,
                 answer_key: Mapping[str, Any] | None = None, router: RouterRule | None = None,
                 api_key: str | None = None, fault: FaultHook | None = None,
                 script: ScriptHook | None = None) -> None:
        self.models = {m.name: m for m in models}
        if not self.models:
            raise ValueError("the simulator needs at least one model")
        ranked = sorted(self.models.values(), key=lambda m: (-m.skill, m.name))
        self.router = router or RouterRule(strong=ranked[0].name, weak=ranked[-1].name)
        for name in (self.router.strong, self.router.weak):
            if name not in self.models:
                raise ValueError(f"router model {name!r} is not a simulated model")
        self.router_config = RouterConfigState(self.router)     # the router's own config API (UI-7)
        self.answer_key = dict(answer_key or {})
        self.api_key = api_key
        self.fault = fault
        self.script = script
        self.log: list[WireJSON] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    @property
    def v1_url(self) -> str:
        return self.url + "/v1"

    @property
    def router_url(self) -> str:
        return self.url + "/router/v1"

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._single)
        app.router.add_post("/router/v1/chat/completions", self._routed)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/router/v1/models", self._router_models)
        app.router.add_get("/health", self._health)
        app.router.add_post("/router/v1/preview", self._preview)
        add_config_routes(app, self.router_config)
        return app

    async def _preview(self, request: web.Request) -> web.Response:
        return await handle_preview(self.router, request)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> SimServer:
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True,
                                     shutdown_timeout=0.2)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        bound = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- routes -------------------------------------------------------------------------------
    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "models": sorted(self.models)})

    async def _models(self, request: web.Request) -> web.Response:
        if not self._authorised(request):            # as real endpoints: listing models needs the key too
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        return web.json_response({"object": "list", "data": [
            {"id": n, "object": "model", "owned_by": "sr-bench-simulator"} for n in sorted(self.models)]})

    async def _router_models(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        return web.json_response({"object": "list", "data": [
            {"id": self.router.name, "object": "model", "owned_by": "sr-bench-simulator"}]})

    async def _single(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, routed=False)

    async def _routed(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, routed=True)

    def _authorised(self, request: web.Request) -> bool:
        return self.api_key is None or request.headers.get("Authorization") == f"Bearer {self.api_key}"

    async def _serve(self, request: web.Request, *, routed: bool) -> web.StreamResponse:
        entry: WireJSON = {"time": time.time(), "path": request.path,
                                 "endpoint": "router" if routed else "single", "requested_model": None,
                                 "model": None, "decision": None, "messages_digest": None, "status": None,
                                 "fault": None, "usage": None, "finish_reason": None, "correct": None,
                                 "completed": False}
        self.log.append(entry)         # in arrival order; filled in while the request is served
        return await self._answer(request, routed, entry)

    async def _answer(self, request: web.Request, routed: bool, entry: WireJSON) -> web.StreamResponse:
        if not self._authorised(request):
            entry["status"] = 401
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError
            messages: MessageList = body["messages"]
        except (ValueError, KeyError, TypeError):
            entry["status"] = 400
            return _error(400, "The body must be a JSON object with a messages list.", "invalid_body")
        entry["requested_model"] = body.get("model")
        entry["messages_digest"] = messages_key(messages)
        fault = self.fault(body) if self.fault is not None else None
        if fault is not None:
            fault = fault.echoed(request.headers.get("Authorization", ""))
        entry["fault"] = fault.label if fault is not None else None
        headers: dict[str, str] = {}
        if routed:
            name, decision = self.router.route(messages)
            entry["decision"] = decision
            headers = {"x-vsr-selected-model": name, "x-vsr-selected-decision": decision,
                       "x-vsr-inference-call-count": "1"}
            if self.router.reports_config_hash:
                headers["x-vsr-config-hash"] = self.router.config_hash
        else:
            requested = body.get("model")
            if not isinstance(requested, str) or requested not in self.models:
                entry["status"] = 404
                return _error(404, f"The model `{requested}` does not exist.", "model_not_found")
            name = requested
        entry["model"] = name
        model = self.models[name]
        if fault is not None:
            headers.update(fault.headers)
            if fault.headers_delay_s:
                await asyncio.sleep(fault.headers_delay_s)
            if fault.close_before_first_byte:
                self._drop(request)          # aiohttp then fails to write this response, silently
                return web.Response()
            if fault.status is not None:
                entry["status"] = fault.status
                return web.Response(status=fault.status, text=fault.body, headers=headers,
                                    content_type=fault.content_type or "application/json")
            if fault.content_type is not None:
                entry["status"] = 200
                return web.Response(status=200, text=fault.body or "{}", headers=headers,
                                    content_type=fault.content_type)
        scripted = self.script(body) if self.script is not None else None
        if scripted is not None:
            entry["scripted"] = True
            return await self._scripted(request, body, entry, model, scripted, headers, fault or Fault())
        reply = reply_for(model, messages, self.answer_key)
        text = fault.content if fault is not None and fault.content is not None else reply.text
        entry["correct"] = reply.correct if fault is None or fault.content is None else None
        finish = "stop"
        max_tokens = body.get("max_tokens")
        if isinstance(max_tokens, int) and max_tokens > 0 and len(text) > 4 * max_tokens:
            text, finish = text[: 4 * max_tokens], "length"
        usage: Any = usage_for(model, messages, text)
        if fault is not None and fault.usage is not None:
            usage = fault.usage
        if not body.get("stream"):
            return self._plain(entry, name, text, finish, usage, headers)
        return await self._stream(request, entry, model, text, finish, usage, headers, fault or Fault())

    async def _scripted(self, request: web.Request, body: WireJSON, entry: WireJSON, model: SimModel,
                        scripted: Scripted, headers: dict[str, str], fault: Fault) -> web.StreamResponse:
        cid = "chatcmpl-" + entry["messages_digest"][3:27]
        tools, tool_text = _tool_chunks(cid, model.name, scripted.tool_calls)
        finish = scripted.finish_reason or ("tool_calls" if scripted.tool_calls else "stop")
        usage = scripted.usage if scripted.usage is not None else usage_for(model, body["messages"],
                                                                           scripted.content + tool_text)
        entry["tool_calls"] = [str(tc["name"]) for tc in scripted.tool_calls]
        if not body.get("stream"):
            return self._plain(entry, model.name, scripted.content, finish, usage, headers)
        return await self._stream(request, entry, model, scripted.content, finish, usage, headers, fault,
                                  extra=tools)

    def _plain(self, entry: WireJSON, name: str, text: str, finish: str, usage: Any,
               headers: dict[str, str]) -> web.Response:
        entry.update(status=200, usage=usage, finish_reason=finish, completed=True)
        return web.json_response({"id": "chatcmpl-sim", "object": "chat.completion", "created": 0,
                                  "model": name, "usage": usage, "choices": [{
                                      "index": 0, "finish_reason": finish,
                                      "message": {"role": "assistant", "content": text}}]}, headers=headers)

    @staticmethod
    def _drop(request: web.Request) -> None:
        if request.transport is not None:
            request.transport.close()

    async def _stream(self, request: web.Request, entry: WireJSON, model: SimModel, text: str,
                      finish: str, usage: Any, headers: dict[str, str], fault: Fault,
                      extra: list[bytes] | None = None) -> web.StreamResponse:
        cid = "chatcmpl-" + entry["messages_digest"][3:27]
        if fault.raw_sse is not None:
            chunks = [fault.raw_sse] if isinstance(fault.raw_sse, bytes) else list(fault.raw_sse)
        else:
            pieces = _pieces(text, fault.chunk_chars)
            chunks = [_chunk(cid, model.name, {"role": "assistant", "content": ""})]
            chunks += [_chunk(cid, model.name, {"content": p}) for p in pieces]
            chunks += extra or []
            if not fault.omit_finish:
                chunks.append(_chunk(cid, model.name, {}, finish))
                entry["finish_reason"] = finish
            if not fault.omit_usage:
                chunks.append(_chunk(cid, model.name, None, usage=usage, with_usage=True))
                entry["usage"] = usage
            if not fault.omit_done:
                chunks.append(b"data: [DONE]\n\n")
        # latency: half before the first content delta, the other half spread over the rest
        rest = max(0, len(chunks) - 2)
        delays = [0.0, model.latency_s / 2] + [model.latency_s / 2 / max(1, rest)] * rest
        if fault.chunk_delay_s is not None:
            delays = [fault.chunk_delay_s] * len(chunks)
        resp = web.StreamResponse(status=200, headers={"Cache-Control": "no-cache", **headers})
        resp.content_type = "text/event-stream"
        await resp.prepare(request)
        entry["status"] = 200
        try:
            for i, data in enumerate(chunks):
                if fault.close_after_chunks is not None and i == fault.close_after_chunks:
                    self._drop(request)
                    return resp
                if fault.stall_s and i == fault.stall_after_chunks:
                    await asyncio.sleep(fault.stall_s)
                if i < len(delays) and delays[i] > 0:
                    await asyncio.sleep(delays[i])
                if i == len(chunks) - 1:     # set before the client can see the end of the stream
                    entry["completed"] = not (fault.omit_done or fault.omit_finish or fault.raw_sse is not None)
                await resp.write(data)
            await resp.write_eof()
        except ConnectionResetError:     # the client went away (its timeout, a cancel, a guard): not an error
            pass
        return resp


async def start_simulator(host: str = "127.0.0.1", port: int = 0, *,
                          models: tuple[SimModel, ...] | list[SimModel] = DEFAULT_MODELS,
                          answer_key: Mapping[str, Any] | None = None, router: RouterRule | None = None,
                          api_key: str | None = None, fault: FaultHook | None = None,
                          script: ScriptHook | None = None) -> SimServer:
    """Start a simulator on the running loop; `server.url` is the bound base URL (no /v1)."""
    server = SimServer(models, answer_key=answer_key, router=router, api_key=api_key, fault=fault, script=script)
    return await server.start(host, port)
