"""A call is priced the same whether dispatch hands the CallRecord itself or a report reads the stored record's
JSON through the MeteredView (issue 26, item 1: targets/accounting.call_cost, targets/routers.attribute)."""

from __future__ import annotations

import pytest

from srbench.schemas.call import CallRecord, MeteredView, Timings, Usage
from srbench.schemas.target import Prices, Target
from srbench.targets import routers
from srbench.targets.accounting import call_cost

A = Prices(input=1.0, cached_input=0.1, cache_write=1.25, output=4.0)
B = Prices(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)
USAGE = Usage(input=1000, cached_input=200, cache_write=0, output=100)   # at B: 3000 + 60 + 1500 → 0.00456

SINGLE = Target(id="s", kind="single", base_url="http://127.0.0.1:1/v1", model="vendor/b", prices={"vendor/b": B})
MOM = Target(id="r", kind="mom", base_url="http://127.0.0.1:1/v1", model="auto",
             prices={"vendor/a": A, "vendor/b": B})
DIRECT = {"x-vsr-inference-call-count": "1", "x-vsr-selected-model": "vendor/b", "x-vsr-config-hash": "h"}


def _record(headers: dict[str, str], usage: Usage | None = USAGE, model: str | None = "vendor/b") -> CallRecord:
    return CallRecord(request="sha256:" + "a" * 64, status="completed", headers=headers, text="ok", usage=usage,
                      usage_raw={"prompt_tokens": 1200, "completion_tokens": 100}, response_model=model,
                      timings=Timings(started_at=1.0))


@pytest.mark.parametrize("target,headers", [(SINGLE, {}), (MOM, DIRECT)])
def test_a_record_and_its_stored_json_cost_the_same(target: Target, headers: dict[str, str]) -> None:
    rec = _record(headers)
    stored = rec.model_dump(mode="json", by_alias=True)
    by_model, by_json = call_cost(target, rec), call_cost(target, stored)
    assert by_model.cost_usd == by_json.cost_usd == pytest.approx(0.00456, abs=1e-15)
    assert (by_model.basis, by_model.models) == (by_json.basis, by_json.models)
    assert by_model.usage == by_json.usage == USAGE


def test_attribution_reads_a_record_or_its_json_alike() -> None:
    rec = _record(DIRECT)
    got = [routers.attribute(MOM, c) for c in (rec, rec.model_dump(mode="json", by_alias=True))]
    assert got[0] == got[1]
    assert (got[0].selected_model, got[0].inference_calls, got[0].config_hash) == ("vendor/b", 1, "h")


def test_the_view_reads_an_empty_usage_as_unmetered_and_null_headers_as_none() -> None:
    view = MeteredView.model_validate({"usage": {}, "headers": None, "response_model": "vendor/b", "text": "x"})
    assert view.usage is None and view.headers == {} and view.usage_raw is None
    c = call_cost(SINGLE, {"usage": {}, "headers": None, "response_model": "vendor/b"})
    assert c.cost_usd is None and c.reason == "the call carried no usage"
