"""Reconcile usage (REP-2): re-derive every call's metering from its retained SSE transcript.

A rule over the run's plan and call records (zero model calls). For each stored call it re-reads
the transcript object (verified against its digest), requires exactly one ``[DONE]`` and a final
finish reason equal to the recorded one, takes the usage of the last event that carries usage,
parses it with the current metering and prices it at the frozen plan prices. A row is
`verified` (same buckets), `changed` (new buckets from the evidence) or `unverifiable` (missing or
conflicting evidence stays unknown). A MoM call is supported only as a proven direct single call,
as its router adapter reads the stored response headers (vLLM Semantic Router:
``x-vsr-inference-call-count: 1`` and no ``x-vsr-model-usage``; LiteLLM: no retry and no fallback):
multi-call costs are never inferred from a final response stream.

``routers`` ({target id: router kind}) re-attributes a MoM target's calls with another adapter, from
the headers stored with every call (zero model calls): e.g. a run planned with the default
``vllm-sr`` against a LiteLLM proxy. The correction records it and reports then price that target's
calls with it. The correction is versioned and content-addressed; the service appends it once
(idempotent) and reports, comparisons and exports then use it. A multi-call cell's conversation
record is reconciled call by call (each row names its ``role`` and ``index``), each call at its
own target's prices; the report applies the corrected buckets call by call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench import TERMINAL_STATUSES
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.call import Usage
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.corrections import PriceCorrection, UsageCorrection, UsageRow
from srbench.schemas.plan import Plan
from srbench.schemas.target import Target
from srbench.stages.derived.facts import CellFacts, RunFacts
from srbench.stages.derived.reprice import priced
from srbench.targets import routers
from srbench.targets.accounting import call_cost
from srbench.targets.metering import UsageError, parse_usage
from srbench.targets.sse import decode_transcript

ACCOUNTING_VERSION = "sr-bench-accounting-v2"
METERING_VERSION = "sr-bench-metering-v1"

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

class ReconciledCall(BaseModel):
    """What reconciliation reads of a stored call record beside its cost (schemas/call.py `CallRecord`; a
    view: other fields ignored, values as stored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    usage: JsonValue = None
    """The recorded four token buckets (None: unmetered)."""
    usage_raw: JsonValue = None
    """The usage object the provider sent, as received."""
    sse: str | None = None
    """Digest of the retained SSE transcript."""
    finish_reason: str | None = None
    """The recorded finish reason."""
    response_model: str | None = None
    """The model the response named."""


CellCalls = tuple[str, str, str, str | None]
"""A cell's (target id, benchmark, call digest, judge call digest)."""


class ReconcileInputs(BaseModel):
    """The rule's inputs (digests): the run's plan, its cells' calls and the price correction it reads."""

    model_config = _FROZEN
    plan: str
    """Digest of the run's frozen plan."""
    calls: dict[str, CellCalls]
    """Per cell with a call: its target, benchmark, call record and judge call record."""
    prices: str | None = None
    """Digest of the run's latest price correction (absent: the plan's prices)."""


class ReconcileParams(BaseModel):
    """The rule's params."""

    model_config = _FROZEN
    metering: str
    """The metering version (METERING_VERSION)."""
    run_id: str
    """The run reconciled."""
    routers: dict[str, str] | None = None
    """{MoM target id: router kind} re-attributing those targets' calls (absent: the planned routers)."""


def _evidence(raw: bytes, record: ReconciledCall) -> tuple[dict[str, JsonValue] | None, str | None]:
    """(usage object, problem) from a transcript (the provider's JSON usage object, as it sent it)."""
    done, usage, finish, model = 0, None, None, None
    for ev in decode_transcript(raw):
        if ev.data.strip() == "[DONE]":
            done += 1
            continue
        try:
            obj = json.loads(ev.data)
        except ValueError:
            return None, "an event is not JSON"
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("usage"), dict):
            usage = obj["usage"]
        model = obj.get("model") or model
        for choice in obj.get("choices") or []:
            if isinstance(choice, dict) and choice.get("finish_reason"):
                finish = choice["finish_reason"]
    if done != 1:
        return None, f"the transcript has {done} [DONE] markers, not exactly one"
    if finish != record.finish_reason:
        return None, f"the transcript's finish reason {finish!r} differs from the recorded {record.finish_reason!r}"
    if record.response_model and model and model != record.response_model:
        return None, "the transcript names another model than the record"
    if usage is None:
        return None, "the transcript carries no usage"
    return usage, None


def _row(store: ObjectStore, target: Target, cell_id: str, role: str, digest: str) -> UsageRow:
    stored = store.get_json(digest)             # as stored: the pricing reads it so (targets/accounting.py)
    record = ReconciledCall.model_validate(stored)
    old = call_cost(target, stored)
    row = UsageRow(cell_id=cell_id, role=role, call=digest, old_usage=record.usage, old_cost_usd=old.cost_usd,
                   new_usage=None, new_cost_usd=None, sse_sha256=None, status="unverifiable", reason=None)
    if target.kind == "mom":
        attr = old.attribution
        assert attr is not None
        row = row.model_copy(update={"router": attr.router, "served_models": attr.served_models(),
                                     "retries": attr.retries, "fallbacks": attr.fallbacks})
        if attr.problem or attr.children is not None or attr.inference_calls != 1 or attr.selected_model is None:
            return row.model_copy(update={"reason": (
                "not a proven direct single call: multi-call costs are never inferred from the final stream"
                + (f" ({attr.problem or attr.unknown_reason})" if attr.problem or attr.unknown_reason else ""))})
    if not record.sse:
        return row.model_copy(update={"reason": "no retained SSE transcript"})
    raw = store.get_bytes(record.sse, verify=True)
    row = row.model_copy(update={"sse_sha256": hashlib.sha256(raw).hexdigest()})
    raw_usage, problem = _evidence(raw, record)
    if problem is None and record.usage_raw is not None and raw_usage != record.usage_raw:
        problem = "the transcript's usage differs from the recorded raw usage (conflicting evidence)"
    if problem is not None:
        return row.model_copy(update={"reason": problem})
    try:
        usage = parse_usage(raw_usage)
    except UsageError as exc:
        return row.model_copy(update={"reason": f"conflicting usage evidence: {exc.message}"})
    if usage is None:
        return row.model_copy(update={"reason": "usage evidence is incomplete"})
    new = call_cost(target, {**stored, "usage": usage.model_dump()})
    return row.model_copy(update={"new_usage": usage.model_dump(), "new_cost_usd": new.cost_usd,
                                  "status": "verified" if record.usage == usage.model_dump() else "changed"})


def _reconcile(store: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
    inputs, params = ReconcileInputs.model_validate(raw_inputs), ReconcileParams.model_validate(raw_params)
    plan = Plan.model_validate(store.get_json(inputs.plan))    # only its targets and judges are read (and priced)
    fix = PriceCorrection.model_validate(store.get_json(inputs.prices)) if inputs.prices else None
    targets = with_routers({pt.target.id: priced(pt.target, fix) for pt in plan.targets}, params.routers)
    aux = {tid: priced(pt.target, fix) for tid, pt in plan.auxiliary_targets.items()}
    judge_for = {b: o.judge for b, o in plan.benchmark_options.items() if o.judge}
    rows: list[UsageRow] = []
    for cell_id, (target_id, benchmark, call, judge_call) in sorted(inputs.calls.items()):
        record = store.get_json(call) if call else None
        if record is not None and record.get("kind") == "conversation":     # every call of it, one by one
            for c in ConversationRecord.model_validate(record).calls:
                target = targets[target_id] if c.role == "subject" else aux[c.target_id]
                rows.append(_row(store, target, cell_id, c.role, c.record).model_copy(update={"index": c.index}))
        elif call:
            rows.append(_row(store, targets[target_id], cell_id, "subject", call))
        if judge_call:
            rows.append(_row(store, aux[judge_for[benchmark]], cell_id, "judge", judge_call))
    count = {s: sum(r.status == s for r in rows) for s in ("verified", "changed", "unverifiable")}
    stored = [r.model_dump(mode="json", exclude_unset=True) for r in rows]
    body = UsageCorrection(
        version=ACCOUNTING_VERSION, metering_version=params.metering, run_id=params.run_id, plan=inputs.plan,
        rows=rows, verified_count=count["verified"], changed_count=count["changed"],
        unverifiable_count=count["unverifiable"],
        old_known_cost_usd=float(sum(r.old_cost_usd for r in rows if r.old_cost_usd is not None)),
        new_known_cost_usd=float(sum((r.new_cost_usd if r.status != "unverifiable" else r.old_cost_usd)
                                     or 0.0 for r in rows)),
        qualified=count["unverifiable"] == 0, routers=dict(sorted(params.routers.items())) if params.routers
        else None, evidence=hashlib.sha256(json.dumps(stored, sort_keys=True).encode()).hexdigest())
    return body.stored()


RECONCILE = Rule("reconcile-usage", ACCOUNTING_VERSION, _reconcile)


def with_routers(targets: dict[str, Target], chosen: dict[str, str] | None) -> dict[str, Target]:
    """`targets` with the router kinds of `chosen` ({target id: router}) in place of the planned ones."""
    return {tid: t.model_copy(update={"router": chosen[tid]}) if chosen and tid in chosen else t
            for tid, t in targets.items()}


def check_routers(plan: Plan, chosen: object) -> dict[str, str]:
    """`chosen` (as given) as {MoM target id: registered router}; InvalidInput naming what is wrong."""
    if chosen is None:
        return {}
    if not isinstance(chosen, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in chosen.items()):
        raise InvalidInput("routers must map target ids to router kinds", code="invalid_routers")
    kinds = {pt.target.id: pt.target.kind for pt in plan.targets}
    for tid, name in chosen.items():
        if kinds.get(tid) != "mom":
            raise InvalidInput(f"routers: {tid!r} is not a MoM target of this run", code="invalid_routers")
        routers.get(name)
    return dict(chosen)


def reconcile(engine: Engine, run: RunFacts, cells: Sequence[CellFacts], cases: dict[str, str],
              price_correction: str | None = None, chosen_routers: object = None) -> tuple[str, bool, str]:
    """`price_correction`: the run's latest price correction digest; costs are priced with it.
    `chosen_routers`: {MoM target id: router kind} to re-attribute those targets' calls with."""
    if run.status not in TERMINAL_STATUSES:
        raise InvalidInput(f"run {run.id} is {run.status}; reconcile a terminated run", code="run_not_finished")
    if run.mode != "live":
        raise InvalidInput("reconcile-usage applies to live runs only", code="not_live")
    calls = {c.cell_id: (c.target_id, cases[c.case_id], c.call, c.judge_call) for c in cells if c.call}
    inputs = ReconcileInputs(plan=run.plan, calls=calls, prices=price_correction or None)
    chosen = check_routers(Plan.model_validate(engine.store.get_json(run.plan)), chosen_routers)
    params = ReconcileParams(metering=METERING_VERSION, run_id=run.id, routers=chosen or None)
    r = engine.build(RECONCILE, inputs.model_dump(mode="json", exclude_none=True),
                     params.model_dump(mode="json", exclude_none=True), subject=run.id)
    return r.output, r.hit, r.explanation


def corrected_usage(correction: UsageCorrection) -> dict[str, Usage]:
    """call digest → corrected buckets, for the rows whose evidence changed them."""
    return {r.call: Usage(**r.new_usage) for r in correction.rows if r.status == "changed" and r.new_usage is not None}
