"""stream_chat against the simulator on loopback: completions, failures, limits and cancellation."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from srbench.errors import InvalidInput
from srbench.schemas.call import Usage
from srbench.simulate import Fault, SimModel, SimulatorThread, messages_key
from srbench.targets.transport import (
    CallOutcome,
    StreamLimits,
    build_body,
    chat_url,
    new_session,
    stream_chat,
)

PROMPT = "x" * 40                                  # 40 chars → 10 prompt tokens
MESSAGES = [{"role": "user", "content": PROMPT}]
FAST = StreamLimits(total_timeout_s=3, idle_timeout_s=0.3)
KEY = "sk-test-SECRET-123456"


@pytest.fixture(scope="module")
def sim():
    models = [SimModel("good", skill=1.0, latency_s=0.02, cached_fraction=0.5),
              SimModel("thinker", skill=1.0, think=True), SimModel("bad", skill=0.0)]
    with SimulatorThread(models=models, answer_key={PROMPT: "B"}) as s:
        yield s


@pytest.fixture(autouse=True)
def _reset(sim):
    sim.set_fault(None)
    sim.server.api_key = None
    yield
    sim.set_fault(None)
    sim.server.api_key = None


def call(sim, model="good", *, limits=FAST, fault=None, headers=None, cancel_after=None, router=False,
         pre_cancel=False, on_dispatch=None) -> CallOutcome:
    if fault is not None:
        sim.set_fault(lambda body: fault)
    base = sim.router_url if router else sim.v1_url

    async def go() -> CallOutcome:
        cancel = asyncio.Event()
        if pre_cancel:
            cancel.set()
        if cancel_after is not None:
            asyncio.get_running_loop().call_later(cancel_after, cancel.set)
        async with new_session() as client:
            return await stream_chat(client, url=chat_url(base), headers=headers or {},
                                     body=build_body(model, MESSAGES, {"temperature": 0}, {}),
                                     limits=limits, cancel=cancel, on_dispatch=on_dispatch)
    return asyncio.run(go())


def test_completed_call_with_usage_cache_and_ttft(sim):
    n = len(sim.log)
    out = call(sim)
    assert (out.status, out.error_class, out.finish_reason) == ("completed", None, "stop")
    assert out.text == "Answer: B" and out.response_model == "good"
    # prompt 10 tokens, cached floor(0.5·10) = 5 → input 5; "Answer: B" is 9 chars → 3 tokens
    assert out.usage == Usage(input=5, cached_input=5, cache_write=0, output=3)
    assert out.usage_raw["prompt_tokens_details"] == {"cached_tokens": 5}
    assert out.usage_shape == "openai"
    assert out.ttft_s is not None and 0.005 < out.ttft_s <= out.latency_s < 1.0
    assert out.headers["content-type"].startswith("text/event-stream")
    assert out.sent and out.done and out.http_status == 200 and not out.systematic
    assert out.sse_raw.rstrip().endswith(b"data: [DONE]")
    assert out.bytes_received == len(out.sse_raw)
    assert abs(out.started_at - time.time()) < 5
    entry = sim.log[n]
    assert entry["model"] == "good" and entry["status"] == 200 and entry["completed"]
    assert entry["usage"] == out.usage_raw and entry["messages_digest"] == messages_key(MESSAGES)


def test_think_block_is_stripped(sim):
    out = call(sim, "thinker")
    assert out.status == "completed" and out.text == "Answer: B" and not out.think_unclosed


def test_unclosed_think_gives_empty_text(sim):
    out = call(sim, fault=Fault(content="<think>I keep thinking and never answer"))
    assert out.status == "completed" and out.text == "" and out.think_unclosed


def _sse(*events: dict | str) -> bytes:
    return b"".join(b"data: " + (e if isinstance(e, str) else json.dumps(e)).encode() + b"\n\n"
                    for e in events)


def test_reasoning_deltas_count_for_ttft_not_text(sim):
    raw = _sse({"model": "r", "choices": [{"delta": {"reasoning_content": "abc", "reasoning": "abc"}}]},
               {"model": "r", "choices": [{"delta": {"reasoning": "de"}}]},
               {"model": "r", "choices": [{"delta": {"content": "Answer: A"}, "finish_reason": "stop"}]},
               {"model": "r", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}, "[DONE]")
    out = call(sim, fault=Fault(raw_sse=raw.replace(b"\n\n", b"\r\n\r\n")))
    assert out.status == "completed" and out.text == "Answer: A"
    assert out.reasoning_chars == 5 and out.ttft_s is not None and out.usage_shape == "openai-bare"


def test_a_server_that_lingers_after_done_is_still_complete(sim):
    done = _sse({"model": "m", "choices": [{"delta": {"content": "Answer: C"}, "finish_reason": "stop"}]},
                {"model": "m", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}, "[DONE]")
    t = time.perf_counter()
    out = call(sim, fault=Fault(raw_sse=(done, b": after\n\n"), stall_s=5, stall_after_chunks=1),
               limits=StreamLimits(total_timeout_s=5, idle_timeout_s=3))
    assert out.status == "completed" and out.text == "Answer: C" and time.perf_counter() - t < 2
    assert out.latency_s < 0.5
    out = call(sim, fault=Fault(raw_sse=(done, b": after\n\n"), stall_s=5, stall_after_chunks=1),
               limits=StreamLimits(total_timeout_s=0.2, idle_timeout_s=0.2))
    assert out.status == "completed"


def test_401_is_systematic_and_key_never_leaks(sim):
    sim.server.api_key = "the-right-key"
    out = call(sim, headers={"authorization": f"Bearer {KEY}"})
    assert (out.status, out.error_class, out.http_status, out.systematic) == ("failed", "http_401", 401, True)
    sim.server.api_key = None
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}})
    out = call(sim, fault=Fault(status=401, body=echo, headers={"x-vsr-echo": f"got {KEY}"}),
               headers={"Authorization": f"Bearer {KEY}"})
    assert out.error_class == "http_401" and "***" in out.error and out.headers["x-vsr-echo"] == "got ***"
    assert KEY not in out.error and KEY.encode() not in out.sse_raw and KEY not in repr(out)


def test_404_unknown_model_is_systematic(sim):
    out = call(sim, "no-such-model")
    assert (out.error_class, out.http_status, out.systematic) == ("http_404", 404, True)
    assert "does not exist" in out.error


@pytest.mark.parametrize("status, body, systematic", [
    (400, '{"error": {"message": "The model `m` does not exist"}}', True),
    (400, '{"error": {"message": "max_tokens is too large"}}', False),
    (400, '{"error":{"message":"No connected db.","type":"no_db_connection","param":null,"code":"400"}}', True),
    (429, '{"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}', True),
    (429, '{"error": {"message": "Rate limit reached"}}', False),
    (403, "forbidden", True),
    (500, '{"error": {"message": "boom"}}', False),
    (503, "", False),
])
def test_http_errors(sim, status, body, systematic):
    out = call(sim, fault=Fault(status=status, body=body))
    assert out.status == "failed" and out.error_class == f"http_{status}"
    assert out.systematic is systematic and out.sse_raw == body.encode()[:4096]
    assert out.error.startswith(f"HTTP {status}")


def test_non_sse_content_type(sim):
    out = call(sim, fault=Fault(content_type="application/json", body='{"choices": []}'))
    assert out.error_class == "bad_content_type" and out.sse_raw == b'{"choices": []}'


def test_stall_hits_the_idle_timeout_quickly(sim):
    t = time.perf_counter()
    out = call(sim, fault=Fault(stall_s=5, stall_after_chunks=2),
               limits=StreamLimits(total_timeout_s=4, idle_timeout_s=0.2))
    assert out.error_class == "timeout_idle" and time.perf_counter() - t < 3.5   # well before total (4 s)
    assert out.text is not None and out.sent


def test_idle_timeout_also_bounds_the_wait_for_headers(sim):
    out = call(sim, fault=Fault(stall_s=5, stall_after_chunks=0),
               limits=StreamLimits(total_timeout_s=4, idle_timeout_s=0.2))
    assert out.error_class == "timeout_idle"


def test_total_timeout_with_a_steady_trickle(sim):
    t = time.perf_counter()
    out = call(sim, fault=Fault(content="y" * 100, chunk_chars=1, chunk_delay_s=0.02),
               limits=StreamLimits(total_timeout_s=0.3, idle_timeout_s=0.25))
    elapsed = time.perf_counter() - t
    assert out.error_class == "timeout_total" and 0.25 < elapsed < 1.9   # before the 2 s trickle ends
    assert out.text and set(out.text) == {"y"}


@pytest.mark.parametrize("fault", [Fault(omit_done=True), Fault(omit_finish=True)])
def test_truncated_stream_fails_but_keeps_evidence(sim, fault):
    out = call(sim, fault=fault)
    assert out.status == "failed" and out.error_class == "truncated_stream"
    assert out.text == "Answer: B" and out.usage == Usage(input=5, cached_input=5, cache_write=0, output=3)


def test_reset_after_first_chunk(sim):
    out = call(sim, fault=Fault(close_after_chunks=2))
    assert out.error_class == "connection_reset" and out.sent and out.text
    out = call(sim, fault=Fault(close_before_first_byte=True))
    assert out.error_class == "connection_reset" and out.sent and out.http_status is None


def test_connect_error_means_not_sent():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def go() -> CallOutcome:
        async with new_session() as client:
            return await stream_chat(client, url=f"http://127.0.0.1:{port}/v1/chat/completions",
                                     headers={"authorization": f"Bearer {KEY}"}, body={"model": "m"}, limits=FAST)
    out = asyncio.run(go())
    assert (out.status, out.error_class, out.sent) == ("failed", "connect_error", False)
    assert KEY not in out.error


def test_repetition_guard(sim):
    out = call(sim, fault=Fault(content="intro " + "abcd" * 100, chunk_chars=7),
               limits=StreamLimits(total_timeout_s=3, idle_timeout_s=1, repetition_window=8, repetition_limit=5))
    assert out.error_class == "repetition"
    assert call(sim, fault=Fault(content="abc" * 30), limits=StreamLimits(
        total_timeout_s=3, idle_timeout_s=1, repetition_window=8, repetition_limit=5)).status == "completed"


def test_output_too_long_by_chars_and_by_tokens(sim):
    out = call(sim, fault=Fault(content="z" * 50), limits=StreamLimits(total_timeout_s=3, idle_timeout_s=1,
                                                                       max_output_chars=20))
    assert out.error_class == "output_too_long"
    out = call(sim, fault=Fault(usage={"prompt_tokens": 5, "completion_tokens": 999}),
               limits=StreamLimits(total_timeout_s=3, idle_timeout_s=1, max_output_tokens=100))
    assert out.error_class == "output_too_long" and out.usage.output == 999


def test_stream_byte_cap(sim):
    out = call(sim, fault=Fault(content="w" * 400, chunk_chars=10),
               limits=StreamLimits(total_timeout_s=3, idle_timeout_s=1, max_output_chars=1000,
                                   max_stream_bytes=600, repetition_limit=1000))
    assert out.error_class == "stream_too_large" and len(out.sse_raw) == 600 < out.bytes_received


def test_invalid_and_missing_usage(sim):
    out = call(sim, fault=Fault(usage={"prompt_tokens": 5, "completion_tokens": -1}))
    assert out.error_class == "invalid_usage" and out.usage is None and out.usage_raw["completion_tokens"] == -1
    out = call(sim, fault=Fault(omit_usage=True))
    assert out.status == "completed" and out.usage is None and out.usage_raw is None
    assert out.usage_shape == "absent"


@pytest.mark.parametrize("raw, error_class", [
    (b"data: {not json}\n\n", "bad_event"),
    (b"data: [1, 2]\n\n", "bad_event"),
    (_sse({"error": {"message": "overloaded"}}), "stream_error"),
])
def test_bad_events(sim, raw, error_class):
    out = call(sim, fault=Fault(raw_sse=raw))
    assert out.error_class == error_class


def test_cancel_mid_stream_and_before_dispatch(sim):
    t = time.perf_counter()
    out = call(sim, fault=Fault(stall_s=5), cancel_after=0.1,
               limits=StreamLimits(total_timeout_s=10, idle_timeout_s=10))
    assert (out.status, out.error_class, out.sent) == ("cancelled", "cancelled", True)
    assert time.perf_counter() - t < 4.0          # the cancel did not wait out the 5 s stall
    deadline = time.monotonic() + 5               # the simulator logs the dropped request when it notices
    while not (sim.log and sim.log[-1]["fault"] == "fault") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sim.log[-1]["fault"] == "fault" and not sim.log[-1]["completed"]
    n, seen = len(sim.log), []

    async def hook() -> None:
        seen.append(True)
    out = call(sim, pre_cancel=True, on_dispatch=hook)
    assert (out.status, out.sent, seen, out.text) == ("cancelled", False, [], None)
    time.sleep(0.05)
    assert len(sim.log) == n


def test_on_dispatch_runs_before_the_request(sim):
    n, seen = len(sim.log), []

    async def hook() -> None:
        seen.append(len(sim.log))
    out = call(sim, on_dispatch=hook)
    assert out.status == "completed" and seen == [n] and len(sim.log) == n + 1


def test_a_failing_on_dispatch_sends_nothing(sim):
    n = len(sim.log)

    async def hook() -> None:
        raise RuntimeError("journal unavailable")
    with pytest.raises(RuntimeError, match="journal"):
        call(sim, on_dispatch=hook)
    time.sleep(0.05)
    assert len(sim.log) == n


def test_every_response_header_is_kept_with_credentials_masked(sim):
    fault = Fault(headers={"x-sr-bench-config-hash": "h", "x-litellm-model-id": "dep-1", "x-other": f"echo {KEY}",
                           "set-cookie": "session=abcdef123456", "x-api-key": "sk-their-own-key-0000"})
    out = call(sim, "MoM", router=True, fault=fault, headers={"authorization": f"Bearer {KEY}"})
    assert out.status == "completed"
    assert out.headers["x-vsr-selected-model"] == out.response_model == "bad"
    assert out.headers["x-vsr-inference-call-count"] == "1" and out.headers["x-sr-bench-config-hash"] == "h"
    assert "x-vsr-config-hash" in out.headers and out.headers["x-litellm-model-id"] == "dep-1"
    # evidence for any later router adapter: every header, the request's key and credential headers masked
    assert out.headers["x-other"] == "echo ***"
    assert out.headers["set-cookie"] == "***" and out.headers["x-api-key"] == "***"
    assert KEY not in repr(out.headers) and "abcdef123456" not in repr(out.headers)


def test_a_long_router_header_is_kept(sim):
    usage = json.dumps([{"model": f"child-{i}", "prompt_tokens": i, "completion_tokens": i} for i in range(600)])
    assert len(usage) > 20_000
    out = call(sim, "MoM", router=True, fault=Fault(headers={"x-vsr-model-usage": usage}))
    assert out.status == "completed" and out.headers["x-vsr-model-usage"] == usage


def test_build_body_precedence_and_purity():
    sampling = {"temperature": 0, "max_tokens": 100, "chat_template_kwargs": {"a": 1}}
    body = build_body("m", MESSAGES, sampling, {"temperature": 0.7, "stream": False},
                      {"tools": [{"type": "function"}]})
    assert body["temperature"] == 0.7 and body["max_tokens"] == 100 and body["tools"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "m" and body["messages"] == MESSAGES
    body["chat_template_kwargs"]["a"] = 2
    assert sampling["chat_template_kwargs"] == {"a": 1}
    with pytest.raises(InvalidInput):
        build_body("m", MESSAGES, {}, {}, {"api_key": "x"})
    assert chat_url("http://h/v1/") == "http://h/v1/chat/completions"


def test_limit_defaults():
    lim = StreamLimits(total_timeout_s=5, idle_timeout_s=1, max_output_chars=100)
    assert lim.connect_timeout_s == 5 and lim.max_stream_bytes == 1 << 20
    assert StreamLimits(max_output_chars=100_000).max_stream_bytes == 3_000_000
    assert StreamLimits().connect_timeout_s == 10
    with pytest.raises(InvalidInput):
        StreamLimits(total_timeout_s=0)


def test_one_cancel_stops_every_call_under_it_and_leaves_the_callers_clean(sim):
    """The calls run in their callers' tasks (no waiter task per call): one set event cancels all that
    are in flight, each caller's task goes on uncancelled (its next await is not cancelled), and a
    call that timed out or was cancelled leaves no cancellation behind either (issue 31, item 5)."""
    sim.set_fault(lambda body: Fault(stall_s=5))

    async def go() -> tuple[list[CallOutcome], list[int], CallOutcome, int]:
        cancel = asyncio.Event()
        async with new_session() as client:
            async def one() -> tuple[CallOutcome, int]:
                out = await stream_chat(client, url=chat_url(sim.v1_url), headers={},
                                        body=build_body("good", MESSAGES, {}, {}), limits=FAST, cancel=cancel)
                await asyncio.sleep(0.01)          # would raise if a cancellation were left on the task
                return out, asyncio.current_task().cancelling()
            asyncio.get_running_loop().call_later(0.1, cancel.set)
            done = await asyncio.gather(*(one() for _ in range(5)))
            timed = await stream_chat(client, url=chat_url(sim.v1_url), headers={},
                                      body=build_body("good", MESSAGES, {}, {}),
                                      limits=StreamLimits(total_timeout_s=0.2, idle_timeout_s=3), cancel=None)
            await asyncio.sleep(0.01)
            return [o for o, _ in done], [c for _, c in done], timed, asyncio.current_task().cancelling()
    t = time.perf_counter()
    outs, counts, timed, left = asyncio.run(go())
    assert [o.status for o in outs] == ["cancelled"] * 5 and counts == [0] * 5
    assert time.perf_counter() - t < 4.0
    assert timed.error_class == "timeout_total" and left == 0


def test_a_streams_usage_object_is_parsed_once(sim, monkeypatch):
    """Issue 31 (item 5): the usage an event carries is parsed on arrival and that parse is what the end of
    the stream judges (no second parse of the same object); the outcome is the same as ever."""
    from srbench.targets import stream_state

    parsed = []

    def counting(raw):
        parsed.append(raw)
        return real(raw)
    real = stream_state.parse_usage
    monkeypatch.setattr(stream_state, "parse_usage", counting)
    out = call(sim)
    assert out.status == "completed" and out.usage == Usage(input=5, cached_input=5, cache_write=0, output=3)
    assert len(parsed) == 1 and parsed[0] is out.usage_raw
