"""The state of one streamed chat completion while it streams (targets/transport.py reads the bytes).

`StreamCall` takes the received chunks and the decoded Server-Sent Events, enforces the stream caps
(output characters, usage output tokens, raw bytes, the repetition guard) by raising `Stop`, and
settles into the :class:`CallOutcome` with every credential value masked.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from srbench.schemas.call import Usage
from srbench.targets.idle import Idle
from srbench.targets.metering import UsageError, parse_usage, usage_shape
from srbench.targets.outcome import TERMINAL_FINISH_REASONS, CallOutcome, StreamLimits
from srbench.targets.sse import SSEEvent, error_message, mask, one_line, repeats, visible_text


class Stop(Exception):
    def __init__(self, error_class: str, message: str, *, systematic: str | None = None) -> None:
        super().__init__(message)
        self.error_class, self.systematic = error_class, systematic     # the systematic kind, if any



@dataclass(slots=True)
class ToolCallSlot:
    """One tool call of the reply as its deltas arrive (by the delta's index)."""

    id: str | None = None                   # the first non-empty id a delta gave
    type: str = "function"                  # the call's type ("function" unless a delta says otherwise)
    name: str = ""                          # the function name, its pieces joined
    arguments: list[str] = field(default_factory=list)     # the arguments' pieces, in order


_UNSET = object()
_RAW_DECODE = json.JSONDecoder().raw_decode


class StreamCall:
    """State of one call while it streams."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self.out = CallOutcome()
        self.raw = bytearray()
        self.content: list[str] = []
        self.tools: dict[int, ToolCallSlot] = {}     # tool-call index → its accumulated parts
        self.chars = 0
        self.tail = ""
        self.t0: float | None = None
        self.t_end: float | None = None
        self.response = False
        self.connect_failed = False
        self.traced = False
        self.request_started = False
        self.idle: Idle | None = None
        self.failure: Stop | None = None
        self.cancelled = False
        self.cancel_requested = False      # the run's cancel event asked this call's task to stop
        self._parsed: tuple[Any, Usage | None] = (_UNSET, None)    # (usage object, its parse_usage)

    def receive(self, chunk: bytes) -> None:
        cap = self.limits.max_stream_bytes or 0
        self.out.bytes_received += len(chunk)
        room = cap - len(self.raw)
        self.raw += chunk[: max(room, 0)]
        if self.out.bytes_received > cap:
            raise Stop("stream_too_large", f"the stream exceeded {cap} bytes")

    def event(self, ev: SSEEvent) -> None:
        if self.out.done:
            return
        data = ev.data.strip()
        if data == "[DONE]":
            self.out.done, self.t_end = True, time.perf_counter()
            return
        try:
            obj, end = _RAW_DECODE(data)    # json.loads without its two wrappers (the data is stripped)
        except ValueError:
            end = -1
        if end != len(data):
            raise Stop("bad_event", f"an SSE event is not JSON: {data[:80]!r}")
        if not isinstance(obj, dict):
            raise Stop("bad_event", "an SSE event is not a JSON object")
        if ev.event == "error" or (obj.get("error") is not None and not obj.get("choices")):
            raise Stop("stream_error", "the stream reported an error: " + error_message(data.encode()))
        model = obj.get("model")
        if isinstance(model, str) and model:
            self.out.response_model = model
        if obj.get("usage") is not None:
            self._usage(obj["usage"])
        choices = obj.get("choices") or []
        if not isinstance(choices, list):
            raise Stop("bad_event", "an SSE event has non-list choices")
        new = []
        for ch in choices:
            delta = ch.get("delta") if isinstance(ch, dict) else None
            if not isinstance(delta, dict | None):
                raise Stop("bad_event", "an SSE event has a malformed choice")
            delta = delta or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.content.append(content)
                new.append(content)
            # servers in transition send both names with the same text: count it once
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self.out.reasoning_chars += len(reasoning)
                new.append(reasoning)
            if delta.get("tool_calls") is not None:
                new += self._tool_deltas(delta["tool_calls"])
            if isinstance(ch, dict) and ch.get("finish_reason") is not None:
                self.out.finish_reason = str(ch["finish_reason"])
        if new:
            self._generated("".join(new))

    def _tool_deltas(self, deltas: Any) -> list[str]:
        """Accumulate one event's tool-call deltas; returns the generated text (names, arguments)."""
        if not isinstance(deltas, list):
            raise Stop("bad_event", "an SSE event has non-list tool_calls")
        text = []
        for d in deltas:
            if not isinstance(d, dict):
                raise Stop("bad_event", "an SSE event has a malformed tool call")
            index = d.get("index", len(self.tools))
            fn = d.get("function") or {}
            if not isinstance(index, int) or isinstance(index, bool) or not isinstance(fn, dict):
                raise Stop("bad_event", "an SSE event has a malformed tool call")
            slot = self.tools.get(index)
            if slot is None:
                slot = self.tools[index] = ToolCallSlot()
            if isinstance(d.get("id"), str) and d["id"]:
                slot.id = d["id"]
            if isinstance(d.get("type"), str) and d["type"]:
                slot.type = d["type"]
            if isinstance(fn.get("name"), str) and fn["name"]:
                slot.name += fn["name"]
                text.append(fn["name"])
            if isinstance(fn.get("arguments"), str) and fn["arguments"]:
                slot.arguments.append(fn["arguments"])
                text.append(fn["arguments"])
        return text

    def _usage(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            raise Stop("invalid_usage", f"usage is a {type(raw).__name__}, not an object")
        self.out.usage_raw = raw
        try:
            usage = self._parse(raw)
        except UsageError:
            return                      # judged on the last usage object, at the end
        self._token_cap(usage)

    def _parse(self, raw: Any) -> Usage | None:
        """`parse_usage`, once per usage object (issue 31, item 5: an event's usage is parsed on arrival and
        read again at the end, ~10 µs a parse); a UsageError is raised again each time."""
        if raw is not self._parsed[0]:
            self._parsed = (raw, parse_usage(raw))
        return self._parsed[1]

    def _token_cap(self, usage: Usage | None) -> None:
        cap = self.limits.max_output_tokens
        if usage is not None and cap is not None and usage.output > cap:
            raise Stop("output_too_long", f"usage reports {usage.output} output tokens, over {cap}")

    def _generated(self, text: str) -> None:
        lim = self.limits
        if self.out.ttft_s is None and self.t0 is not None:
            self.out.ttft_s = time.perf_counter() - self.t0
        self.chars += len(text)
        if self.chars > lim.max_output_chars:
            raise Stop("output_too_long", f"output exceeded {lim.max_output_chars} characters")
        span = lim.repetition_window * lim.repetition_limit
        self.tail = (self.tail + text)[-span:]
        if repeats(self.tail, lim.repetition_window, lim.repetition_limit):
            raise Stop("repetition", f"the last {span} characters repeat one {lim.repetition_window}-"
                        f"character block {lim.repetition_limit} times")

    def end_of_stream(self) -> None:
        if not self.out.done:
            raise Stop("truncated_stream", "the stream ended without [DONE]")
        if self.out.finish_reason not in TERMINAL_FINISH_REASONS:
            raise Stop("truncated_stream", f"the stream ended with finish_reason {self.out.finish_reason!r}")
        try:
            self.out.usage = self._parse(self.out.usage_raw)
        except UsageError as e:
            raise Stop("invalid_usage", e.message) from None
        self._token_cap(self.out.usage)

    def settle(self) -> None:
        """[DONE] arrived but draining the body was cut short: judge the stream as ended there."""
        try:
            self.end_of_stream()
        except Stop as stop:
            self.failure = stop

    def outcome(self, secrets: list[str]) -> CallOutcome:
        out = self.out
        if self.t0 is not None:
            out.latency_s = (self.t_end or time.perf_counter()) - self.t0
        if self.content or (self.failure is None and not self.cancelled):
            out.text, out.think_unclosed = visible_text("".join(self.content))
        out.tool_calls = [{"id": t.id or f"call_{i}", "type": t.type,
                           "function": {"name": t.name, "arguments": "".join(t.arguments)}}
                          for i, t in sorted(self.tools.items())]
        if out.usage is None and out.usage_raw is not None:
            try:
                out.usage = self._parse(out.usage_raw)   # evidence of what a failed call cost
            except UsageError:
                out.usage = None
        try:
            out.usage_shape = usage_shape(out.usage_raw)
        except UsageError:
            out.usage_shape = "invalid"
        out.sent = not self.connect_failed and (self.response or not self.traced or self.request_started)
        raw = bytes(self.raw)
        for secret in secrets:
            raw = raw.replace(secret.encode(), b"***")
        out.sse_raw = raw
        if self.cancelled:
            out.status, out.error_class, out.error = "cancelled", "cancelled", "the call was cancelled"
        elif self.failure is not None:
            out.status, out.error_class = "failed", self.failure.error_class
            out.systematic = self.failure.systematic is not None
            out.systematic_kind = self.failure.systematic
            out.error = one_line(str(self.failure))
        else:
            out.status = "completed"
        out.error = mask(out.error, secrets) if out.error else out.error
        out.headers = {k: mask(v, secrets) for k, v in out.headers.items()}
        # an endpoint may echo the key anywhere it writes text: mask every string the outcome keeps
        if secrets:
            out.text = mask(out.text, secrets) if out.text else out.text
            out.response_model = mask(out.response_model, secrets) if out.response_model else out.response_model
            out.finish_reason = mask(out.finish_reason, secrets) if out.finish_reason else out.finish_reason
            out.usage_raw = mask_json(out.usage_raw, secrets)
            out.tool_calls = mask_json(out.tool_calls, secrets)
        return out


def mask_json(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, dict):
        return {mask(str(k), secrets): mask_json(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v, secrets) for v in value]
    return value
