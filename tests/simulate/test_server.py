"""The simulator: models, deterministic answers, token counts, router headers, faults and its log."""

from __future__ import annotations

import asyncio
import json
import math
import time

import httpx
import pytest

from srbench.simulate import (
    Fault,
    RouterRule,
    SimModel,
    SimServer,
    SimulatorThread,
    answer_key_from_cases,
    load_answer_key,
    messages_key,
    start_simulator,
)
from srbench.simulate.behaviour import reply_for, wrong_answer
from srbench.targets.sse import decode_transcript

MODELS = [SimModel("oracle", skill=1.0, cached_fraction=0.25), SimModel("dunce", skill=0.0),
          SimModel("coin", skill=0.5)]
GRIDS = [[[1, 2], [3, 4]]]
CASES = [{"id": f"q{i}", "messages": [{"role": "user", "content": f"Question {i}: pick one of A-D."}],
          "answer": "ABCD"[i % 4]} for i in range(200)]
CASES.append({"id": "arc", "messages": [{"role": "user", "content": "Solve this grid puzzle."}], "answer": GRIDS})
KEY = answer_key_from_cases(CASES)
RULE = RouterRule(strong="oracle", weak="dunce", long_prompt_chars=100, keywords=("prove",),
                  config_hash="cfg-123")


@pytest.fixture(scope="module")
def sim():
    with SimulatorThread(models=MODELS, answer_key=KEY, router=RULE) as s, httpx.Client(timeout=5) as c:
        s.client = c                 # one pooled client: a new httpx client per request is slow
        yield s


@pytest.fixture(autouse=True)
def _reset(sim):
    sim.set_fault(None)
    yield
    sim.set_fault(None)


def ask(sim, model: str, content: str, *, router: bool = False, **extra) -> tuple[httpx.Response, list[dict]]:
    base = sim.router_url if router else sim.v1_url
    body = {"model": model, "messages": [{"role": "user", "content": content}], "stream": True, **extra}
    r = sim.client.post(base + "/chat/completions", json=body)
    events = [] if r.status_code != 200 else [
        json.loads(e.data) for e in decode_transcript(r.content) if e.data != "[DONE]"]
    return r, events


def content_of(events: list[dict]) -> str:
    return "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])


def test_health_and_models(sim):
    assert httpx.get(sim.url + "/health").json()["status"] == "ok"
    assert [m["id"] for m in httpx.get(sim.v1_url + "/models").json()["data"]] == ["coin", "dunce", "oracle"]
    assert [m["id"] for m in httpx.get(sim.router_url + "/models").json()["data"]] == ["MoM"]


def test_stream_shape_and_token_counts(sim):
    content = CASES[1]["messages"][0]["content"]            # 30 chars → 8 prompt tokens
    r, events = ask(sim, "oracle", content)
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.content.endswith(b"data: [DONE]\n\n")
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert len([e for e in events if e["choices"] and e["choices"][0]["delta"].get("content")]) >= 2
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert content_of(events) == "Answer: B"
    usage = events[-1]["usage"]
    prompt = math.ceil(len(content) / 4)
    assert usage == {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3,
                     "prompt_tokens_details": {"cached_tokens": math.floor(0.25 * prompt)}}
    assert events[-1]["choices"] == [] and all(e["model"] == "oracle" for e in events)


def test_answers_follow_skill_deterministically(sim):
    first = [content_of(ask(sim, m, c["messages"][0]["content"])[1]) for m in ("oracle", "dunce", "coin")
             for c in CASES[:40]]
    again = [content_of(ask(sim, m, c["messages"][0]["content"])[1]) for m in ("oracle", "dunce", "coin")
             for c in CASES[:40]]
    assert first == again
    for case in CASES[:200]:
        msgs = case["messages"]
        assert reply_for(MODELS[0], msgs, KEY).text == f"Answer: {case['answer']}"
        wrong = reply_for(MODELS[1], msgs, KEY)
        assert wrong.correct is False and wrong.answer != case["answer"] and wrong.answer in "ABCD"
    hits = sum(bool(reply_for(MODELS[2], c["messages"], KEY).correct) for c in CASES[:200])
    assert 70 <= hits <= 130                                  # skill 0.5, decided by a hash


def test_a_new_simulator_answers_the_same():
    async def go() -> str:
        srv = await start_simulator(models=MODELS, answer_key=KEY)
        try:
            async with httpx.AsyncClient() as c:
                r = await c.post(srv.v1_url + "/chat/completions", json={
                    "model": "coin", "messages": CASES[7]["messages"], "stream": False})
                return r.json()["choices"][0]["message"]["content"]
        finally:
            await srv.stop()
    assert asyncio.run(go()) == asyncio.run(go()) == reply_for(MODELS[2], CASES[7]["messages"], KEY).text


def test_grid_answers():
    msgs = CASES[-1]["messages"]
    assert json.loads(reply_for(MODELS[0], msgs, KEY).text) == GRIDS
    wrong = json.loads(reply_for(MODELS[1], msgs, KEY).text)
    assert wrong != GRIDS and wrong == [[[2, 2], [3, 4]]]
    assert wrong_answer([[9]], 0.0) == [[0]]                  # a single grid
    assert wrong_answer("Paris", 0.3) == "I am not sure."
    assert wrong_answer("J", 0.99) == "I"                    # options go up to the correct letter


def test_unknown_prompt_gets_a_deterministic_letter(sim):
    texts = {content_of(ask(sim, "oracle", "not in the key")[1]) for _ in range(3)}
    assert len(texts) == 1 and texts.pop() in {f"Answer: {c}" for c in "ABCD"}
    assert sim.log[-1]["correct"] is None


def test_answer_key_from_jsonl(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CASES[:3]) + "\n", encoding="utf-8")
    key = load_answer_key(path)
    assert key == {messages_key(c["messages"]): c["answer"] for c in CASES[:3]}
    assert reply_for(MODELS[0], CASES[2]["messages"], key).correct is True


def test_router_rule_and_headers(sim):
    r, events = ask(sim, "MoM", "short question", router=True)
    assert r.headers["x-vsr-selected-model"] == "dunce" and r.headers["x-vsr-selected-decision"] == "simple_knowledge"
    assert r.headers["x-vsr-config-hash"] == "cfg-123" and r.headers["x-vsr-inference-call-count"] == "1"
    assert events[-1]["model"] == "dunce"
    r, _ = ask(sim, "MoM", "Please PROVE it", router=True)
    assert r.headers["x-vsr-selected-model"] == "oracle"
    assert r.headers["x-vsr-selected-decision"] == "complex_reasoning"
    r, _ = ask(sim, "MoM", "y" * 101, router=True)
    assert r.headers["x-vsr-selected-model"] == "oracle"
    entry = sim.log[-1]
    assert (entry["endpoint"], entry["requested_model"], entry["model"], entry["decision"]) == (
        "router", "MoM", "oracle", "complex_reasoning")
    r, _ = ask(sim, "oracle", "no router headers here")
    assert "x-vsr-selected-model" not in r.headers


def test_log_records_what_was_served(sim):
    n = len(sim.log)
    content = CASES[3]["messages"][0]["content"]
    _, events = ask(sim, "oracle", content)
    e = sim.log[n]
    assert e["model"] == "oracle" and e["status"] == 200 and e["completed"] and e["correct"] is True
    assert e["usage"] == events[-1]["usage"] and e["finish_reason"] == "stop"
    assert e["messages_digest"] == messages_key([{"role": "user", "content": content}])
    assert e["time"] <= time.time() and e["fault"] is None
    sim.set_fault(lambda body: Fault(omit_usage=True, label="no-usage") if body["model"] == "coin" else None)
    ask(sim, "coin", content)
    ask(sim, "oracle", content)
    assert [(x["fault"], x["usage"] is None) for x in sim.log[n + 1:]] == [("no-usage", True), (None, False)]


def test_errors(sim):
    r, _ = ask(sim, "nobody", "hi")
    assert r.status_code == 404 and "does not exist" in r.json()["error"]["message"]
    assert sim.log[-1]["status"] == 404
    assert httpx.post(sim.v1_url + "/chat/completions", content=b"nope").status_code == 400
    sim.server.api_key = "k-123"
    try:
        r, _ = ask(sim, "oracle", "hi")
        assert r.status_code == 401
        ok = httpx.post(sim.v1_url + "/chat/completions", headers={"Authorization": "Bearer k-123"},
                        json={"model": "oracle", "messages": [{"role": "user", "content": "hi"}]})
        assert ok.status_code == 200
    finally:
        sim.server.api_key = None


def test_max_tokens_cuts_with_length(sim):
    _, events = ask(sim, "oracle", "q", max_tokens=1)
    assert content_of(events) == "Answ" and events[-2]["choices"][0]["finish_reason"] == "length"
    assert events[-1]["usage"]["completion_tokens"] == 1


def test_zero_latency_is_fast(sim):
    t = time.perf_counter()
    with httpx.Client() as c:
        for _ in range(30):
            c.post(sim.v1_url + "/chat/completions", json={
                "model": "oracle", "messages": CASES[0]["messages"], "stream": True}).raise_for_status()
    assert time.perf_counter() - t < 3.0


def test_model_latency_is_applied():
    with SimulatorThread(models=[SimModel("slow", skill=1.0, latency_s=0.3)]) as s:
        t = time.perf_counter()
        httpx.post(s.v1_url + "/chat/completions", json={
            "model": "slow", "messages": [{"role": "user", "content": "q"}], "stream": True})
        assert 0.25 < time.perf_counter() - t < 2.0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        SimModel("x", skill=1.5)
    with pytest.raises(ValueError, match="not a simulated model"):
        SimServer([SimModel("a", 1.0)], router=RouterRule(strong="a", weak="b"))
