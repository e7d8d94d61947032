"""Tool calls through the streaming transport: deltas accumulated into the OpenAI shape, tools passed
through, the scripted replies of the simulator (content + tool calls) and a raw multi-delta stream."""

from __future__ import annotations

import asyncio
import json

import pytest

from srbench.errors import InvalidInput
from srbench.simulate import SimModel, SimulatorThread
from srbench.simulate.scripted import Scripted, tool_call
from srbench.simulate.server import Fault
from srbench.targets.transport import StreamLimits, build_body, chat_url, new_session, stream_chat

FAST = StreamLimits(total_timeout_s=3, idle_timeout_s=1)
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "find a fact",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]


@pytest.fixture(scope="module")
def sim():
    with SimulatorThread(models=[SimModel("agent", skill=1.0, latency_s=0.0)]) as s:
        yield s


def _call(sim, body):
    async def go():
        async with new_session() as client:
            return await stream_chat(client, url=chat_url(sim.v1_url), headers={}, body=body, limits=FAST)
    return asyncio.run(go())


def test_scripted_tool_calls_are_accumulated(sim) -> None:
    seen = []

    def script(body):
        seen.append(body)
        return Scripted(content="Let me look.", tool_calls=(tool_call("lookup", {"q": "capital of France"}, "c1"),
                                                            tool_call("lookup", '{"q":"x"}')))
    sim.set_script(script)
    try:
        body = build_body("agent", [{"role": "user", "content": "hi"}], {"temperature": 0}, {},
                          {"tools": TOOLS, "tool_choice": "auto"})
        out = _call(sim, body)
    finally:
        sim.set_script(None)
    assert out.status == "completed", out.error
    assert out.finish_reason == "tool_calls" and out.text == "Let me look."
    assert out.tool_calls[0] == {"id": "c1", "type": "function",
                                 "function": {"name": "lookup", "arguments": '{"q":"capital of France"}'}}
    assert out.tool_calls[1]["function"] == {"name": "lookup", "arguments": '{"q":"x"}'}
    assert out.tool_calls[1]["id"] and out.tool_calls[1]["id"] != "c1"
    assert seen[0]["tools"] == TOOLS and seen[0]["tool_choice"] == "auto"     # passed through as given
    # the arguments were streamed in several pieces, and the usage counts them as output
    assert out.sse_raw.count(b'"arguments"') > 3 and out.usage.output > len("Let me look.") // 4


def test_a_plain_reply_has_no_tool_calls(sim) -> None:
    out = _call(sim, build_body("agent", [{"role": "user", "content": "hi"}], {}, {}))
    assert out.status == "completed" and out.tool_calls == []


def test_raw_tool_call_deltas_without_index_and_split_names(sim) -> None:
    def ev(obj):
        return b"data: " + json.dumps(obj).encode() + b"\n\n"
    base = {"id": "x", "object": "chat.completion.chunk", "model": "agent"}
    raw = (ev({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
              {"index": 0, "id": "t0", "type": "function", "function": {"name": "look", "arguments": ""}}]}}]})
           + ev({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
               {"index": 0, "function": {"name": "up", "arguments": '{"q":'}}]}}]})
           + ev({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
               {"index": 0, "function": {"arguments": '"a"}'}}]}}]})
           + ev({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
           + ev({**base, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}})
           + b"data: [DONE]\n\n")
    sim.set_fault(lambda body: Fault(raw_sse=raw))
    try:
        out = _call(sim, build_body("agent", [{"role": "user", "content": "hi"}], {}, {}))
    finally:
        sim.set_fault(None)
    assert out.status == "completed", out.error
    assert out.tool_calls == [{"id": "t0", "type": "function", "function": {"name": "lookup", "arguments": '{"q":"a"}'}}]
    assert out.ttft_s is not None              # a tool call is generated output


def test_malformed_tool_calls_are_a_bad_event(sim) -> None:
    raw = (b'data: {"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}\n\n'
           b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    sim.set_fault(lambda body: Fault(raw_sse=raw))
    try:
        out = _call(sim, build_body("agent", [{"role": "user", "content": "hi"}], {}, {}))
    finally:
        sim.set_fault(None)
    assert out.status == "failed" and out.error_class == "bad_event"


def test_only_allowed_extras() -> None:
    with pytest.raises(InvalidInput, match="not allowed"):
        build_body("m", [], {}, {}, {"stream": False})
