"""Byte pins of the comparison's declared and notes paths (issue 26, item 1): the primary-set claim (betting,
selection-adjusted), a post-hoc margin, a run stopped early, an unconfirmed router's blocked claims, a self-comparison and the
detectability of an inconclusive claim. The digests were taken from the dict-mutating code before the claim
blocks were built as models; the stored bytes must not change. Issue 41 re-pinned them once: compare v6 adds
`evidence.standing`/`reason` (facts: `standing_reason`) and the standard plans carry pinned, checked sources
(one more limitations line); without those the bytes equal the earlier pins. Issue 43 re-pinned the adjusted one:
its claims_by_rule say `intervals: unadjusted` (without that field the bytes equal the issue-41 pin), and again for
item 7's K step (the router as the common control: its inconclusive planning against K = 3, the PowerPlan's
model named; with the correlated-½ step the bytes are the earlier pin b3:4f083466…), and for its per-benchmark
sizes (the same planning with `sized_for_effect`/`sized_for_margin` added, nothing else: b3:7e17b95a… without),
and for the earlier prefixes' share ρ(J, D) and the K step's bar by Newton's steps (only planning figures
moved, in their last digits here: b3:52171658… before)."""

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
    frozen = sel.frozen_plan(stats)
    frozen["dataset"]["sources"] = {b: {"revision": "r", "pinned": True, "check": "file-sha256"} for b in sel.WEIGHTS}
    plan, rows = Plan.model_validate(frozen), sel.seeded_rows()
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
    "early-stop-betting": "b3:2bd5f6d794273255910f898533145ba13016cfdf46aef9f56cd25cb5c6589b19",
    "betting-primary-blocked": "b3:44e3c08588341141286e79dd92bff1271b91b7c2c147cc66efdedfbc3a049f03",
    "hoeffding-primary-confirmed": "b3:f4efb0f387a95bf061f5526f7c01cc5b27a1d31f5eb54b00190b5cdb02ca3e25",
    "post-hoc-confirmed": "b3:7e15cee974627afb95e978597dd06fb301f0e0bd190b469f4ddd5a7fffcdc39f",
    "selection-adjusted-self": "b3:4dca85569b9a9bcc23f3898a6631da4f09448b4c883e26db3538c1ab6fa862ac",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_comparison_paths_keep_their_bytes(name: str) -> None:
    out = CASES[name]()
    assert digest_json(out) == PINNED[name]
    assert digest_json(Comparison.model_validate(out).dump()) == PINNED[name]     # what the rule stores


# "Does routing pay?" as the service answers it (stages/compare/headline.py), read from the stored comparison;
# digests taken from the dict-reading code before it read the Comparison model
FACTS_PINNED = {
    "betting-primary-blocked": "b3:129c7ee8deda0ddbb6d54fde02bcd20afb37a7df180ab30eac0cec61258169df",
    "early-stop-betting": "b3:63093f9033b232838b322d51884de41a7495504e5b00346161489d77fe15bca8",
    "hoeffding-primary-confirmed": "b3:675fe2388c90245468f067df210a9077241c1a3fafcab528137e641e4d11e6c5",
    "post-hoc-confirmed": "b3:da472f2c85d84559308812ea89a021a0a39a453fab2bdb7ca3ef0f1fb6375568",
    "selection-adjusted-self": "b3:dd2e5048747f9583f0cde2d9dba524222def7d18772082bf1ceacd051b475e91",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_routing_facts_keep_their_bytes(name: str) -> None:
    facts = routing_facts(Comparison.model_validate(CASES[name]()))
    assert digest_json([f.model_dump(mode="json") for f in facts]) == FACTS_PINNED[name]


def test_the_rules_own_claims_say_they_are_unadjusted_when_the_claim_is_adjusted() -> None:
    # issue 43: against the strongest of K = 3 the claim uses the adjusted interval; claims_by_rule does not
    adjusted = CASES["selection-adjusted-self"]()
    assert all(c["claims_by_rule"]["intervals"] == "unadjusted" for c in adjusted["candidates"])
    assert all(c["selection"]["k"] == 3 for c in adjusted["candidates"])
    plain = CASES["post-hoc-confirmed"]()
    assert all("intervals" not in c["claims_by_rule"] for c in plain["candidates"])
