"""Report rows of multi-call cells (pure helpers of stages/report.py).

A conversation record (stages/conversation_dispatch.py) lists every call of the cell with its role
and target. Its row in the report:

- principal figures from the **subject** calls only: ``usage`` (the four buckets summed), ``cost_usd``
  and ``cache_neutral_cost_usd`` (unknown as soon as one subject call's is), ``ttft_s`` of the first
  subject call, ``finish_reason``/``response_model``/``http_status`` of the last one;
- auxiliary costs apart, per role (benchmarks/conversation.py ROLE_COST_FIELDS): ``judge_cost_usd``,
  ``simulator_cost_usd``, ``scaffolding_cost_usd`` (0 when the role made no call, unknown when one of
  its calls' cost is);
- ``tokens_by_role`` (the four buckets per role, null when one call of the role is unmetered),
  ``calls`` and ``calls_by_role`` counts, ``latency_s`` = the sum of every call's duration;
- for a router (MoM) target ``turn_models``: the model its router chose for each subject turn;
- ``trajectory`` (the stored trajectory's digest, if any) and the benchmark's own figures of the
  cell (``Benchmark.conversation_row``, e.g. Terminal-Bench's reward).

Every call record is read through `load_call`, so a usage correction (reconcile-usage) and a price
correction (reprice: the plan's targets as priced) apply call by call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.conversation import ROLE_COST_FIELDS
from srbench.schemas.call import Usage
from srbench.schemas.target import Target
from srbench.targets.accounting import call_cost

AUX_FIELDS = tuple(f for r, f in ROLE_COST_FIELDS.items() if r != "subject")
ZERO = Usage(input=0, cached_input=0, cache_write=0, output=0)


def _sum(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def _usage(values: list[Usage | None]) -> dict[str, int] | None:
    if any(u is None for u in values):
        return None
    return sum((u for u in values if u is not None), ZERO).model_dump()


def conversation_row(row: dict[str, Any], conversation: dict[str, Any], subject: Target,
                     aux: dict[str, Target], load_call: Callable[[str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Fill `row` from one conversation record; returns one routing entry per subject turn (for the
    target's routing summary), each with the fields a single call's row carries."""
    by_role: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for call in conversation.get("calls", []):
        record = load_call(call["record"])
        target = subject if call["role"] == "subject" else aux.get(call["target_id"])
        if target is None:           # a target the (re)priced plan no longer names: cost unknown
            cost = None
        else:
            cost = call_cost(target, record)
            if record.get("sent") is False:
                cost.cost_usd = cost.cache_neutral_cost_usd = 0.0
        by_role.setdefault(call["role"], []).append((record, cost))
    subj = by_role.get("subject", [])
    costs = [c.cost_usd if c else None for _, c in subj]
    row.update(conversation=True, calls=sum(len(v) for v in by_role.values()),
               calls_by_role={r: len(v) for r, v in sorted(by_role.items())},
               usage=_usage([c.usage if c else None for _, c in subj]) if subj else None,
               cost_usd=_sum(costs), cache_neutral_cost_usd=_sum([c.cache_neutral_cost_usd if c else None
                                                                  for _, c in subj]),
               tokens_by_role={r: _usage([c.usage if c else None for _, c in v]) for r, v in sorted(by_role.items())},
               latency_s=float(sum((rec.get("timings") or {}).get("latency_s") or 0.0
                                   for v in by_role.values() for rec, _ in v)) if by_role else None,
               error=conversation.get("error"), trajectory=conversation.get("trajectory"),
               **get_benchmark(row["benchmark"]).conversation_row(conversation))
    for field in AUX_FIELDS:
        role = next(r for r, f in ROLE_COST_FIELDS.items() if f == field)
        row[field] = _sum([c.cost_usd if c else None for _, c in by_role.get(role, [])])
    unknown = [c.reason for _, c in subj if c and c.cost_usd is None and c.reason]
    models = sorted({m for _, c in subj if c for m in c.models})
    row.update(cost_basis=Counter(c.basis for _, c in subj if c).most_common(1)[0][0] if subj else None,
               cost_unknown_reason=unknown[0] if unknown else None, priced_models=models,
               outside_pool=sorted({m for _, c in subj if c for m in c.outside_pool}))
    turns = []
    for rec, c in subj:
        a = c.attribution if c else None
        turns.append({"has_call": True, "http_status": rec.get("http_status"),
                      "selected_model": a.selected_model if a else None, "deployment": a.deployment if a else None,
                      "inference_calls": a.inference_calls if a else None, "retries": a.retries if a else None,
                      "fallbacks": a.fallbacks if a else None})
    if subj:
        first, last = subj[0][0], subj[-1][0]
        row.update(ttft_s=(first.get("timings") or {}).get("ttft_s"), finish_reason=last.get("finish_reason"),
                   response_model=last.get("response_model"), http_status=last.get("http_status"))
    if subject.kind == "mom":
        row["turn_models"] = [t["selected_model"] for t in turns]
        row["router"] = next((c.attribution.router for _, c in subj if c and c.attribution), None)
        # the config hash evidence (evidence.py): every turn's header; one missing or differing decides
        seen = [c.attribution.config_hash if c and c.attribution else None for _, c in subj]
        row["config_hash_seen"] = None if None in seen else next(
            (h for h in seen if h != subject.config_hash), seen[0] if seen else None)
    return turns


def role_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-target figures of its conversation rows: the auxiliary costs per role, the four buckets
    per role and the number of calls. Empty when the target has no conversation row (a single-call
    run's report is as before)."""
    conv = [r for r in rows if r.get("conversation")]
    if not conv:
        return {}
    out: dict[str, Any] = {f: _sum([r.get(f, 0.0) for r in rows]) for f in AUX_FIELDS if f != "judge_cost_usd"}
    roles = sorted({role for r in conv for role in r["tokens_by_role"]})
    tokens: dict[str, Any] = {}
    for role in roles:
        values = [r["tokens_by_role"].get(role) for r in conv if role in r["tokens_by_role"]]
        complete = all(v is not None for v in values) and not any(r["state"] == "ambiguous" for r in rows)
        tokens[role] = (sum((Usage(**v) for v in values), ZERO).model_dump() if complete else None)
    out["tokens_by_role"] = tokens
    # recorded calls (an ambiguous conversation has no record: its calls are on the calls page only)
    out["call_count"] = sum((r.get("calls") or 0) if r.get("conversation") else int(r["has_call"]) for r in rows)
    counts: Counter[str] = Counter()
    for r in conv:
        counts.update(r.get("calls_by_role") or {})
    out["calls_by_role"] = dict(sorted(counts.items()))
    return out
