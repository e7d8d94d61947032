"""Margins and primary benchmarks declared before the run (REP-7): declared margin used, a compare-time
margin only post hoc, the primary-set claim by hand."""

from __future__ import annotations

import math

import pytest

from srbench.errors import InvalidInput
from srbench.schemas.comparison import BenchmarkDelta, Candidate, Comparison, Evidence
from srbench.schemas.comparison_claims import NonInferiority, PrimaryHoeffding
from srbench.schemas.plan import Statistics
from srbench.stages.compare.declared import DECLARED, POST_HOC, apply_declared, resolve_margin


def _plan(**stats) -> Statistics | None:
    """A candidate plan's statistics block (None: the plan declares none)."""
    return Statistics(**stats) if stats else None


def test_resolve_margin() -> None:
    assert resolve_margin(None, _plan(margin=0.03)) == (0.03, DECLARED)
    assert resolve_margin(0.03, _plan(margin=0.03)) == (0.03, DECLARED)
    assert resolve_margin(0.05, _plan()) == (0.05, POST_HOC)
    assert resolve_margin(None, _plan()) == (None, None)
    with pytest.raises(InvalidInput) as exc:
        resolve_margin(0.05, _plan(margin=0.03))
    assert exc.value.code == "margin_conflict"


def _cmp(formal: bool, margin: float | None, ni: bool | None) -> Comparison:
    """The fields apply_declared reads, built as models (model_construct: the rest is not needed here)."""
    # mmlu-pro: n 100, Δ +0.10; gpqa-diamond: n 50, Δ −0.02; arc-agi-2: n 10, Δ 0 (weights 10/15/10)
    benches = [BenchmarkDelta.model_construct(benchmark=b, n=n, delta=d)
               for b, n, d in (("mmlu-pro", 100, 0.10), ("gpqa-diamond", 50, -0.02), ("arc-agi-2", 10, 0.0))]
    cand = Candidate.model_construct(target_id="mom", claim_rule="hoeffding", benchmarks=benches,
                                     non_inferiority=NonInferiority.model_construct(margin=margin, non_inferior=ni,
                                                                                    label=None))
    return Comparison.model_construct(margin=margin, evidence=Evidence.model_construct(formal=formal), limitations=[],
                                      benchmark_weights={"mmlu-pro": 10, "gpqa-diamond": 15, "arc-agi-2": 10},
                                      candidates=[cand])


def test_post_hoc_margin_never_claims() -> None:
    out = apply_declared(_cmp(True, 0.05, True), POST_HOC, _plan())
    ni = out.candidates[0].non_inferiority
    assert ni.non_inferior is None and ni.post_hoc_non_inferior is True and ni.label == "post hoc"
    assert out.margin_source == POST_HOC and any("post hoc" in x for x in out.limitations)


def test_primary_claim_by_hand() -> None:
    out = apply_declared(_cmp(True, 0.05, None), DECLARED, _plan(margin=0.05,
                                                                 primary_benchmarks=["gpqa-diamond", "mmlu-pro"]))
    p = out.candidates[0].primary
    assert p is not None and isinstance(p.interval, PrimaryHoeffding)
    # w = 10/25, 15/25 → Δ = 0.4·0.10 + 0.6·(−0.02) = 0.028; r = √(2·ln 40·(0.16/100 + 0.36/50)) = 0.2548
    r = math.sqrt(2 * math.log(40) * (0.16 / 100 + 0.36 / 50))
    assert p.delta == pytest.approx(0.028) and p.interval.radius == pytest.approx(r)
    assert p.interval.ci == pytest.approx([0.028 - r, 0.028 + r])
    assert p.claim == "inconclusive" and p.non_inferior is False        # 0.028 − 0.2548 < −0.05
    assert any("arc-agi-2 are secondary" in x for x in out.limitations)
    dev = apply_declared(_cmp(False, 0.05, None), DECLARED, _plan(margin=0.05, primary_benchmarks=["mmlu-pro"]))
    assert dev.candidates[0].primary is not None
    assert dev.candidates[0].primary.non_inferior is None           # dev evidence: no parity verdict
