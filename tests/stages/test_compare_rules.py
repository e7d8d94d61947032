"""compare_reports with the plan's statistics block: which rule makes the claim, both intervals labelled,
the margin declared in advance, planning for inconclusive results, and runs that stopped early."""

from __future__ import annotations

from typing import Any

import pytest

from srbench.benchmarks.pins import source_tasks
from srbench.cli.derived import inconclusive_lines, needed_text
from srbench.errors import InvalidInput
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import NotComparable, compare_reports
from srbench.stages.stats.betting import betting_interval, interleave, make_design
from srbench.stages.stats.paired import weighted_hoeffding
from srbench.stages.stats.planning import with_sizes
from srbench.stages.stats.power import power_plan
from srbench.stages.stats.sizing import sizes_needed

PRICE = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25, "output": 4.0}
WEIGHTS = {"mmlu-pro": 10, "gpqa-diamond": 15}


def cases(n_m: int, n_g: int) -> list[tuple[str, str]]:
    return [(f"m{i}", "mmlu-pro") for i in range(n_m)] + [(f"g{i}", "gpqa-diamond") for i in range(n_g)]


def plan(tid: str, kind: str, cs: list[tuple[str, str]], stats: dict[str, Any] | None = None,
         profile: str = "standard") -> Plan:
    out = {"kind": "plan", "name": "p", "mode": "live", "profile": profile, "seed": 1, "cost_policy": "require_priced",
           "dataset": {"sha256": "0" * 64, "object": "b3:" + "0" * 64, "case_count": len(cs), "benchmarks": sorted(WEIGHTS), "split": "holdout",
                       "sources": {b: {"revision": "r", "pinned": True, "check": "file-sha256"} for b in WEIGHTS}},
           "case_sha256": "c" * 64, "targets": [{"target": {"id": tid, "kind": kind, "base_url": "http://x/v1",
                                                           "model": tid, "prices": {tid: PRICE}},
                                                "effective_params": {}, "registered": True}],
           "sampling": {}, "limits": {}, "benchmark_weights": dict(WEIGHTS), "adapter_versions": {},
           "grader_versions": {}, "total": len(cs), "plan_sha256": f"plan-{tid}"}
    if stats is not None:
        out["statistics"] = stats
    return Plan.model_validate(out)


def rows(tid: str, cs: list[tuple[str, str]], correct: dict[str, bool], pending: set[str] = frozenset()
         ) -> list[dict[str, Any]]:
    return [{"cell_id": f"{c}:{tid}", "seq": i, "case_id": c, "target_id": tid, "benchmark": b,
             "state": "pending" if c in pending else "completed", "correct": None if c in pending else correct[c],
             "cost_usd": 0.01, "cache_neutral_cost_usd": 0.01, "usage": None, "latency_s": 1.0, "ttft_s": 0.1}
            for i, (c, b) in enumerate(cs)]


def report(p: Plan, status: str = "completed", stop: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "report", "run_id": p.plan_sha256, "status": status, "mode": "live", "early_stop": stop,
            "provenance": {"plan_sha256": p.plan_sha256}}


CS = cases(200, 40)
BASE_OK = {c: (i % 10 != 0) for i, (c, _) in enumerate(CS)}          # baseline wrong on every 10th case
CAND_OK = {c: True for c, _ in CS}                                     # the candidate right on all


def pair(stats: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    bp, cp = plan("B", "single", CS), plan("mom", "mom", CS, stats)
    return compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(cp), rows("mom", CS, CAND_OK), cp, **kw).dump()


def test_the_declared_rule_makes_the_claim_and_the_other_is_shown_beside_it():
    # 24 wins, 216 ties: Δ = 0.4·(20/200) + 0.6·(4/40) = 0.1; Hoeffding r = √(2L(0.16/200 + 0.36/40)) = 0.2689
    default, declared = pair()["candidates"][0], pair({"claim_rule": "betting"})["candidates"][0]
    diffs = {"mmlu-pro": [int(not BASE_OK[c]) for c, b in CS if b == "mmlu-pro"],
             "gpqa-diamond": [int(not BASE_OK[c]) for c, b in CS if b == "gpqa-diamond"]}
    hoeff = weighted_hoeffding(diffs, WEIGHTS)
    assert hoeff.radius == pytest.approx(0.26892, abs=1e-4) and default["delta"] == pytest.approx(0.1)
    order = interleave([b for _, b in CS])
    design = make_design([CS[i][1] for i in order], WEIGHTS)
    bet = betting_interval([int(not BASE_OK[CS[i][0]]) for i in order], design)
    for c in (default, declared):
        assert {k: c["intervals"]["hoeffding"][k] for k in hoeff.model_dump()} == hoeff.model_dump()
        assert {k: c["intervals"]["betting"][k] for k in bet.model_dump()} == bet.model_dump()
        assert c["claims_by_rule"] == {"hoeffding": "inconclusive", "betting": "improvement"}
        assert c["intervals"]["betting"]["valid"] and c["intervals"]["hoeffding"]["valid"]
    assert default["claim_rule"] == "hoeffding" and default["claim"] == "inconclusive"
    assert default["interval"]["makes_claim"] and not default["intervals"]["betting"]["makes_claim"]
    assert declared["claim_rule"] == "betting" and declared["claim"] == "improvement"
    assert declared["claim_method"] == "stratified-betting-cs" and declared["interval"]["ci"][0] > 0
    # an inconclusive claim says what the sample could detect; a settled one does not
    p = default["planning"]
    assert declared["planning"] is None and p["rule"] == "hoeffding" and p["observed_tie_rate"] == 216 / 240
    assert p["at_observed_ties"]["detectable_effect"] is None        # Hoeffding: not below 1 − τ = 0.1
    assert p["at_planned_ties"]["tie_rate"] == 0.5 and p["at_planned_ties"]["needed_for_effect"]["total"] > 240


def test_margin_is_the_plans_and_may_not_change():
    out = pair({"claim_rule": "betting", "margin": 0.02})
    ni = out["candidates"][0]["non_inferiority"]
    assert out["margin"] == 0.02 and ni["margin"] == 0.02 and ni["rule"] == "betting" and ni["non_inferior"] is True
    assert pair({"claim_rule": "betting", "margin": 0.02}, margin=0.02)["margin"] == 0.02
    with pytest.raises(InvalidInput) as exc:
        pair({"claim_rule": "betting", "margin": 0.02}, margin=0.05)
    assert exc.value.code == "margin_conflict"


def test_a_stopped_run_is_compared_on_its_measured_prefix():
    order = [CS[i] for i in interleave([b for _, b in CS])]
    later = {c for c, _ in order[100:]}
    stop = {"reason": "settled", "decided_at_cases": 100}
    bp, cp = plan("B", "single", CS), plan("mom", "mom", CS, {"claim_rule": "betting", "early_stop": {}})
    # the candidate stopped after 100 cases of the interleaved order; one later case happened to finish
    done_late = order[150][0]
    c_rows = rows("mom", CS, CAND_OK, pending=later - {done_late})
    out = compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(cp, "stopped_early", stop), c_rows, cp).dump()
    c = out["candidates"][0]
    assert out["cases"] == 100 and out["planned_cases"] == 240 and c["n"] == 100
    assert out["early_stop"]["candidate"] == stop and out["early_stop"]["compared_cases"] == 100
    assert c["intervals"]["hoeffding"]["valid"] is False and "early stop" in c["intervals"]["hoeffding"]["note"]
    design = make_design([b for _, b in order], WEIGHTS)
    expected = betting_interval([int(not BASE_OK[cid]) for cid, _ in order[:100]], design)
    assert c["interval"]["ci"] == expected.ci and c["claim_rule"] == "betting"
    assert out["baseline"]["chosen_on_cases"] == 240                  # the complete baseline run: REP-5 on all
    assert any("stopped early" in x for x in out["limitations"])
    # Hoeffding may not make claims after an early stop; and a stop before any outcome compares nothing
    hp = plan("mom", "mom", CS)
    with pytest.raises(NotComparable) as exc:
        compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(hp, "stopped_early", stop), c_rows, hp)
    assert exc.value.reason == "early_stop_needs_betting"
    nothing = rows("mom", CS, CAND_OK, pending={c for c, _ in CS})
    with pytest.raises(NotComparable) as exc:
        compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(cp, "stopped_early", stop), nothing, cp)
    assert exc.value.reason == "nothing_measured"
    # a pending cell in a run that did not stop early still blocks
    with pytest.raises(NotComparable) as exc:
        compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(cp, "failed"), c_rows, cp)
    assert exc.value.reason == "cell_pending"


def test_the_declared_rule_also_makes_the_primary_claim():
    from srbench.stages.compare.declared import DECLARED, apply_declared

    stats = {"claim_rule": "betting", "primary_benchmarks": ["mmlu-pro"]}
    bp, cp = plan("B", "single", CS), plan("mom", "mom", CS, stats)
    out = apply_declared(compare_reports(report(bp), rows("B", CS, BASE_OK), bp, report(cp),
                                         rows("mom", CS, CAND_OK), cp), DECLARED, cp.statistics).dump()
    p = out["candidates"][0]["primary"]
    # mmlu-pro alone: 20 wins in 200 cases, in their own (plan) order, weight 1
    m = [c for c, b in CS if b == "mmlu-pro"]
    expected = betting_interval([int(not BASE_OK[c]) for c in m], make_design(["mmlu-pro"] * 200, WEIGHTS))
    assert p["claim_rule"] == "betting" and p["interval"]["ci"] == expected.ci
    assert p["claim"] == "improvement" and p["hoeffding_interval"]["ci"][0] < 0       # Hoeffding: r = 0.192 > 0.1


def test_statistics_leave_defaults_out_so_older_plans_hash_the_same():
    from srbench.schemas.plan import Statistics
    from srbench.stages.stats.stopping import statistics_of

    # the form a plan declaring only a margin had before claim_rule, planning and early_stop existed
    assert Statistics.model_validate({"margin": 0.02}).model_dump(mode="json") == {"margin": 0.02,
                                                                                  "primary_benchmarks": None}
    full = Statistics.model_validate({"claim_rule": "betting", "early_stop": {}}).model_dump(mode="json")
    assert full["claim_rule"] == "betting" and full["early_stop"] == {"baseline_run": None} and "planning" not in full
    assert statistics_of({}).dump()["planning"] == {"effect": 0.05, "tie_rate": 0.5, "power": 0.8}
    assert statistics_of({"statistics": {"margin": 0.02}}).claim_rule == "hoeffding"


def test_an_inconclusive_claim_of_a_new_plan_is_sized_per_benchmark():
    # issue 43 (item 7): the planning of an inconclusive claim gives per-benchmark sizes (as `sr-bench plan` does),
    # capped at the cases each pinned source holds, not only one scale of every benchmark; a plan from before
    # issue 28 (no baseline_selection) keeps its stored comparison: no sizes
    new = pair({"claim_rule": "hoeffding", "baseline_selection": "adjusted"})["candidates"][0]
    assert new["claim"] == "inconclusive"
    counts = {"gpqa-diamond": 40, "mmlu-pro": 200}
    available = {b: n for b in counts if (n := source_tasks(b)) is not None}
    for key in ("at_observed_ties", "at_planned_ties"):
        at = new["planning"][key]
        sized = at["sized_for_effect"]
        assert at["singles"] == 1 and sized is not None
        assert sized == sizes_needed("hoeffding", counts, WEIGHTS, at["tie_rate"], at["effect"], singles=1,
                                     available=available).model_dump(mode="json")
    # one scale asks for 1,392 GPQA Diamond cases at the observed 90 % ties; its source holds 198, and no sizes
    # within the sources reach 80 % power at +5 points: the answer says so rather than an impossible size
    at = new["planning"]["at_observed_ties"]
    assert at["needed_for_effect"]["per_benchmark"]["gpqa-diamond"] > source_tasks("gpqa-diamond") == 198
    assert not at["sized_for_effect"]["reached"] and at["sized_for_effect"]["at_available"] == sorted(counts)
    line = inconclusive_lines({"candidates": [new]})[0]
    assert "more cases than the pinned sources hold (all 12230 of them" in line and "gpqa-diamond 198*" in line, line
    old = pair()["candidates"][0]["planning"]
    assert "sized_for_effect" not in old["at_observed_ties"] and "sized_for_effect" not in old["at_planned_ties"]
    assert "pinned sources" not in inconclusive_lines({"candidates": [pair()["candidates"][0]]})[0]
    # where sizes within the sources reach the power, the line gives them (betting, 90 % ties, +8 points)
    reach = with_sizes(power_plan(counts, WEIGHTS, rule="betting", tie_rate=0.9, effect=0.08, singles=1), counts,
                       WEIGHTS, available, None).model_dump(mode="json")
    sized = reach["sized_for_effect"]
    assert sized["reached"] and needed_text(reach) == (
        f"about {sized['total']} cases, each benchmark sized for its weight (cases per benchmark: gpqa-diamond "
        f"{sized['per_benchmark']['gpqa-diamond']}, mmlu-pro {sized['per_benchmark']['mmlu-pro']}; * = all its source "
        "holds)")
