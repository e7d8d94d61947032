"""Byte pins of the comparison's declared and notes paths (issue 26, item 1): the primary-set claim (betting,
selection-adjusted), a post-hoc margin, a run stopped early, an unconfirmed router's blocked claims, a self-comparison and the
detectability of an inconclusive claim. The digests were taken from the dict-mutating code before the claim
blocks were built as models; the stored bytes must not change."""

from __future__ import annotations

from typing import Any

import pytest
from tests.stages import test_compare_rules as rules
from tests.stages import test_selection as sel

from srbench.cas.digest import digest_json
from srbench.schemas.comparison import Comparison
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import compare_reports
from srbench.stages.compare.declared import apply_declared, resolve_margin
from srbench.stages.compare.notes import annotate
from srbench.stages.stats.betting import interleave

_PROBES = {"pinned": "cfg-1", "responses": 240, "responses_with_header": 240, "responses_without_header": 0}
UNCONFIRMED = {**_PROBES, "probe_before": "not run", "probe_after": "not run", "confirmed": False,
               "reason": "no preview_url: no probe before or after the run"}
CONFIRMED = {**_PROBES, "probe_before": "confirmed", "probe_after": "confirmed", "confirmed": True, "reason": None}


def _pipeline(b: dict[str, Any], brows: list[dict[str, Any]], bplan: Plan, c: dict[str, Any],
              crows: list[dict[str, Any]], cplan: Plan, margin: float | None = None) -> dict[str, Any]:
    """What the compare rule (stages/derived/rules.py) stores, without the store."""
    margin, source = resolve_margin(margin, cplan.statistics)
    out = compare_reports(b, brows, bplan, c, crows, cplan, margin=margin)
    return annotate(apply_declared(out, source, cplan.statistics), b, c).dump()


def _router_pair(stats: dict[str, Any] | None, evidence: dict[str, Any] | None,
                 margin: float | None = None) -> dict[str, Any]:
    bp, cp = rules.plan("B", "single", rules.CS), rules.plan("mom", "mom", rules.CS, stats)
    c = {**rules.report(cp), "summary": {"targets": [{"target_id": "mom", "kind": "mom",
                                                       "config_hash_evidence": evidence}]}}
    return _pipeline({**rules.report(bp), "benchmarks": []}, rules.rows("B", rules.CS, rules.BASE_OK), bp, c,
                     rules.rows("mom", rules.CS, rules.CAND_OK), cp, margin)


def _selection_pair() -> dict[str, Any]:
    stats = {"claim_rule": "hoeffding", "baseline_selection": "adjusted", "primary_benchmarks": ["mmlu-pro"],
             "margin": 0.05}
    plan, rows = Plan.model_validate(sel.frozen_plan(stats)), sel.seeded_rows()
    return _pipeline(sel.stub(plan), rows, plan, sel.stub(plan), rows, plan)


def _early_stop() -> dict[str, Any]:
    order = [rules.CS[i] for i in interleave([b for _, b in rules.CS])]
    stop = {"reason": "settled", "decided_at_cases": 100}
    bp, cp = rules.plan("B", "single", rules.CS), rules.plan("mom", "mom", rules.CS,
                                                               {"claim_rule": "betting", "early_stop": {}})
    c_rows = rules.rows("mom", rules.CS, rules.CAND_OK, pending={c for c, _ in order[100:]})
    return _pipeline(rules.report(bp), rules.rows("B", rules.CS, rules.BASE_OK), bp,
                     rules.report(cp, "stopped_early", stop), c_rows, cp)


CASES = {
    "early-stop-betting": _early_stop,
    "betting-primary-blocked": lambda: _router_pair({"claim_rule": "betting", "primary_benchmarks": ["mmlu-pro"],
                                                     "margin": 0.05}, UNCONFIRMED),
    "post-hoc-confirmed": lambda: _router_pair({"claim_rule": "betting"}, CONFIRMED, margin=0.05),
    "hoeffding-primary-confirmed": lambda: _router_pair({"claim_rule": "hoeffding",
                                                         "primary_benchmarks": ["gpqa-diamond"]}, CONFIRMED),
    "selection-adjusted-self": _selection_pair,
}
PINNED = {
    "early-stop-betting": "b3:406e3fbbdcd07c53b63b35cf7f5061241dae4163a7f0c0d05cf3570296f9dc8a",
    "betting-primary-blocked": "b3:3a7d0424356f2d402333414d0a53ba81eb95f332a2c578a254130d91efc4c877",
    "hoeffding-primary-confirmed": "b3:3f5d5bfdc77be8cdc359386372a3fa200a487ec56cfb015fee4d22cb0ff6987a",
    "post-hoc-confirmed": "b3:29cc912fdcdbb7c9016e564b89447351e6a57a706502bd28a1fd1e6675abb538",
    "selection-adjusted-self": "b3:27f68ecc072e4fd287c4960066898fce31c25f229d51c28d7fd88b733f883fa6",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_comparison_paths_keep_their_bytes(name: str) -> None:
    out = CASES[name]()
    assert digest_json(out) == PINNED[name]
    assert digest_json(Comparison.model_validate(out).dump()) == PINNED[name]     # what the rule stores
