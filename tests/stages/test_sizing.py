"""Issue 43 (item 7): per-benchmark sizes (stages/stats/sizing.py) instead of one common scale of the planned
sizes — hand-computed small cases (Hoeffding's closed form), the sources' caps, the cost basis, the answer when
no sizes reach the power, and the standard weights' sizes against one common scale."""

from __future__ import annotations

import io
import math

import pytest
from rich.console import Console

from srbench.benchmarks.pins import source_tasks
from srbench.cli.runs import planning_tables
from srbench.errors import InvalidInput
from srbench.simulate.paired import profile_design
from srbench.stages.stats.power import cases_needed, power_at
from srbench.stages.stats.sizing import sizes_needed

# Hoeffding at τ = 0.5, δ = 0.2, 80 % power: P = Φ((δ − √(2L·S))/(σ√S)), σ = √(0.5 − 0.04) = 0.6782330,
# L = ln 40 = 3.6888795, z = Φ⁻¹(0.8) = 0.8416212; P ≥ 0.8 ⇔ S ≤ (δ/(√(2L) + zσ))² = (0.2/3.2870179)² = 0.0037022.
S_MAX = (0.2 / (math.sqrt(2 * math.log(40)) + 0.8416212335729143 * math.sqrt(0.46))) ** 2


def _hoeff(counts, weights, **kw):
    return sizes_needed("hoeffding", counts, weights, 0.5, 0.2, power=0.8, **kw)


def test_equal_weights_by_hand():
    # w = ½, ½: S = ¼/n_a + ¼/n_b. 135 + 135 gives S = 1/270 = 0.0037037 > S_MAX; 135 + 136 gives 0.0036900 ≤ S_MAX
    assert 1 / 270 > S_MAX > 0.25 / 135 + 0.25 / 136
    got = _hoeff({"a": 10, "b": 10}, {"a": 1, "b": 1})
    assert got.reached and got.basis == "fewest cases" and got.per_benchmark == {"a": 135, "b": 136} and got.total == 271
    assert got.power >= 0.8 and got.available == {} and got.at_available == [] and got.upper_cost_usd is None


def test_sizes_follow_the_weights_and_beat_one_common_scale():
    # w = ¾, ¼: n ∝ w gives S = 1/N, so N ≈ 1/S_MAX = 270.1 split 3 : 1; one scale of {100, 100} needs
    # S = 0.625/n ≤ S_MAX, n = 169 each: 338 cases
    weights = {"a": 3, "b": 1}
    got = _hoeff({"a": 100, "b": 100}, weights)
    assert got.reached and abs(got.per_benchmark["a"] - 3 * got.per_benchmark["b"]) <= 3 and got.total <= 272
    common = cases_needed("hoeffding", {"a": 100, "b": 100}, weights, 0.5, 0.2)
    assert common is not None and common.per_benchmark == {"a": 169, "b": 169}
    # and no benchmark can give up one case
    for b in got.per_benchmark:
        fewer = {**got.per_benchmark, b: got.per_benchmark[b] - 1}
        assert power_at("hoeffding", fewer, weights, 0.5, 0.2) < 0.8


def test_a_benchmark_is_never_sized_above_its_source():
    # a capped at 180: 0.5625/180 = 0.003125, so b needs 0.0625/n_b ≤ S_MAX − 0.003125: n_b ≥ 108.3 → 109
    weights = {"a": 3, "b": 1}
    got = _hoeff({"a": 100, "b": 100}, weights, available={"a": 180, "other": 5})
    assert got.reached and got.per_benchmark == {"a": 180, "b": 109}
    assert got.available == {"a": 180} and got.at_available == ["a"]
    # a at 150 (0.00375 > S_MAX alone): nothing reaches 80 %; the answer says so with the largest sizes' power
    none = _hoeff({"a": 100, "b": 100}, weights, available={"a": 150, "b": 500})
    assert not none.reached and none.per_benchmark == {"a": 150, "b": 500} and none.at_available == ["a", "b"]
    assert none.power == pytest.approx(power_at("hoeffding", {"a": 150, "b": 500}, weights, 0.5, 0.2)) and none.power < 0.8


def test_the_cost_basis_sizes_by_weight_over_root_cost():
    # equal weights, a costs 4× b per case: n_a : n_b = 1 : 2, S = ¼/m + ⅛/m ≤ S_MAX → m = 101.3, cost 6m = 607.7
    # (the least: 608 = 4·102 + 200 = 4·101 + 204); the fewest cases' 135 + 136 cost 4·135 + 136 = 676
    assert 0.25 / 102 + 0.25 / 200 <= S_MAX < 0.25 / 102 + 0.25 / 199
    got = _hoeff({"a": 10, "b": 10}, {"a": 1, "b": 1}, cost={"a": 4.0, "b": 1.0})
    assert got.basis == "least upper cost" and got.per_benchmark == {"a": 102, "b": 200} and got.power >= 0.8
    assert got.upper_cost_usd == pytest.approx(608.0)
    with pytest.raises(InvalidInput, match="upper cost per case"):
        _hoeff({"a": 10, "b": 10}, {"a": 1, "b": 1}, cost={"a": 4.0})
    with pytest.raises(InvalidInput, match="available cases"):
        _hoeff({"a": 10, "b": 10}, {"a": 1, "b": 1}, available={"a": 0})


def test_the_pinned_sources_bound_the_sizes():
    assert source_tasks("terminal-bench-2.1") == 89 and source_tasks("gpqa-diamond") == 198
    assert source_tasks("mmlu-pro") == 12_032 and source_tasks("arc-agi-2") is None


def test_standard_weights_need_far_fewer_cases_sized_per_benchmark():
    # the standard profile's weights, +5 points at 90 % ties, K = 1: one common scale needs ~3,400 cases (power steps
    # with Terminal-Bench's 15 and SciCode's 20); sized by weight within the sources ~ 480 (their simulated power:
    # tests/stages/test_planning_power.py test_per_benchmark_sizes_reach_their_planned_power)
    std = profile_design("standard")
    counts = {b: int(n) for b, n in zip(std.names, std.counts, strict=True)}
    weights = dict(zip(std.names, std.weights, strict=True))
    available = {b: n for b in counts if (n := source_tasks(b)) is not None}
    got = sizes_needed("betting", counts, weights, 0.9, 0.05, singles=1, available=available)
    common = cases_needed("betting", counts, weights, 0.9, 0.05, singles=1)
    assert got.reached and common is not None and got.total < common.total / 5 and got.power >= 0.8
    assert all(got.per_benchmark[b] <= n for b, n in available.items())


def test_plan_prints_the_per_benchmark_sizes():
    sized = {"basis": "fewest cases", "reached": True, "per_benchmark": {"a": 135, "t": 89}, "total": 224,
             "power": 0.81, "upper_cost_usd": None, "available": {"t": 89}, "at_available": ["t"]}
    row = {"rule": "betting", "radius_at_zero": 0.1, "detectable_effect": 0.05, "power_at_effect": 0.5,
           "needed_for_effect": None, "margin": None, "power_non_inferiority": None, "needed_for_margin": None,
           "effect": 0.05}
    p = {"assumptions": {"power": 0.8, "tie_rate": 0.9, "effect": 0.05}, "claim_rule": "betting",
         "declared": {**row, "sized_for_effect": sized}, "other": {**row, "rule": "hoeffding",
                                                                   "sized_for_effect": {**sized, "reached": False}},
         "detectable_by_tie_rate": []}
    out = io.StringIO()
    console = Console(file=out, width=200)
    for t in planning_tables(p):
        console.print(t)
    text = out.getvalue()
    assert "per-benchmark sizes (fewest cases" in text and "a 135, t 89*" in text
    assert "224" in text and "not reachable with these sources" in text


def test_a_comparison_sizes_the_same_inputs_once(monkeypatch):
    # compare sizes every inconclusive candidate at its observed and the plan's tie rate (0.35–0.76 s each
    # before); the same inputs again (another candidate, a report refresh) ask no power at all
    from srbench.schemas.plan import Planning
    from srbench.stages.compare import claims
    from srbench.stages.stats import planning, power

    design = profile_design("quick")
    weights = dict(zip(design.names, design.weights, strict=True))
    assumptions = Planning.model_validate({"tie_rate": 0.9, "effect": 0.05, "power": 0.8})
    first = claims._planning(design, weights, "betting", 0.8312, assumptions, 0.02, 3)
    asked = []
    monkeypatch.setattr(power, "_power_at", lambda *a: asked.append(a) or 0.5)
    again = claims._planning(design, weights, "betting", 0.8312, assumptions, 0.02, 3)
    assert again == first and again.sized_for_effect is not None and asked == []
    planning._sized_plan.cache_clear()
    assert claims._planning(design, weights, "betting", 0.8312, assumptions, 0.02, 3) != first and asked


def test_power_at_remembers_and_still_checks_its_inputs():
    counts, weights = {"a": 40, "b": 60}, {"a": 1.0, "b": 2.0}
    once = power_at("betting", counts, weights, 0.9, 0.05, singles=3)
    assert power_at("betting", dict(reversed(counts.items())), weights, 0.9, 0.05, singles=3) == once
    with pytest.raises(InvalidInput, match="benchmark b needs a positive finite weight"):
        power_at("betting", counts, {"a": 1.0}, 0.9, 0.05, singles=3)
    with pytest.raises(InvalidInput, match="unknown claim rule"):
        power_at("bayes", counts, weights, 0.9, 0.05)
