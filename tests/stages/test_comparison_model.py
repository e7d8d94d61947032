"""The stored comparison (kind ``comparison``) is a pydantic model (issue 26, item 1); its stored bytes did
not change (the digests below were taken from the dict-literal code before the model)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.stages.test_compare import CASES, plan, report, rows_for, target

from srbench.cas.digest import digest_json
from srbench.schemas.comparison import Comparison
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import compare_reports
from srbench.stages.compare.declared import apply_declared
from srbench.stages.compare.notes import annotate


def _demo(profile: str, *, router_wins: dict[str, Any]) -> dict[str, Any]:
    """A quick/standard run pair: two singles in the baseline, a router and a single in the candidate."""
    bp = plan([target("A"), target("B")], profile=profile)
    cp = plan([target("mom", "mom"), target("C")], profile=profile)
    brows = rows_for("A", {"m1": True, "g1": True}, cost=0.02) + rows_for("B", {"m1": True}, cost=0.01,
                                                                          judge_cost_usd=0.001)
    crows = rows_for("mom", router_wins, cost=0.005, judge_cost_usd=0.0) + rows_for("C", {"m2": "failed"}, cost=None)
    b, c = report(bp, run_id="rb"), report(cp, run_id="rc")
    c["summary"] = {"targets": [{"target_id": "mom", "kind": "mom"}, {"target_id": "C", "kind": "single"}]}
    cplan = Plan.model_validate(cp)
    out = compare_reports(b, brows, Plan.model_validate(bp), c, crows, cplan)
    return annotate(apply_declared(out, "plan", cplan.statistics), ComparedReport.model_validate(b),
                    ComparedReport.model_validate(c)).dump()


def test_comparison_bytes_unchanged():
    quick = _demo("quick", router_wins={"m1": True, "g1": True, "g2": True})
    standard = _demo("standard", router_wins={c: True for c in CASES})
    assert digest_json(quick) == PINNED_QUICK
    assert digest_json(standard) == PINNED_STANDARD
    for cmp in (quick, standard):          # the model is the stored shape: validating and dumping keeps the bytes
        assert digest_json(Comparison.model_validate(cmp).dump()) == digest_json(cmp)


def test_comparison_refuses_a_field_outside_the_model():
    cmp = _demo("quick", router_wins={"m1": True})
    with pytest.raises(ValidationError):
        Comparison.model_validate({**cmp, "baseline": {**cmp["baseline"], "chosen_on_cases": "many"}})
    with pytest.raises(ValidationError):
        Comparison.model_validate({**cmp, "unknown_field": 1})


# issue 41: compare v6 adds evidence.standing and evidence.reason (without them and with v5, the quick bytes are
# the earlier pin b3:a727013514b9…); the standard plan now carries pinned, checked sources
PINNED_QUICK = "b3:61f79be5f5dcfa4d6b7363c8cd58faa025891c65fb0fba84b3b7c78fee2cd873"
PINNED_STANDARD = "b3:1d8f5f7756eaa2a9820ce70819a129cee0465b78423e125380bae7a77fedc984"


def test_a_claim_block_is_a_model_too():
    cmp = _demo("quick", router_wins={"m1": True})
    cand = cmp["candidates"][0]
    assert {"interval", "intervals", "claims_by_rule", "non_inferiority"} <= set(cand)
    for bad in ({**cand, "non_inferiority": {**cand["non_inferiority"], "verdict": "yes"}},
                {**cand, "intervals": {**cand["intervals"], "bootstrap": cand["intervals"]["betting"]}},
                {**cand, "claim": "maybe"}):
        with pytest.raises(ValidationError):
            Comparison.model_validate({**cmp, "candidates": [bad]})
