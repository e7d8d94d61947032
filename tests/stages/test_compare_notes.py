"""compare_notes: self-comparison dropped, unconfirmed routers never claimed, inconclusive results
explained with the Hoeffding half-width and the cases that would tell (hand-computed values)."""

from __future__ import annotations

import math

from srbench.schemas.comparison import BaselineChoice, BenchmarkDelta, Candidate, Comparison
from srbench.schemas.comparison_claims import NonInferiority
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.stages.compare.notes import annotate, hoeffding_detectability

PROBES = {"probe_before": "not run", "probe_after": "not run", "responses": 3, "responses_with_header": 3,
          "responses_without_header": 0}


def _cmp(claim: str = "inconclusive", ni: bool | None = None, delta: float = -0.25) -> Comparison:
    """The fields annotate reads, built as models (model_construct: the rest is not needed here)."""
    benches = [BenchmarkDelta.model_construct(benchmark="mmlu-pro", n=14),
               BenchmarkDelta.model_construct(benchmark="arc-agi-2", n=2)]
    cand = Candidate.model_construct(target_id="mom", claim=claim, claim_rule="hoeffding", delta=delta,
                                     non_inferiority=NonInferiority.model_construct(margin=0.05, non_inferior=ni),
                                     benchmarks=benches)
    base = Candidate.model_construct(target_id="large", claim="inconclusive", claim_rule="hoeffding", delta=0.0,
                                     non_inferiority=NonInferiority.model_construct(), benchmarks=benches)
    return Comparison.model_construct(baseline=BaselineChoice.model_construct(target_id="large"),
                                      benchmark_weights={"mmlu-pro": 10, "arc-agi-2": 10},
                                      candidates=[base, cand], limitations=[])


def _report(run_id: str, evidence: dict | None, kind: str = "mom") -> ComparedReport:
    t = {"target_id": "mom", "kind": kind}
    if evidence is not ...:
        t["config_hash_evidence"] = evidence
    return ComparedReport.model_validate({"run_id": run_id, "summary": {"targets": [t]}, "benchmarks": []})


def test_detectability_by_hand() -> None:
    d = hoeffding_detectability(_cmp(), _cmp().candidates[1])
    # w = ½, ½; r = √(2·ln 40 · (¼/14 + ¼/2)); n > 2·ln 40 · (¼ + ¼) / 0.25² = 16·ln 40 = 59.02 → 60
    assert math.isclose(d.half_width, math.sqrt(2 * math.log(40) * (0.25 / 14 + 0.25 / 2)))
    assert d.cases_per_benchmark == 60 and d.total_cases == 120
    zero = hoeffding_detectability(_cmp(), _cmp(delta=0.0).candidates[1])
    assert zero.cases_per_benchmark is None and "zero difference" in zero.note


def test_self_comparison_drops_the_baseline_row() -> None:
    out = annotate(_cmp(), _report("run-1", None), _report("run-1", None, kind="single"))
    assert [c.target_id for c in out.candidates] == ["mom"]
    assert any("not compared with itself" in x for x in out.limitations)
    kept = annotate(_cmp(), _report("run-1", None), _report("run-2", None, kind="single"))
    assert len(kept.candidates) == 2


def test_unconfirmed_router_is_never_claimed() -> None:
    ev = {**PROBES, "pinned": "cfg-1", "confirmed": False, "reason": "no preview_url: no probe before or after the run"}
    out = annotate(_cmp("improvement", ni=True, delta=0.9), _report("b", None), _report("c", ev))
    c = out.candidates[1]
    assert c.claim == "blocked" and c.interval_claim == "improvement"
    assert c.non_inferiority.non_inferior is None and c.non_inferiority.interval_non_inferior is True
    assert c.detectability is None and "detectability" not in c.model_fields_set
    assert any("Candidate mom" in x and "no preview_url" in x for x in out.limitations)
    # a regression is still said; an inconclusive result is still explained
    reg = annotate(_cmp("regression"), _report("b", None), _report("c", ev)).candidates[1]
    assert reg.claim == "regression"
    # a router in an old report without any evidence record is not confirmed either
    old = annotate(_cmp("improvement", delta=0.9), _report("b", None), _report("c", ...)).candidates[1]
    assert old.claim == "blocked"
    ok = annotate(_cmp("improvement", delta=0.9), _report("b", None),
                  _report("c", {**PROBES, "pinned": "cfg-1", "confirmed": True, "reason": None})).candidates[1]
    assert ok.claim == "improvement"


def test_detectability_matches_the_paired_interval() -> None:
    from srbench.stages.stats.paired import weighted_hoeffding

    d = hoeffding_detectability(_cmp(), _cmp().candidates[1])
    weights = {"mmlu-pro": 10, "arc-agi-2": 10}
    assert d.cases_per_benchmark is not None
    for n, detectable in ((d.cases_per_benchmark, True), (d.cases_per_benchmark - 1, False)):
        r = weighted_hoeffding({"mmlu-pro": [0] * n, "arc-agi-2": [0] * n}, weights).radius
        assert (r < 0.25) is detectable
