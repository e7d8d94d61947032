"""What a comparison must say beside its numbers (a pure post-step of `compare_reports`, issue 12).

- ``published``: per candidate and benchmark, sr-bench's accuracy and the published rule's figure
  for the candidate and the baseline, from the two reports' benchmark rows (no model call).
- Self-comparison: comparing a run with itself lists every target as a candidate, the baseline
  included; that row (Δ = 0 by construction) is dropped and a limitation says so.
- Evidence: a candidate MoM whose pinned ``config_hash`` was not confirmed by evidence in its report
  (``config_hash_evidence.confirmed`` false) can never be called an improvement or non-inferior:
  an ``improvement`` claim becomes ``blocked`` (the interval's verdict kept as ``interval_claim``), a
  non-inferiority verdict becomes null (kept as ``interval_non_inferior``), and a limitation names it.
- Detectability: for an inconclusive claim, the half-width r of the Hoeffding interval and the
  cases per benchmark that would make a difference of the observed size |Δ| detectable by the same
  formula. With n cases in each of the B benchmarks present and renormalised weights w_b,
  r(n) = √(2·ln(2/α)·Σ_b w_b²/n), so |Δ| > r(n) ⇔ n > 2·ln(2/α)·Σ_b w_b² / Δ²; the report gives the
  smallest such integer n (none when Δ = 0: no sample size makes a zero difference detectable).
"""

from __future__ import annotations

import math

from srbench.schemas.comparison import Aggregation, Candidate, Comparison
from srbench.schemas.comparison_claims import Detectability, MissingEvidence
from srbench.schemas.comparison_inputs import ComparedReport, PublishedFigure, ReportTarget
from srbench.schemas.comparison_published import PublishedRow, PublishedRules
from srbench.schemas.report_sections import ConfigHashEvidence

BLOCKED = "blocked"


def _rules(report: ComparedReport, target: str) -> dict[str, PublishedRules]:
    """Per benchmark of `target` in `report`: sr-bench's score and the published rule's figure."""
    out = {}
    for row in report.benchmarks:
        if row.target_id != target:
            continue
        pub = row.published or PublishedFigure()
        out[row.benchmark] = PublishedRules(
            sr_bench_rule=row.sr_bench_rule, sr_bench_accuracy=row.accuracy, published_rule=pub.rule,
            published_metric=pub.metric, published=pub.score, graded_differently=pub.graded_differently,
            reason=pub.reason, note=pub.note)
    return out


def published_side_by_side(cmp: Comparison, baseline: ComparedReport, candidate: ComparedReport) -> list[PublishedRow]:
    """Per candidate and benchmark: both rules for the candidate and for the baseline target, read
    from the two reports' benchmark rows (the same stored answers; no model call)."""
    base = _rules(baseline, cmp.baseline.target_id)
    return [PublishedRow(candidate=c.target_id, benchmark=b, candidate_rules=rules, baseline_rules=base.get(b))
            for c in cmp.candidates for b, rules in sorted(_rules(candidate, c.target_id).items())]


def hoeffding_detectability(cmp: Comparison, c: Candidate, alpha: float = 0.05) -> Detectability:
    """Half-width and the cases per benchmark that make |Δ| detectable (module docstring formula)."""
    benches = [b.benchmark for b in c.benchmarks]
    weights = {b: float(cmp.benchmark_weights[b]) for b in benches}
    total = sum(weights.values())
    w = {b: v / total for b, v in weights.items()}
    n = {b.benchmark: b.n for b in c.benchmarks}
    k = 2.0 * math.log(2.0 / alpha)
    radius = math.sqrt(k * sum(w[b] ** 2 / n[b] for b in benches))
    delta = abs(float(c.delta))
    common = {"half_width": radius, "observed_delta": float(c.delta), "alpha": alpha, "cases_now": n,
              "rule": "weighted-paired-hoeffding, equal n per benchmark"}
    if delta == 0:
        return Detectability(**common, cases_per_benchmark=None, total_cases=None,
                             note="no difference was observed: no number of cases makes a zero difference detectable")
    need = k * sum(v * v for v in w.values()) / (delta * delta)
    per = math.floor(need) + 1
    return Detectability(**common, cases_per_benchmark=per, total_cases=per * len(benches),
                         note=f"with {per} cases in each of the {len(benches)} benchmark(s) a difference of "
                              f"{delta:.3f} would exceed the Hoeffding half-width (if it held up)")


Evidence = ConfigHashEvidence | MissingEvidence


def _evidence(t: ReportTarget) -> Evidence | None:
    """A target's config-hash evidence; a router in a report made before evidence was recorded has none,
    which is not a confirmation."""
    if "config_hash_evidence" not in t.model_fields_set and t.kind == "mom":
        return MissingEvidence(pinned=None, confirmed=False, reason="the report records no config-hash evidence")
    return t.config_hash_evidence


def _blocked(c: Candidate, ev: Evidence) -> Candidate:
    """An unconfirmed router: no improvement, no non-inferiority (the interval's verdicts kept beside)."""
    if c.claim == "improvement":
        c = c.model_copy(update={"interval_claim": c.claim, "claim": BLOCKED})
    p = c.primary
    if p is not None and p.claim == "improvement":
        p = p.model_copy(update={"interval_claim": "improvement", "claim": BLOCKED})
    if p is not None and p.non_inferior:
        p = p.model_copy(update={"interval_non_inferior": True, "non_inferior": None})
    ni = c.non_inferiority
    if ni.non_inferior:
        ni = ni.model_copy(update={"interval_non_inferior": True, "non_inferior": None})
    ni = ni.model_copy(update={"blocked": f"config_hash unconfirmed: {ev.reason}"})
    return c.model_copy(update={"non_inferiority": ni} if p is c.primary else {"non_inferiority": ni, "primary": p})


def _annotated(cmp: Comparison, c: Candidate, ev: Evidence | None, extra: list[str]) -> Candidate:
    """One candidate with its evidence, blocked if unconfirmed, and an inconclusive claim explained."""
    said = c.claim
    c = c.model_copy(update={"config_hash_evidence": ev})
    if ev is not None and not ev.confirmed:
        c = _blocked(c, ev)
        extra.append(f"Candidate {c.target_id}: its pinned config_hash {ev.pinned} was not confirmed "
                     f"by evidence ({ev.reason}); no improvement or non-inferiority is claimed for it "
                     f"(the interval alone says {said}).")
    if c.claim == "inconclusive" and c.claim_rule == "hoeffding":    # betting's is the candidate's `planning`
        c = c.model_copy(update={"detectability": hoeffding_detectability(cmp, c)})
    return c


def annotate(cmp: Comparison, baseline: ComparedReport, candidate: ComparedReport) -> Comparison:
    """Add the published figures, drop a self-comparison, block unconfirmed claims, explain
    inconclusive ones. Returns a new comparison."""
    extra: list[str] = []
    candidates = cmp.candidates
    same_run = baseline.run_id is not None and baseline.run_id == candidate.run_id
    if same_run:
        best = cmp.baseline.target_id
        candidates = [c for c in candidates if c.target_id != best]
        if len(candidates) != len(cmp.candidates):
            extra.append(f"Baseline and candidate are the same run: the baseline target {best} is not compared "
                         "with itself (that difference is zero by construction).")
    evidence = {t.target_id: _evidence(t) for t in (candidate.summary.targets if candidate.summary else [])}
    candidates = [_annotated(cmp, c, evidence.get(c.target_id), extra) for c in candidates]
    cmp = cmp.model_copy(update={"candidates": candidates})
    return cmp.model_copy(update={
        "published": published_side_by_side(cmp, baseline, candidate),
        "aggregation": Aggregation(
            quality="macro: weighted mean of per-benchmark accuracies (REP-4 weights renormalised over the "
                    "benchmarks present)",
            micro_delta="micro: mean of the per-case differences, every case weighted equally"),
        "limitations": [*cmp.limitations, *extra]})
