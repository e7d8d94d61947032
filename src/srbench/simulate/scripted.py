"""Scripted replies of the simulated endpoint (agents with tool calls, user simulators) and the SSE
chunks it streams. See :mod:`srbench.simulate.server` for how the ``script`` hook is asked."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from srbench.schemas.wire import WireJSON

__all__ = ["Scripted", "ScriptHook", "first_of", "tool_call", "chunk", "pieces", "tool_chunks"]


def chunk(cid: str, model: str, delta: WireJSON | None, finish: str | None = None,
          usage: Any = None, with_usage: bool = False) -> bytes:
    obj: WireJSON = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [] if delta is None else
                           [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if with_usage:
        obj["usage"] = usage
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def pieces(text: str, size: int | None) -> list[str]:
    if not text:
        return []
    size = size or max(1, math.ceil(len(text) / 4))
    return [text[i:i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class Scripted:
    """A scripted reply (see the module docstring): text, then tool calls."""

    content: str = ""
    tool_calls: tuple[Mapping[str, Any], ...] = ()   # each {"name", "arguments": str | JSON value, "id"?}
    finish_reason: str | None = None                 # default: tool_calls when there are any, else stop
    usage: Any = None                                # serve this usage object instead of the formula's


def tool_call(name: str, arguments: Any, call_id: str | None = None) -> WireJSON:
    """One tool call of a :class:`Scripted` reply (`arguments` a JSON value or its text)."""
    out: WireJSON = {"name": name, "arguments": arguments}
    if call_id is not None:
        out["id"] = call_id
    return out


ScriptHook = Callable[[WireJSON], "Scripted | None"]


def first_of(*hooks: ScriptHook) -> ScriptHook:
    """One hook asking `hooks` in order: the first reply that is not None (else None)."""
    def hook(body: WireJSON) -> Scripted | None:
        for h in hooks:
            got = h(body)
            if got is not None:
                return got
        return None
    return hook


def tool_chunks(cid: str, model: str, calls: tuple[Mapping[str, Any], ...]) -> tuple[list[bytes], str]:
    """The SSE chunks of scripted tool calls, and their generated text (names + arguments)."""
    chunks, text = [], ""
    for i, tc in enumerate(calls):
        args = tc.get("arguments", "")
        args = args if isinstance(args, str) else json.dumps(args, separators=(",", ":"))
        call_id = str(tc.get("id") or f"call_{cid[-8:]}_{i}")
        chunks.append(chunk(cid, model, {"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                                          "function": {"name": tc["name"], "arguments": ""}}]}))
        chunks += [chunk(cid, model, {"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                   for p in pieces(args, None)]
        text += str(tc["name"]) + args
    return chunks, text
