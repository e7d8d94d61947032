"""Routing diagnostics (issue 43) on a hand-computed 4-case matrix: oracle, headroom, optimality, regret,
confusion, losses and overhead, each figure worked out by hand below."""

from __future__ import annotations

import math
from typing import Any

import pytest
from tests.stages.test_compare import CASES, plan, report, rows_for, target

from srbench.errors import InvalidInput
from srbench.schemas.diagnosis import CaseOutcome, SingleCell
from srbench.schemas.plan import Plan
from srbench.stages.compare.diagnose import diagnose, headroom
from srbench.stages.compare.losses import cost_ratio, optimality
from srbench.stages.stats.basic import wilson

# Singles: cheap (0.01 a case) right on m1, g2; dear (0.10 a case) right on m1, m2, g1.
# The router serves m1, m2, g1 with model-dear (0.10 each; right on m1, g1, wrong on m2) and g2 with model-other
# (0.05, wrong). Weights: mmlu-pro 10 (w 0.4), gpqa-diamond 15 (w 0.6). Strata: m1 math, m2 law.
STRATA = {"m1": "math", "m2": "law"}
SERVED = {"m1": "model-dear", "m2": "model-dear", "g1": "model-dear", "g2": "model-other"}
ROUTER_LATENCY = {"m1": 1.5, "m2": 2.3, "g1": 4.0, "g2": 4.0}     # direct dear: 1.0, 2.0, 3.0 (rows_for: 1 + i)


def _rows(tid: str, outcome: dict[str, bool], cost: float) -> list[dict[str, Any]]:
    rows = rows_for(tid, outcome, cost=cost)
    for r in rows:
        r.update(stratum=STRATA.get(r["case_id"]), call=f"b3:{r['case_id']}-{tid}")
    return rows


def _router_rows() -> list[dict[str, Any]]:
    rows = _rows("mom", {"m1": True, "g1": True}, 0.10)
    for r in rows:
        c = r["case_id"]
        r.update(selected_model=SERVED[c], decision=f"d-{c}", latency_s=ROUTER_LATENCY[c], ttft_s=r["ttft_s"] + 0.05,
                 has_call=True, http_status=200)
        if c == "g2":
            r.update(cost_usd=0.05, cache_neutral_cost_usd=0.05)
    return rows


def _runs() -> tuple[Any, ...]:
    bp = plan([target("cheap"), target("dear")])
    cp = plan([target("mom", "mom")])
    brows = _rows("cheap", {"m1": True, "g2": True}, 0.01) + _rows("dear", {"m1": True, "m2": True, "g1": True}, 0.10)
    return (report(bp, run_id="base"), brows, Plan.model_validate(bp), report(cp, run_id="cand"), _router_rows(),
            Plan.model_validate(cp))


def _headers(call: str) -> dict[str, str]:
    return {"x-vsr-selected-model": call, "content-type": "text/event-stream"}


@pytest.fixture(scope="module")
def out() -> Any:
    return diagnose(*_runs(), headers_of=_headers)


def test_oracle_and_headroom_by_hand(out):
    # oracle: every case has a correct single → Q = 1; the Hoeffding mean radius √(ln(40)/2 · Σ w²/n),
    # Σ w²/n = 0.4²/2 + 0.6²/2 = 0.26
    r = math.sqrt(math.log(40) / 2 * 0.26)
    q = out.oracle.quality
    assert q.estimate == pytest.approx(1.0) and q.radius == pytest.approx(r) and q.ci == pytest.approx([1 - r, 1.0])
    assert out.oracle.cases_no_single_correct == 0
    # cheapest correct: m1 cheap, m2 dear, g1 dear, g2 cheap → 0.01 + 0.10 + 0.10 + 0.01
    assert out.oracle.cheapest_cost_usd == pytest.approx(0.22) and out.oracle.cheapest_picks == {"cheap": 2, "dear": 2}
    # the ceiling on the plane: dear keeps m1, m2, g1 (it is right there), g2 goes to cheap → 0.30 + 0.01
    assert out.oracle.ceiling_cost_usd == pytest.approx(0.31)
    # best single dear: 0.4·1 + 0.6·½ = 0.7; cheap: 0.4·½ + 0.6·½ = 0.5
    assert out.oracle.best_single == "dear" and out.oracle.best_single_quality == pytest.approx(0.7)
    assert [(s.target_id, round(s.quality, 9)) for s in out.singles] == [("cheap", 0.5), ("dear", 0.7)]
    (mom,) = out.routers
    assert mom.quality == pytest.approx(0.5) and mom.cost_usd == pytest.approx(0.35)
    h = mom.headroom     # available 1 − 0.7 = 0.3, gained 0.5 − 0.7 = −0.2 → −66.7 %; gap 1 − 0.5
    assert h.available.estimate == pytest.approx(0.3) and h.gained.estimate == pytest.approx(-0.2)
    assert h.gap_to_oracle.estimate == pytest.approx(0.5) and h.captured_pct == pytest.approx(-200 / 3)
    r2 = math.sqrt(2 * math.log(2 / 0.025) * 0.26)            # REP-6's paired radius at α/2
    assert r2 > 1.3 and h.available.ci == pytest.approx([-1.0, 1.0])   # 0.3 ∓ 1.51, clamped and h.available.alpha == 0.025
    assert h.captured_ci_pct is None and "reaches 0" in (h.reason or "")


def test_optimality_by_hand(out):
    o = out.routers[0].optimality
    assert (o.cases_in_pool, o.cases_elsewhere, o.elsewhere_models, o.elsewhere_cases) == \
        (3, 1, {"model-other": 1}, ["g2"])
    # m1: dear served, cheap is the cheaper correct one → not optimal; m2, g1: dear is the only correct → optimal
    assert (o.cases_with_correct_single, o.optimal_selections) == (3, 2)
    assert o.selection_rate == pytest.approx(2 / 3) and o.selection_ci95 == wilson(2, 3)
    # cost, RouterArena's mean of per-case ratios: m1 0.01/0.10, m2 0.10/0.10, g1 0.10/0.10 → (0.1 + 1 + 1)/3 = 70 %
    # (here equal to the ratio of the sums, 0.21/0.30: test_optimal_cost_is_the_mean_of_per_case_ratios tells them apart)
    assert o.router_cost_usd == pytest.approx(0.30) and o.cheapest_correct_cost_usd == pytest.approx(0.21)
    assert o.cost_ratio_pct == pytest.approx(70.0) and o.cost_ratio_cases == 3
    # accuracy on the pool: router 2/3, oracle 3/3
    assert o.accuracy_ratio_pct == pytest.approx(200 / 3)
    optimal = {c.case_id: c.optimal for c in out.routers[0].cases}
    assert optimal == {"m1": False, "m2": True, "g1": True, "g2": None}


def _case(cid: str, cheap: tuple[bool, float], dear: tuple[bool, float], served: str, router: tuple[bool, float | None]
          ) -> CaseOutcome:
    cells = [SingleCell(target_id="cheap", correct=cheap[0], cost_usd=cheap[1]),
             SingleCell(target_id="dear", correct=dear[0], cost_usd=dear[1])]
    right = [c for c in cells if c.correct]
    best = min(right or cells, key=lambda c: (c.cost_usd or 0.0, c.target_id)).target_id
    return CaseOutcome(case_id=cid, benchmark="mmlu-pro", stratum=None, singles=cells, oracle_correct=bool(right),
                       cheapest_correct=best, router_correct=router[0], router_cost_usd=router[1],
                       served_model=f"model-{served}", served_single=served, optimal=None)


def test_optimal_cost_is_the_mean_of_per_case_ratios():
    # RouterArena (arXiv 2510.00202): Score_i = cost_opt / cost_actual, averaged over the cases with a correct model.
    # a: cheap right (0.01), router served dear (0.10) → 0.1; b: dear the only right (0.30), served dear (0.30) → 1;
    # c: nobody right → not counted; mean (0.1 + 1)/2 = 55 %; the ratio of the sums would be 0.31/0.40 = 77.5 %
    matrix = [_case("a", (True, 0.01), (True, 0.10), "dear", (True, 0.10)),
              _case("b", (False, 0.01), (True, 0.30), "dear", (True, 0.30)),
              _case("c", (False, 0.01), (False, 0.10), "cheap", (False, 0.01))]
    o = optimality(matrix)
    assert o.cases_with_correct_single == 2 and o.cost_ratio_cases == 2
    assert o.cost_ratio_pct == pytest.approx(55.0) and o.router_cost_usd == pytest.approx(0.40)
    assert o.cheapest_correct_cost_usd == pytest.approx(0.31)
    # a router that spent less on a model that failed counts above 1 (d: 0.10 / 0.01 = 10); a router cost of 0 is a
    # ratio of 1 against 0 and has no ratio against a positive cost (left out: 3 of the 4 solvable cases counted)
    more = [*matrix, _case("d", (False, 0.01), (True, 0.10), "cheap", (False, 0.01)),
            _case("e", (True, 0.0), (True, 0.10), "cheap", (True, 0.0)),
            _case("f", (False, 0.01), (True, 0.10), "cheap", (False, 0.0))]
    assert cost_ratio([c for c in more if c.oracle_correct]) == (pytest.approx(100 * (0.1 + 1 + 10 + 1) / 4), 4)
    assert cost_ratio([_case("g", (True, 0.01), (True, 0.10), "dear", (True, None))]) == (None, None)


def test_regret_and_confusion_by_hand(out):
    got = [(g.benchmark, g.stratum, g.n, round(g.quality_points, 6), round(g.dollars or 0, 6))
           for g in out.routers[0].regret]
    assert got == [("gpqa-diamond", None, 2, 50.0, 0.04),      # router 0.10 + 0.05, oracle 0.10 + 0.01
                   ("mmlu-pro", None, 2, 50.0, 0.09),          # router 0.20, oracle 0.01 + 0.10
                   ("mmlu-pro", "law", 1, 100.0, 0.0),         # m2: dear was right at the router's price
                   ("mmlu-pro", "math", 1, 0.0, 0.09)]         # m1: right, but cheap was right for 0.01
    conf = [(c.served, c.cheapest_correct, c.cases) for c in out.routers[0].confusion]
    assert conf == [("model-dear", "model-cheap", 1), ("model-dear", "model-dear", 2), ("model-other", "model-cheap", 1)]


def test_losses_link_their_evidence(out):
    losses = {x.case_id: x for x in out.routers[0].losses}
    assert sorted(losses) == ["g2", "m2"] and out.routers[0].losses_cost_unknown == 0
    m2, g2 = losses["m2"], losses["g2"]
    assert (m2.single.target_id, m2.single.cost_usd, m2.router.cost_usd) == ("dear", 0.10, 0.10)   # equally priced
    assert (g2.single.target_id, g2.router.model) == ("cheap", "model-other")                        # cheaper
    assert m2.router.run_id == "cand" and m2.router.cell_id == "m2:mom" and m2.router.call == "b3:m2-mom"
    assert m2.single.run_id == "base" and m2.single.cell_id == "m2:dear" and m2.single.call == "b3:m2-dear"
    assert m2.decision == "d-m2" and m2.headers == {"x-vsr-selected-model": "b3:m2-mom"}   # routing headers only


def test_overhead_by_hand(out):
    lat, ttft = out.routers[0].latency, out.routers[0].ttft
    # router − dear on m1, m2, g1: 0.5, 0.3, 1.0 (g2 went elsewhere); p95 at rank 1.9 → 0.5 + 0.9·0.5
    assert lat.pairs == 3 and lat.p50_s == pytest.approx(0.5) and lat.p95_s == pytest.approx(0.95)
    assert lat.router_p50_s == pytest.approx(2.3) and lat.direct_p50_s == pytest.approx(2.0)
    assert ttft.pairs == 3 and ttft.p50_s == pytest.approx(0.05) and ttft.p95_s == pytest.approx(0.05)


def test_capture_interval_when_the_headroom_is_clear():
    # 40 cases of one benchmark: best single right on 20, oracle on all 40, router on 30 → captured 50 %
    bench = {f"c{i}": "b" for i in range(40)}
    best = {c: int(i < 20) for i, c in enumerate(bench)}
    router = {c: int(i < 30) for i, c in enumerate(bench)}
    h = headroom({c: 1 for c in bench}, best, router, bench, {"b": 1.0})
    r = math.sqrt(2 * math.log(80) / 40)
    assert h.captured_pct == pytest.approx(50.0)
    lo_a, hi_a, lo_g, hi_g = 0.5 - r, min(1.0, 0.5 + r), 0.25 - r, 0.25 + r
    assert h.available.ci == pytest.approx([lo_a, hi_a]) and h.gained.ci == pytest.approx([lo_g, hi_g])
    assert h.captured_ci_pct == pytest.approx([100 * min(lo_g / lo_a, lo_g / hi_a), 100 * max(hi_g / lo_a, hi_g / hi_a)])


def test_a_run_without_a_router_is_named():
    base = _runs()
    with pytest.raises(InvalidInput) as exc:
        diagnose(*base[:3], *base[:3])
    assert exc.value.code == "no_router" and "\n" not in exc.value.message


def test_one_run_holding_singles_and_router():
    bp = plan([target("cheap"), target("dear"), target("mom", "mom")])
    rows = _runs()[1] + _router_rows()
    one = (report(bp, run_id="one"), rows, Plan.model_validate(bp))
    out = diagnose(*one, *one)
    assert [s.target_id for s in out.singles] == ["cheap", "dear"] and len(out.routers) == 1
    assert out.routers[0].optimality.optimal_selections == 2 and len(CASES) == out.cases
