"""Report rows of multi-call cells (pure helpers of stages/report/build.py).

A conversation record (stages/dispatch/conversations.py) lists every call of the cell with its role
and target. Its row in the report:

- principal figures from the **subject** calls only: ``usage`` (the four buckets summed), ``cost_usd``
  and ``cache_neutral_cost_usd`` (unknown as soon as one subject call's is), ``ttft_s`` of the first
  subject call, ``finish_reason``/``response_model``/``http_status`` of the last one;
- auxiliary costs apart, per role (benchmarks/conversation.py ROLE_COST_FIELDS): ``judge_cost_usd``,
  ``simulator_cost_usd``, ``scaffolding_cost_usd`` (0 when the role made no call, unknown when one of
  its calls' cost is);
- ``tokens_by_role`` (the four buckets per role, null when one call of the role is unmetered),
  ``calls`` and ``calls_by_role`` counts, ``latency_s`` = the sum of every call's duration;
- for a router (MoM) target ``turn_models``: the model its router chose for each subject turn, and
  ``turn_routing``: each turn's routing fields, so the model mix counts turns wherever rows are read
  (the report and `compare`), never the conversation as one unattributed call;
- ``trajectory`` (the stored trajectory's digest, if any) and the benchmark's own figures of the
  cell (``Benchmark.conversation_row``, e.g. Terminal-Bench's reward).

Every call record is read through `load_call`, so a usage correction (reconcile-usage) and a price
correction (reprice: the plan's targets as priced) apply call by call.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.conversation import ROLE_COST_FIELDS
from srbench.schemas.call import MeteredView, Usage
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.report_sections import RoleTotals
from srbench.schemas.results import ResultRow, TurnRouting
from srbench.schemas.target import Target
from srbench.targets.accounting import CallCost, call_cost

AUX_FIELDS = tuple(f for r, f in ROLE_COST_FIELDS.items() if r != "subject")


def _sum(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def usage_total(usages: Iterable[Usage]) -> Usage:
    """The sum of `usages` (every bucket 0 when none), bucket by bucket: what adding them one by one gives, with one
    model made instead of one per row (a 100k-cell report summed 100k of them per figure)."""
    i = c = w = o = 0
    for u in usages:
        i, c, w, o = i + u.input, c + u.cached_input, w + u.cache_write, o + u.output
    return Usage(input=i, cached_input=c, cache_write=w, output=o)


def _usage(values: list[Usage | None]) -> Usage | None:
    if any(u is None for u in values):
        return None
    return usage_total(u for u in values if u is not None)


_VIEW = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)


class CallTimingsView(BaseModel):
    """What a conversation row reads of a call's timings."""

    model_config = _VIEW
    latency_s: int | float | None = None
    """Request start to end of stream."""
    ttft_s: int | float | None = None
    """Time to first token."""


class CallView(MeteredView):
    """What a report row (a single call's or a conversation's) reads of one stored call record: what pricing
    reads (`MeteredView`, so the record is validated once for both) and its status and timings
    (schemas/call.py `CallRecord`; a view: other fields ignored, numbers kept as stored)."""

    model_config = _VIEW
    http_status: int | None = None
    """The response's HTTP status."""
    sent: bool | None = None
    """False only when no request byte can have left the host (it then costs nothing)."""
    finish_reason: str | None = None
    """The finish reason."""
    timings: CallTimingsView | None = None
    """Its timings."""


def _turn(record: CallView, cost: CallCost | None) -> TurnRouting:
    """One subject turn's routing, with the fields a single call's row carries."""
    a = cost.attribution if cost else None
    return TurnRouting(has_call=True, http_status=record.http_status,
                       selected_model=a.selected_model if a else None, deployment=a.deployment if a else None,
                       inference_calls=a.inference_calls if a else None, retries=a.retries if a else None,
                       fallbacks=a.fallbacks if a else None)


def _by_role(conversation: ConversationRecord, subject: Target, aux: dict[str, Target],
             load_call: Callable[[str], dict[str, JsonValue]]
             ) -> dict[str, list[tuple[CallView, CallCost | None]]]:
    """Every call of the conversation with its cost (None: a target the (re)priced plan no longer names), per role."""
    by_role: dict[str, list[tuple[CallView, CallCost | None]]] = {}
    for call in conversation.calls:
        view = CallView.model_validate(load_call(call.record))     # as stored; pricing reads the same view
        target = subject if call.role == "subject" else aux.get(call.target_id)
        cost = None if target is None else call_cost(target, view)
        if cost is not None and view.sent is False:
            cost.cost_usd = cost.cache_neutral_cost_usd = 0.0
        by_role.setdefault(call.role, []).append((view, cost))
    return by_role


def conversation_row(row: ResultRow, conversation: ConversationRecord, subject: Target, aux: dict[str, Target],
                     load_call: Callable[[str], dict[str, JsonValue]]) -> tuple[ResultRow, list[TurnRouting]]:
    """`row` filled from one conversation record, and one routing entry per subject turn (for the
    target's routing summary), each with the fields a single call's row carries."""
    by_role = _by_role(conversation, subject, aux, load_call)
    subj = by_role.get("subject", [])
    unknown = [c.reason for _, c in subj if c and c.cost_usd is None and c.reason]
    update: dict[str, object] = {
        "conversation": True, "calls": sum(len(v) for v in by_role.values()),
        "calls_by_role": {r: len(v) for r, v in sorted(by_role.items())},
        "usage": _usage([c.usage if c else None for _, c in subj]) if subj else None,
        "cost_usd": _sum([c.cost_usd if c else None for _, c in subj]),
        "cache_neutral_cost_usd": _sum([c.cache_neutral_cost_usd if c else None for _, c in subj]),
        "tokens_by_role": {r: _usage([c.usage if c else None for _, c in v]) for r, v in sorted(by_role.items())},
        "latency_s": float(sum((rec.timings.latency_s if rec.timings else None) or 0.0
                               for v in by_role.values() for rec, _ in v)) if by_role else None,
        "error": conversation.error, "trajectory": conversation.trajectory,
        **get_benchmark(row.benchmark).conversation_row(conversation),
        **{f: _sum([c.cost_usd if c else None for _, c in by_role.get(r, [])])
           for r, f in ROLE_COST_FIELDS.items() if f in AUX_FIELDS},
        "cost_basis": Counter(c.basis for _, c in subj if c).most_common(1)[0][0] if subj else None,
        "cost_unknown_reason": unknown[0] if unknown else None,
        "priced_models": sorted({m for _, c in subj if c for m in c.models}),
        "outside_pool": sorted({m for _, c in subj if c for m in c.outside_pool})}
    turns = [_turn(rec, c) for rec, c in subj]
    if subj:
        first, last = subj[0][0], subj[-1][0]
        update.update(ttft_s=first.timings.ttft_s if first.timings else None, finish_reason=last.finish_reason,
                      response_model=last.response_model, http_status=last.http_status)
    if subject.kind == "mom":
        # the config hash evidence (evidence.py): every turn's header; one missing or differing decides
        seen = [c.attribution.config_hash if c and c.attribution else None for _, c in subj]
        update.update(turn_models=[t.selected_model for t in turns], turn_routing=turns,  # each turn is one routed call
                      router=next((c.attribution.router for _, c in subj if c and c.attribution), None),
                      config_hash_seen=None if None in seen else next(
                          (h for h in seen if h != subject.config_hash), seen[0] if seen else None))
    return row.model_copy(update=update), turns


def _row_roles(r: ResultRow) -> list[tuple[str, int, Usage | None]]:
    """(role, calls, their four buckets or None when unknown) of one row. A conversation row lists its
    roles; a single-call row is its subject call and, when judged, its judge call. A single call that
    may have been billed without a record (ambiguous) adds unknown tokens and no counted call."""
    if r.conversation:
        return [(role, (r.calls_by_role or {}).get(role, 0), usage) for role, usage in (r.tokens_by_role or {}).items()]
    out: list[tuple[str, int, Usage | None]] = []
    if r.has_call:
        out.append(("subject", 1, r.usage))
    elif r.state == "ambiguous" and r.error_class != "ambiguous_judge_dispatch":
        out.append(("subject", 0, None))
    if r.judge_call:
        out.append(("judge", 1, r.judge_usage))
    elif r.error_class == "ambiguous_judge_dispatch":
        out.append(("judge", 0, None))
    return out


def role_totals(rows: list[ResultRow]) -> RoleTotals:
    """Per-target figures over every row, single-call and conversation: the number of recorded calls
    per role and in all (an ambiguous cell's calls are on the calls page only), the four buckets per
    role (null when one call of the role is unmetered or a cell of it may have been billed without a
    record) and, when the target has a conversation row, the auxiliary costs per role."""
    tally = RoleTally()
    for r in rows:
        tally.add(r)
    return tally.totals()


class RoleTally:
    """`role_totals` of rows given one at a time (a report's wire figures read 100k rows without holding
    them: service/wire/figures.py); the same figures, the same float sums in the same order."""

    def __init__(self) -> None:
        self.conversation = False
        self.aux: dict[str, array[float]] = {f: array("d") for f in AUX_FIELDS if f != "judge_cost_usd"}
        self.aux_unknown: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.tokens: dict[str, list[int] | None] = {}     # a role's four buckets, None once one is unknown
        self.unrecorded = False             # a conversation that may have been billed without a record
        self.conversation_roles: set[str] = set()

    def add(self, r: ResultRow) -> None:
        if r.conversation:
            self.conversation = True
            self.conversation_roles.update(r.tokens_by_role or {})
            self.unrecorded = self.unrecorded or (r.state == "ambiguous" and not r.tokens_by_role)
        for f, values in self.aux.items():
            v = getattr(r, f) if f in r.model_fields_set else 0.0
            if v is None:
                self.aux_unknown.add(f)
            else:
                values.append(v)
        for role, n, usage in _row_roles(r):
            self.counts[role] += n
            have = self.tokens.setdefault(role, [0, 0, 0, 0])
            if have is not None:
                if usage is None:
                    self.tokens[role] = None
                else:       # integers added bucket by bucket, as usage_total does
                    have[0] += usage.input
                    have[1] += usage.cached_input
                    have[2] += usage.cache_write
                    have[3] += usage.output

    def totals(self) -> RoleTotals:
        aux: dict[str, float | None] = {}
        if self.conversation:
            aux = {f: None if f in self.aux_unknown else float(sum(v)) for f, v in self.aux.items()}
        tokens: dict[str, Usage | None] = {role: None if b is None else Usage(
            input=b[0], cached_input=b[1], cache_write=b[2], output=b[3]) for role, b in self.tokens.items()}
        if self.unrecorded:
            # a conversation that may have been billed without a record: any of its roles may have been
            for role in {"subject", *self.conversation_roles}:
                tokens[role] = None
        counts = self.counts
        return RoleTotals.model_validate({
            **aux, "tokens_by_role": {role: None if u is None else u.model_dump() for role, u in sorted(tokens.items())},
            "call_count": sum(counts.values()), "calls_by_role": {role: n for role, n in sorted(counts.items()) if n}})
