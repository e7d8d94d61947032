"""Price and usage corrections are pydantic models (issue 26, item 1); their stored bytes did not
change (the digests below were taken from the dict-literal code before the models)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from tests.benchmarks.fixtures import conversation_record
from tests.stages.test_compare import plan

from srbench.cas import ObjectStore, canonical_json, digest_bytes
from srbench.errors import InvalidInput
from srbench.schemas.plan import Plan
from srbench.stages.derived.reconcile import _reconcile
from srbench.stages.derived.reprice import price_correction

PRICES = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
TARGET = {"id": "large", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "m-large",
          "prices": {"m-large": PRICES}}
JUDGE = {"id": "judge", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "m-judge",
         "prices": {"m-judge": PRICES}}
MOM = {"id": "mom", "kind": "mom", "base_url": "http://127.0.0.1:9/router/v1", "model": "MoM",
       "prices": {"m-large": PRICES}}
PLAN = {**plan([TARGET, MOM]), "plan_sha256": "a" * 64,          # a frozen plan as the service stores it
        "auxiliary_targets": {"judge": {"target": JUDGE, "effective_params": {}, "registered": True}},
        "benchmark_options": {"hle": {"judge": "judge", "grader_version": "g1", "grading": None}}}
RUN = SimpleNamespace(id="run-1", status="completed", mode="live", plan="b3:plan")     # a run as stages/derived reads it
USAGE = {"input": 10, "cached_input": 0, "cache_write": 0, "output": 5}
ROUTED = {"x-vsr-selected-model": "m-large", "x-vsr-selected-decision": "d", "x-vsr-inference-call-count": "1"}
RAW_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _sse(usage: dict, finish: str = "stop") -> bytes:
    events = [{"choices": [{"delta": {"content": "B"}, "finish_reason": None}], "model": "m-large"},
              {"choices": [{"delta": {}, "finish_reason": finish}], "model": "m-large", "usage": usage}]
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def _record(store: ObjectStore, usage: dict | None, sse: bytes | None, model: str = "m-large",
            headers: dict | None = None) -> str:
    record = {"kind": "call", "status": "completed", "finish_reason": "stop", "response_model": model,
              "usage": usage, "usage_raw": RAW_USAGE if sse else None,
              "sse": store.put_bytes(sse) if sse else None, "headers": headers or {}, "text": "B"}
    return store.put_json(record)


def test_price_correction_bytes_unchanged():
    body = price_correction(RUN, Plan.model_validate(PLAN), {"large": {"m-large": {**PRICES, "output": 8}}},
                            "new list price").model_dump(mode="json", by_alias=True)
    assert digest_bytes(canonical_json(body)) == PRICE_DIGEST
    assert body["prices"]["large"]["m-large"]["output"] == 8.0 and body["model_requests"] == 0


def test_price_correction_refuses_a_bad_price():
    with pytest.raises(InvalidInput, match="large.m-large"):
        price_correction(RUN, Plan.model_validate(PLAN), {"large": {"m-large": {**PRICES, "output": -1}}}, None)


def test_usage_correction_bytes_unchanged(tmp_path):
    store = ObjectStore(str(tmp_path / "cas"))
    plan = store.put_json(PLAN)
    calls = {
        "cell-a": ["large", "mmlu-pro", _record(store, USAGE, _sse(RAW_USAGE)), None],             # verified
        "cell-b": ["large", "mmlu-pro", _record(store, {**USAGE, "output": 4}, _sse(RAW_USAGE)), None],  # changed
        "cell-c": ["large", "hle", _record(store, USAGE, None), _record(store, USAGE, None, "m-judge")],  # no SSE
        "cell-d": ["mom", "mmlu-pro", _record(store, USAGE, _sse(RAW_USAGE), headers=ROUTED), None],   # a MoM call
        "cell-e": ["large", "tau3", store.put_json(conversation_record(calls=[           # a conversation
            {"role": "subject", "target_id": "large", "index": 0, "record": _record(store, USAGE, _sse(RAW_USAGE)),
             "request": "q", "cost_usd": None, "status": "completed", "error_class": None, "selected_model": None}]
        ).model_dump(mode="json", by_alias=True)), None],
    }
    body = _reconcile(store, {"plan": plan, "calls": calls}, {"metering": "sr-bench-metering-v1", "run_id": "run-1"})
    assert [r["status"] for r in body["rows"]] == ["verified", "changed", "unverifiable", "unverifiable", "verified",
                                                   "verified"]
    assert body["rows"][4]["router"] == "vllm-sr" and body["rows"][5]["index"] == 0
    assert (body["verified_count"], body["changed_count"], body["unverifiable_count"]) == (3, 1, 2)
    assert digest_bytes(canonical_json(body)) == USAGE_DIGEST
    rerouted = _reconcile(store, {"plan": plan, "calls": calls},
                          {"metering": "sr-bench-metering-v1", "run_id": "run-1", "routers": {"mom": "vllm-sr"}})
    assert rerouted["routers"] == {"mom": "vllm-sr"} and "routers" not in body
    assert digest_bytes(canonical_json(rerouted)) == REROUTED_DIGEST


PRICE_DIGEST = "b3:fdc5fb9985410558fc148d2cdf5f81266e84d1beb4c1bba331a6a438c63e9fcf"
USAGE_DIGEST = "b3:d3c53c789c1f3f6547a7cd37d93c8efc6e725cb64099fe813d0a0aef14482732"      # full plan, dict code
REROUTED_DIGEST = "b3:b96af30163a3b151ba1befa9663f48cccdb52e4d755232d6efbf11114ec5c4fc"   # full plan, dict code


def test_the_models_are_frozen_and_document_every_field():
    from pydantic import ValidationError

    from srbench.schemas.corrections import PriceCorrection, UsageCorrection, UsageRow

    for model in (PriceCorrection, UsageCorrection, UsageRow):
        undocumented = [n for n, f in model.model_fields.items() if not f.description]
        assert not undocumented, (model.__name__, undocumented)
    model = price_correction(RUN, Plan.model_validate(PLAN), {"large": {"m-large": PRICES}}, None)
    with pytest.raises(ValidationError):
        model.reason = "changed"                      # type: ignore[misc]
    body = model.model_dump(mode="json", by_alias=True)
    assert PriceCorrection.model_validate(body).model_dump(mode="json", by_alias=True) == body
