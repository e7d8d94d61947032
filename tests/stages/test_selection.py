"""Issue 28: claims with power by default, valid when the baseline is the strongest of K singles measured
on the same cases. New plans record `claim_rule: betting` and `baseline_selection: adjusted`; plans frozen
before keep their rule and reproduce their paired sections and comparisons digit for digit (pinned)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from srbench.schemas.plan import Manifest, Plan, Statistics
from srbench.simulate.paired import profile_design, simulate_selection
from srbench.stages.compare.build import compare_reports
from srbench.stages.compare.selection import at_alpha, decide_selected
from srbench.stages.plan.identity import content_digest
from srbench.stages.report.in_run import paired_in_run
from srbench.stages.stats.betting import betting_interval, interleave, make_design
from srbench.stages.stats.power import power_at, power_plan
from srbench.stages.stats.stopping import decide, statistics_of

PRICE = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25, "output": 4.0}
WEIGHTS = {"mmlu-pro": 10, "gpqa-diamond": 15}
CS = [(f"m{i}", "mmlu-pro") for i in range(120)] + [(f"g{i}", "gpqa-diamond") for i in range(30)]
TARGETS = [("s1", "single"), ("s2", "single"), ("s3", "single"), ("mom", "mom")]
STANDARD = profile_design("standard")


def frozen_plan(stats: dict[str, Any] | None, targets: list[tuple[str, str]] = TARGETS) -> dict[str, Any]:
    """A frozen plan as stored before issue 28 (`stats` None: no statistics block)."""
    out = {"kind": "plan", "version": "sr-bench-1.0", "name": "old", "mode": "live", "profile": "standard",
           "seed": 1, "cost_policy": "require_priced",
           "dataset": {"sha256": "0" * 64, "object": "b3:" + "0" * 64, "case_count": len(CS), "benchmarks": sorted(WEIGHTS), "split": "holdout"},
           "case_sha256": "c" * 64,
           "targets": [{"target": {"id": t, "kind": k, "base_url": "http://x/v1", "model": t, "prices": {t: PRICE}},
                        "effective_params": {}, "registered": True} for t, k in targets],
           "sampling": {}, "limits": {}, "benchmark_weights": dict(WEIGHTS), "adapter_versions": {},
           "grader_versions": {}, "total": len(CS) * len(targets), "plan_sha256": "p" * 64}
    if stats is not None:
        out["statistics"] = stats
    return out


def seeded_rows(targets: list[tuple[str, str]] = TARGETS) -> list[dict[str, Any]]:
    rng = random.Random(28)
    acc = {"s1": 0.6, "s2": 0.6, "s3": 0.55, "mom": 0.62}
    return [{"cell_id": f"{c}:{t}", "seq": i, "case_id": c, "target_id": t, "benchmark": b, "state": "completed",
             "correct": rng.random() < acc[t], "cost_usd": 0.01, "cache_neutral_cost_usd": 0.01, "usage": None,
             "latency_s": 1.0, "ttft_s": 0.1}
            for t, _ in targets for i, (c, b) in enumerate(CS)]


def stub(plan: Plan) -> dict[str, Any]:
    return {"kind": "report", "run_id": "run-old", "status": "completed", "mode": "live", "early_stop": None,
            "provenance": {"plan_sha256": plan.plan_sha256}}


# content digests computed with the code before issue 28 (main at 86ff068), for the same plans and rows;
# re-taken for issue 41 (compare v6): these plans predate source labels, so on the standard holdout they are now
# a "custom source" (never formal: no pinned source is recorded), with evidence.standing and its reason; the
# diff against the earlier digests is only those fields, the label and the non-inferiority it withholds
PINNED = {
    "none": ("6b768370544b066adb173fcabb9658ae5450e9519d04046327bb253bd672e9da",
             "cc7934e8363d70baddd8f65252bd8fe8eb7ff55eabf154d709d7ee7e293c777a"),
    "margin": ("46b71c6e411c860fb67aeb6e23ec55054bb43ece209cbe97176d9eb0732bf86d",
               "13d5719898c021972ac4065fb0a4f8efef0854d90bb3c3a33d57bc47f0e28528"),
    "betting": ("704dfe9be5e5617eae56823684806af9e79974e99625e94a6c7320dd29fafeb6",
                "3fc2f703c88a2ce77fa582a5c423be54e9223fbaea8160b9bb04345bef478eb7"),
}
OLD_STATS = {"none": None, "margin": {"margin": 0.02}, "betting": {"claim_rule": "betting"}}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_old_frozen_plans_reproduce_their_report_and_comparison_digests(name):
    plan, rows = Plan.model_validate(frozen_plan(OLD_STATS[name])), seeded_rows()
    paired = paired_in_run(plan, rows, "completed", "run-old").dump()      # the report's `paired` section
    cmp = compare_reports(stub(plan), rows, plan, stub(plan), rows, plan).dump()
    assert (content_digest(paired), content_digest(cmp)) == PINNED[name]
    assert "selection" not in paired and paired["claim_rule"] == (OLD_STATS[name] or {}).get("claim_rule", "hoeffding")


def test_a_stored_plan_without_the_fields_keeps_its_rule_and_its_digest_while_a_new_one_records_them():
    old = frozen_plan({"margin": 0.02})
    again = Plan.model_validate({k: v for k, v in old.items() if k != "kind"} | {"kind": "plan"}).model_dump(mode="json")
    assert again["statistics"] == {"margin": 0.02, "primary_benchmarks": None}     # nothing added: same hash
    assert "statistics" not in Plan.model_validate(frozen_plan(None)).model_dump(mode="json")
    assert statistics_of(old).claim_rule == "hoeffding" and "baseline_selection" not in statistics_of(old).dump()
    m = {"version": "sr-bench-1.0", "profile": "quick", "seed": 1, "dataset": {"sha256": "a" * 64},
         "targets": [{"id": "x"}]}
    assert Manifest.model_validate(m).statistics == Statistics(claim_rule="betting", baseline_selection="adjusted")
    chosen = Manifest.model_validate(m | {"statistics": {"claim_rule": "hoeffding"}}).statistics
    assert chosen.claim_rule == "hoeffding" and chosen.baseline_selection == "adjusted"
    assert Manifest.model_validate(m | {"statistics": {"early_stop": {}}}).statistics.claim_rule == "betting"


def _order() -> list[str]:
    names = [b for _, b in CS]
    return [names[i] for i in interleave(names)]


def test_a_new_plan_claims_against_every_single_and_names_k_and_the_adjustment():
    plan = Plan.model_validate(frozen_plan({"claim_rule": "betting", "baseline_selection": "adjusted"}))
    rows = seeded_rows()
    paired = paired_in_run(plan, rows, "completed", "run-new").dump()
    c = paired["candidates"][0]
    assert paired["selection"]["k"] == 3 and paired["selection"]["singles"] == ["s1", "s2", "s3"]
    assert c["selection"]["adjusted"] and "Bonferroni" in c["selection"]["adjustment"]
    assert "K = 3" in paired["limitations"][0]
    # by hand: the lower bound at α against each single, the upper at α/3, the smallest of each
    by = {t: {r["case_id"]: r for r in rows if r["target_id"] == t} for t, _ in TARGETS}
    order = [CS[i][0] for i in interleave([b for _, b in CS])]             # analysis order
    design = make_design(_order(), WEIGHTS)
    lows, highs = [], []
    for s in ("s1", "s2", "s3"):
        d = [int(by["mom"][x]["correct"]) - int(by[s][x]["correct"]) for x in order]
        lows.append(betting_interval(d, design).ci[0])
        highs.append(betting_interval(d, at_alpha(design, 0.05 / 3)).ci[1])
    assert c["interval"]["ci"] == [min(lows), min(highs)] and c["interval"]["makes_claim"] is True
    assert c["intervals"]["betting"]["makes_claim"] is False                # the plain one, against s2 alone
    assert c["intervals"]["betting"]["ci"][1] < c["interval"]["ci"][1]     # the adjusted one is wider
    assert "seed's conservative interval" in c["intervals"]["hoeffding"]["label"]
    assert c["planning"]["at_planned_ties"]["singles"] == 3


def test_a_baseline_fixed_in_advance_is_not_adjusted():
    one = [("s1", "single"), ("mom", "mom")]
    plan = Plan.model_validate(frozen_plan({"claim_rule": "betting", "baseline_selection": "adjusted"}, one))
    c = paired_in_run(plan, seeded_rows(one), "completed", "run-new").dump()["candidates"][0]
    assert c["selection"] == {"k": 1, "singles": ["s1"], "rule": "betting", "adjusted": False,
                              "adjustment": c["selection"]["adjustment"], "estimand": None}
    assert c["interval"] == c["intervals"]["betting"]
    assert c["interval"]["makes_claim"] is True


def test_early_stopping_decides_on_the_same_adjusted_bounds():
    design = make_design(_order(), WEIGHTS)
    rng = random.Random(5)
    d = [rng.choice((-1, 0, 0, 1)) for _ in range(90)]
    assert decide_selected([d], design) == decide(d, design)                # K = 1: the old rule exactly
    ds = [d, [rng.choice((-1, 0, 1)) for _ in range(90)], [1] * 90]
    out = decide_selected(ds, design, margin=0.05)
    # every single bounds the claim: the lower side is the smallest, the upper side the smallest at α/3
    assert out.lower <= min(decide(x, design, 0.05).lower for x in ds) + 1e-12
    assert out.upper <= decide(ds[0], at_alpha(design, 0.05 / 3), 0.05).upper + 1e-12


def test_aa_false_regression_stays_below_2_5_percent_with_ten_equal_singles():
    # the router and K = 10 equally strong singles (half the pairs tie): the single that measured strongest
    # is the luckiest, so the unadjusted claim calls a false regression well above 2.5 %
    out = simulate_selection(STANDARD, singles=10, tie_rate=0.5, delta=0.0, reps=300, seed=28, looks=200)
    assert out["adjusted"]["regression"] <= 0.025 and out["adjusted"]["improvement"] <= 0.025, out
    assert out["unadjusted"]["regression"] > 0.025, out


def test_power_for_five_points_at_90_percent_ties_with_three_equal_singles():
    out = simulate_selection(STANDARD, singles=3, tie_rate=0.9, delta=0.05, reps=600, seed=28, looks=200)
    assert out["adjusted"]["improvement"] >= 0.5, out


def test_planning_accounts_for_the_running_intersection_and_for_k():
    counts = {b: int(n) for b, n in zip(STANDARD.names, STANDARD.counts, strict=True)}
    weights = dict(zip(STANDARD.names, STANDARD.weights, strict=True))
    terminal = power_at("betting", counts, weights, 0.9, 0.05)
    running = [power_at("betting", counts, weights, 0.9, 0.05, singles=k) for k in (1, 3, 10)]
    assert running[0] > terminal and running[0] > running[1] > running[2]
    assert 0.5 < running[1] < 0.7          # simulated: 52-61 % (the two tests above, every-prefix runs)
    old = power_plan(counts, weights, rule="betting", tie_rate=0.9, effect=0.05)
    new = power_plan(counts, weights, rule="betting", tie_rate=0.9, effect=0.05, singles=3)
    assert "singles" not in old.dump() and new.singles == 3 and new.model and "running intersection" in new.model
    one = power_plan(counts, weights, rule="betting", tie_rate=0.9, effect=0.05, singles=1).needed_for_effect
    assert new.needed_for_effect and one and new.needed_for_effect.total > one.total


def test_a_new_hoeffding_plan_is_adjusted_the_same_way_and_so_is_its_primary_claim():
    from srbench.stages.compare.declared import DECLARED, apply_declared
    from srbench.stages.stats.paired import weighted_hoeffding

    stats = {"claim_rule": "hoeffding", "baseline_selection": "adjusted", "primary_benchmarks": ["mmlu-pro"]}
    plan, rows = Plan.model_validate(frozen_plan(stats)), seeded_rows()
    model = compare_reports(stub(plan), rows, plan, stub(plan), rows, plan)
    cmp = model.dump()
    c = next(x for x in cmp["candidates"] if x["target_id"] == "mom")
    by = {t: {r["case_id"]: r for r in rows if r["target_id"] == t} for t, _ in TARGETS}

    def groups(s: str, only: str | None = None) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for case, bench in CS:
            if only in (None, bench):
                out.setdefault(bench, []).append(int(by["mom"][case]["correct"]) - int(by[s][case]["correct"]))
        return out
    singles = ("s1", "s2", "s3")
    lower = min(weighted_hoeffding(groups(s), WEIGHTS).ci[0] for s in singles)
    upper = min(weighted_hoeffding(groups(s), WEIGHTS, 0.05 / 3).ci[1] for s in singles)
    assert c["interval"]["ci"] == pytest.approx([lower, upper], abs=1e-12) and c["interval"]["method"].endswith("hoeffding")
    declared = apply_declared(model, DECLARED, plan.statistics).dump()
    p = next(x for x in declared["candidates"] if x["target_id"] == "mom")["primary"]
    mm = {"mmlu-pro": WEIGHTS["mmlu-pro"]}
    assert p["interval"]["selection_adjusted"] and p["unadjusted_interval"]["method"] == "weighted-paired-hoeffding"
    assert p["interval"]["ci"][0] == pytest.approx(min(weighted_hoeffding(groups(s, "mmlu-pro"), mm).ci[0]
                                                       for s in singles), abs=1e-12)
