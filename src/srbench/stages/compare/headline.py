""""Does routing pay?" as facts: the one function the service's comparison answer carries them from.

`routing_facts` reads a paired comparison (stages.compare, the stored Comparison model) and states, per router (every candidate when
none is a router), the headline: Δ macro quality with its interval and claim word, the claim in plain
words, formal vs dev, savings in the three scopes or why unknown, the model mix, p50/p95 latency of the
compared cells, and the per-benchmark rows. The service puts them on every comparison answer
(`routing_facts`); the CLI (`report`, `compare`, the demo) prints them and the Dashboard's panel
(dashboard/static/headline.js) renders them, so neither computes a figure of its own.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from srbench.schemas.comparison import Candidate, Comparison, Operations, ScopeSaving

Scope = Literal["principal", "total", "cache_neutral"]
SCOPES: tuple[Scope, ...] = ("principal", "total", "cache_neutral")
CLAIM_TEXT = {
    "improvement": "better than the strongest single model: the whole interval is above zero",
    "regression": "worse than the strongest single model: the whole interval is below zero",
    "inconclusive": "not settled: the interval spans zero, so this sample cannot tell the router from the baseline",
    "blocked": "no claim: the router's pinned config_hash was not confirmed by evidence",
}


class Saving(BaseModel):
    scope: Literal["principal", "total", "cache_neutral"]
    candidate_usd: float | None
    baseline_usd: float | None
    saving_pct: float | None
    saving_usd: float | None = None
    reason: str | None


class BenchmarkRow(BaseModel):
    benchmark: str
    n: int
    candidate_accuracy: float | None
    candidate_ci: list[float] | None
    baseline_accuracy: float | None
    baseline_ci: list[float] | None
    delta: float
    delta_ci: list[float] | None
    wins: int
    losses: int
    ties: int


class RouterFacts(BaseModel):
    router: str
    baseline: str
    baseline_run: str
    same_run: bool
    n: int
    delta: float
    ci: list[float] | None
    rule: str
    selection: str | None = None       # how the claim holds across choosing the baseline (issue 28)
    claim: str
    verdict: str                       # the claim in words (with the half-width when inconclusive)
    non_inferior_margin: float | None = None   # set when the router is non-inferior at that margin
    claim_text: str                    # verdict and non-inferiority together
    evidence: str
    standing_reason: str | None = None   # why formal, dev or custom source (the comparison's evidence.reason)
    profile: str | None = None
    formal: bool
    quality: float | None = None
    baseline_quality: float | None = None
    micro_delta: float | None
    wins: int = 0
    losses: int = 0
    ties: int = 0
    savings: list[Saving]
    model_mix: dict[str, int]
    unattributed_calls: int
    retries: int | None = None        # None: a call did not say
    fallbacks: int | None = None
    router_latency_s: tuple[float | None, float | None]     # (p50, p95) over the compared cells
    baseline_latency_s: tuple[float | None, float | None]
    benchmarks: list[BenchmarkRow]
    config_unconfirmed: str | None     # why the router's pinned config_hash was not confirmed (None: it was)


def _latency(ops: Operations) -> tuple[float | None, float | None]:
    return ops.latency_p50_s, ops.latency_p95_s


def _benchmarks(c: Candidate) -> list[BenchmarkRow]:
    return [BenchmarkRow(
        benchmark=b.benchmark, n=b.n, candidate_accuracy=b.candidate_accuracy, candidate_ci=b.candidate_accuracy_ci95,
        baseline_accuracy=b.baseline_accuracy, baseline_ci=b.baseline_accuracy_ci95, delta=b.delta,
        delta_ci=b.delta_interval.ci, wins=b.wins, losses=b.losses, ties=b.ties) for b in c.benchmarks]


def _verdict(c: Candidate) -> tuple[str, float | None]:
    d = c.detectability
    text = CLAIM_TEXT.get(c.claim, c.claim)
    if c.claim == "inconclusive" and d:
        text += f" (its half-width is ±{d.half_width:.3f})"
    ni = c.non_inferiority
    return text, ni.margin if ni.non_inferior else None


def _saving(scope: Scope, s: ScopeSaving) -> Saving:
    return Saving(scope=scope, candidate_usd=s.candidate_usd, baseline_usd=s.baseline_usd, saving_pct=s.saving_pct,
                  saving_usd=s.saving_usd, reason=s.reason)


def routing_facts(cmp: Comparison) -> list[RouterFacts]:
    """Per router (every candidate when none is a router): the headline facts and per-benchmark rows."""
    ev = cmp.evidence
    out = []
    for c in [c for c in cmp.candidates if c.kind == "mom"] or cmp.candidates:
        verdict, margin = _verdict(c)
        routing, hev, sel = c.routing, c.config_hash_evidence, c.selection
        out.append(RouterFacts(
            router=c.target_id, baseline=cmp.baseline.target_id, baseline_run=cmp.baseline_run.run_id,
            same_run=cmp.baseline_run.run_id == cmp.candidate_run.run_id, n=c.n, delta=c.delta,
            ci=c.interval.ci if c.interval else None, rule=c.claim_rule or cmp.claim_rule or "hoeffding",
            selection=f"adjusted for choosing the strongest of K = {sel.k} singles" if sel and sel.adjusted else None,
            claim=c.claim, verdict=verdict, non_inferior_margin=margin,
            claim_text=verdict + (f"; non-inferior (margin {margin})" if margin is not None else ""),
            evidence=ev.label or "unknown", standing_reason=ev.reason, profile=ev.profile, formal=ev.formal, quality=c.quality,
            baseline_quality=c.baseline_quality, micro_delta=c.micro_delta, wins=c.wins, losses=c.losses,
            ties=c.ties, savings=[_saving(k, getattr(c.savings, k)) for k in SCOPES],
            model_mix=(routing.model_mix if routing else None) or {},
            unattributed_calls=(routing.unattributed_calls if routing else None) or 0,
            retries=routing.retries if routing else None, fallbacks=routing.fallbacks if routing else None,
            router_latency_s=_latency(c.operations.candidate), baseline_latency_s=_latency(c.operations.baseline),
            config_unconfirmed=None if hev is None or hev.confirmed else str(hev.reason),
            benchmarks=_benchmarks(c)))
    return out
