"""What a frozen plan will send and an upper bound of what it may cost, before anything is sent (UI-2).

Requests: one subject request per planned cell (a MoM target may make up to `max_inference_calls`
inference calls behind it), plus one judge request per cell of a judged benchmark (HLE, SimpleQA
Verified: the pinned judge of `benchmark_options`). A benchmark whose cells are conversations
(`multi_call`: agents, user simulators, several attempts) sends at least one request per cell; how
many depends on the conversation, so those cells are counted apart and their cost is not bounded
here (the run's `max_cost_usd` still stops them).

Upper cost per request: the budget's own reservation formula (`targets.pricing.reservation_usd`) on
the request sr-bench will send — prompt tokens ≤ request bytes + 64 per message + 256, output tokens
≤ the request's max_tokens, every token at the highest rate of the models it may be priced at. A
judge's prompt holds the subject's answer, unknown in advance: it is bounded by `max_output_chars`
(one token per character at most). A target without prices has an unknown bound (null), never 0.
The figures are an estimate from the pinned prices, not a bill and not a provider-enforced cap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.cas.digest import canonical_json
from srbench.schemas.dataset import Case
from srbench.schemas.estimate import EstimateRow, PlanEstimate, RoleCosts, RoleCounts
from srbench.schemas.generation import GenerationParams
from srbench.schemas.plan import Limits, Plan
from srbench.schemas.target import Target
from srbench.targets.outcome import body_max_tokens, build_body
from srbench.targets.pricing import reservation_usd

BASIS = ("upper bound per request = max_inference_calls × (prompt-byte bound × highest prompt-token rate + "
         "max_tokens × highest output rate) / 10⁶ (the budget's reservation formula); a judge prompt counts the "
         "answer at max_output_chars")

__all__ = ["plan_estimate", "cost_per_case"]


def _upper(target: Target, params: GenerationParams, messages: Sequence[Mapping[str, JsonValue]], limits: Limits,
           extra_bytes: int = 0) -> float | None:
    if not target.prices:
        return None
    body = build_body(target.model, messages, params.body(), {})
    return reservation_usd(body_bytes=len(canonical_json(body)) + extra_bytes, message_count=len(messages),
                           max_tokens=body_max_tokens(body, limits.max_output_tokens),
                           max_output_chars=limits.max_output_chars, prices=target.prices,
                           max_inference_calls=target.max_inference_calls or 1)


def _add(total: float | None, part: float | None) -> float | None:
    return None if total is None or part is None else total + part


@dataclass
class _Tally:
    """One target's counts in one role while the cells are counted."""

    target: Target
    role: Literal["subject", "judge"]
    requests: int = 0
    inference_calls_upper: int = 0
    conversation_cells: int = 0
    upper_cost_usd: float | None = 0.0

    def row(self, mode: str) -> EstimateRow:
        cost = self.upper_cost_usd if mode == "live" else (0.0 if mode == "replay" else None)
        return EstimateRow(target_id=self.target.id, kind=self.target.kind, model=self.target.model,
                           role=self.role, requests=self.requests, inference_calls_upper=self.inference_calls_upper,
                           conversation_cells=self.conversation_cells, upper_cost_usd=cost,
                           priced=bool(self.target.prices))


def _tallies(plan: Plan, cases: Iterable[Case], per_benchmark: dict[str, float | None] | None = None) -> list[_Tally]:
    """Count every planned cell (and its judge call) per target and role; `per_benchmark`, when given, gathers each
    benchmark's upper cost (None once a cell of it has no bound)."""
    limits = plan.limits
    by_case = {c.id: c for c in cases}
    targets = {pt.target.id: (pt.target, pt.effective_params) for pt in plan.targets}
    aux = {tid: (pt.target, pt.effective_params) for tid, pt in plan.auxiliary_targets.items()}
    options = plan.benchmark_options
    judge_for = {b: o.judge for b, o in options.items() if o.judge}
    pairs = ([(p[0], p[1]) for p in plan.execution_cells] if plan.execution_cells is not None
             else [(cid, tid) for cid in by_case for tid in targets])
    rows: dict[tuple[str, str], _Tally] = {}

    def row(tid: str, role: Literal["subject", "judge"], target: Target) -> _Tally:
        return rows.setdefault((role, tid), _Tally(target, role))
    live = plan.mode == "live"
    for cid, tid in pairs:
        case, (target, params) = by_case[cid], targets[tid]
        bench = get_benchmark(case.benchmark)
        r = row(tid, "subject", target)
        r.requests += 1
        msgs = [m.model_dump() for m in case.messages]
        if getattr(bench, "multi_call", False) and live:
            r.conversation_cells += 1
            r.upper_cost_usd = None
            _gather(per_benchmark, case.benchmark, None)
            continue
        r.inference_calls_upper += (target.max_inference_calls or 1) if live else 0
        if not live:                 # preview asks the router only; replay calls nothing
            continue
        cell = _upper(target, params, msgs, limits)
        r.upper_cost_usd = _add(r.upper_cost_usd, cell)
        _gather(per_benchmark, case.benchmark, cell)
        judge_id = judge_for.get(case.benchmark)
        if judge_id is None or judge_id not in aux:
            continue
        judge, jparams = aux[judge_id]
        jmsgs = bench.judge_messages(case, "x", options[case.benchmark].grader_version)
        j = row(judge_id, "judge", judge)
        j.requests += 1
        j.inference_calls_upper += 1
        judged = _upper(judge, jparams, jmsgs, limits, extra_bytes=limits.max_output_chars)
        j.upper_cost_usd = _add(j.upper_cost_usd, judged)
        _gather(per_benchmark, case.benchmark, judged)
    return sorted(rows.values(), key=lambda x: (x.role != "subject", x.target.id))


def _gather(per_benchmark: dict[str, float | None] | None, benchmark: str, cost: float | None) -> None:
    if per_benchmark is not None:
        per_benchmark[benchmark] = _add(per_benchmark.get(benchmark, 0.0), cost)


def cost_per_case(plan: Plan, cases: Sequence[Case]) -> dict[str, float] | None:
    """Each benchmark's upper cost per case (every planned cell of a case and its judge call, by the formula above),
    for sizing by cost (stats/sizing.py); None unless the plan is live and every benchmark's cost is bounded and
    positive (a conversation benchmark's never is)."""
    if plan.mode != "live":
        return None
    totals: dict[str, float | None] = {}
    _tallies(plan, cases, totals)
    counts: dict[str, int] = {}
    for case in cases:
        counts[case.benchmark] = counts.get(case.benchmark, 0) + 1
    out = {}
    for b, n in counts.items():
        total = totals.get(b)
        if total is None or total <= 0:
            return None
        out[b] = total / n
    return out


def _cost(rows: list[EstimateRow]) -> float | None:
    cost: float | None = 0.0
    for x in rows:
        cost = _add(cost, x.upper_cost_usd)
    return cost


def plan_estimate(plan: Plan, cases: Iterable[Case]) -> PlanEstimate:
    """Requests by role and target and the upper cost estimate of `plan` (module docstring)."""
    out_rows = [t.row(plan.mode) for t in _tallies(plan, cases)]
    subject = [x for x in out_rows if x.role == "subject"]
    judge = [x for x in out_rows if x.role == "judge"]
    s_req, j_req = sum(x.requests for x in subject), sum(x.requests for x in judge)
    s_cost, j_cost = _cost(subject), _cost(judge)
    conv = sum(x.conversation_cells for x in out_rows)
    notes = []
    if conv:
        notes.append(f"{conv} cell(s) are conversations (several requests each, as the conversation goes): "
                     "they are counted once and their cost is not bounded here; limits.max_cost_usd still stops them")
    unpriced = sorted({x.target_id for x in out_rows if not x.priced})
    if unpriced and plan.mode == "live":
        notes.append(f"no prices pinned for {', '.join(unpriced)}: no upper bound (null, never 0)")
    if plan.mode == "preview":
        notes.append("preview: the router is asked for its route only (no inference, no judge)")
    return PlanEstimate(
        requests=RoleCounts(subject=s_req, judge=j_req, total=s_req + j_req),
        inference_calls_upper=sum(x.inference_calls_upper for x in out_rows), conversation_cells=conv,
        upper_cost_usd=RoleCosts(subject=s_cost, judge=j_cost, total=_add(s_cost, j_cost)),
        targets=out_rows, basis=BASIS, notes=notes,
        note="an upper estimate from the pinned prices, not a bill and not a provider-enforced cap")
