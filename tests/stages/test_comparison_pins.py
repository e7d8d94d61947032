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
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import compare_reports
from srbench.stages.compare.declared import apply_declared, resolve_margin
from srbench.stages.compare.headline import routing_facts
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
    return annotate(apply_declared(out, source, cplan.statistics), ComparedReport.model_validate(b),
                    ComparedReport.model_validate(c)).dump()


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


# "Does routing pay?" as the service answers it (stages/compare/headline.py), read from the stored comparison;
# digests taken from the dict-reading code before it read the Comparison model
FACTS_PINNED = {
    "betting-primary-blocked": "b3:84c214db7224a74ad6d31ab40e8c23b470db1ce37c41b939b34071829b422592",
    "early-stop-betting": "b3:68b0be457e247a8ae0b4da59e4651a462e87aa16490a63afec8d67d6df74061a",
    "hoeffding-primary-confirmed": "b3:afa90a4530651766f5bcdbdae8d99b6dcc8d6d7e75b0904c9744e60d73f5eccb",
    "post-hoc-confirmed": "b3:561d0accd5dec050d3fca792b7c8ab50c9541c1fdc83fde03c55d4658ec6a83b",
    "selection-adjusted-self": "b3:2b5edee5235719531b00ab942c13e0cd8e3d0a550b3538b617c401192a51166b",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_routing_facts_keep_their_bytes(name: str) -> None:
    facts = routing_facts(Comparison.model_validate(CASES[name]()))
    assert digest_json([f.model_dump(mode="json") for f in facts]) == FACTS_PINNED[name]
