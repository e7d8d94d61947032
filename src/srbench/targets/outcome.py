"""The data of one streamed call: its limits, its request body and its outcome (no I/O here).

`build_body` and `chat_url` build the request; `StreamLimits` bounds it (RUN-7); `CallOutcome` is
what :func:`srbench.targets.transport.stream_chat` returns. The transport module re-exports all of them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import JsonValue

from srbench.errors import InvalidInput
from srbench.schemas.call import Usage

__all__ = ["StreamLimits", "CallOutcome", "build_body", "body_max_tokens", "chat_url", "ALLOWED_EXTRAS", "TERMINAL_FINISH_REASONS"]

TERMINAL_FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "function_call"})
ALLOWED_EXTRAS = frozenset({"tools", "tool_choice", "parallel_tool_calls", "response_format", "functions",
                            "function_call", "metadata"})


@dataclass(frozen=True)
class StreamLimits:
    """Per-call limits. `connect_timeout_s` defaults to min(10, total); `max_stream_bytes` to
    max(30·max_output_chars, 1 MiB). `max_output_tokens` None disables the usage-token cap."""

    total_timeout_s: float = 180.0
    idle_timeout_s: float = 30.0
    connect_timeout_s: float | None = None
    max_output_chars: int = 131072
    max_output_tokens: int | None = 4096
    max_stream_bytes: int | None = None
    repetition_window: int = 128
    repetition_limit: int = 5

    def __post_init__(self) -> None:
        for name in ("total_timeout_s", "idle_timeout_s", "max_output_chars"):
            if not getattr(self, name) > 0:
                raise InvalidInput(f"stream limit {name} must be > 0")
        if self.connect_timeout_s is None:
            object.__setattr__(self, "connect_timeout_s", min(10.0, self.total_timeout_s))
        if self.max_stream_bytes is None:
            object.__setattr__(self, "max_stream_bytes", max(30 * self.max_output_chars, 1 << 20))


@dataclass
class CallOutcome:
    """Everything one call left behind. `sent` is False only when no request byte can have left."""

    status: Literal["completed", "failed", "cancelled"] = "failed"
    error_class: str | None = None
    error: str | None = None
    systematic: bool = False
    systematic_kind: str | None = None   # auth, quota, unknown_model, not_found, no_deployment, redirect
    http_status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    sse_raw: bytes = b""                 # body as received (capped); for HTTP errors ≤ 4 KiB of it
    text: str | None = None              # visible final text, <think> stripped; None if no content
    # tool calls accumulated from the stream's deltas, OpenAI shape, in index order:
    # [{"id": str, "type": "function", "function": {"name": str, "arguments": str}}]
    tool_calls: list[dict[str, JsonValue]] = field(default_factory=list)
    reasoning_chars: int = 0
    finish_reason: str | None = None
    response_model: str | None = None
    usage_raw: dict[str, JsonValue] | None = None    # the provider's usage object as received
    usage: Usage | None = None
    started_at: float = 0.0              # time.time() when the request was handed to httpx
    ttft_s: float | None = None
    latency_s: float | None = None       # perf_counter from send to [DONE] (or to the failure)
    bytes_received: int = 0
    sent: bool = True
    think_unclosed: bool = False
    done: bool = False                   # [DONE] arrived
    usage_shape: str = "absent"


def chat_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/chat/completions"


def build_body(model: str, messages: Sequence[Mapping[str, JsonValue]], sampling: Mapping[str, JsonValue],
               request_params: Mapping[str, JsonValue], extras: Mapping[str, JsonValue] | None = None
               ) -> dict[str, JsonValue]:
    """Request body = sampling ⊕ request_params ⊕ extras ⊕ {model, messages, stream, stream_options}.

    Later parts win: the target's pinned `request_params` override the run's sampling (TG-4); the
    streaming fields are fixed. `extras` may only hold ALLOWED_EXTRAS. Pure: inputs are deep-copied.
    """
    unknown = sorted(set(extras or {}) - ALLOWED_EXTRAS)
    if unknown:
        raise InvalidInput(f"request extras not allowed: {', '.join(unknown)}")
    body: dict[str, JsonValue] = {**sampling, **request_params, **(extras or {})}
    body.update(model=model, messages=[dict(m) for m in messages], stream=True,
                stream_options={"include_usage": True})
    copied: dict[str, JsonValue] = _copy_json(body)
    return copied


def body_max_tokens(body: Mapping[str, JsonValue], default: int) -> int:
    """The output cap a request body asks for (its max_tokens, a validated positive integer), else `default`."""
    asked = body.get("max_tokens")
    return int(asked) if isinstance(asked, int | float) and asked else default


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data, ~5x cheaper than `copy.deepcopy` (no memo: JSON has no
    cycles); anything else that is not an immutable scalar goes through `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)
