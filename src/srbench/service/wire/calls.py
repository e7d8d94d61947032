"""Upstream's call and result fields (its journal's call rows and case results), filled from sr-bench's
stored call records, their pricing and grades, beside sr-bench's own fields.

- a call: ``model`` (the model the response named), ``cost_usd`` and ``cost_complete`` (the call priced at
  its target's frozen prices; null when no price applies), ``started_at``/``finished_at`` (ISO-8601 from
  the record's timings), ``output_complete`` (the reply was not cut at the output cap), ``response_usage``
  (the four buckets under upstream's names), ``inference_call_count``, ``decision`` and ``config_hash``
  (a router's headers), ``activity`` (bytes received), a router's ``usage_complete``; one call in full adds ``final``, ``reasoning``
  (null: sr-bench keeps only its length), ``raw_usage`` and ``tool_calls``;
- a result: ``answer`` and ``details`` (the grade's extracted answer, grader, strict-format flag and
  status), ``call_count``, ``subject_latency_s``; ``queue_wait_s``, ``started_at``, ``finished_at`` null
  (sr-bench records no cell queue wait or whole-cell times).
"""

from __future__ import annotations

from datetime import UTC, datetime

from srbench.schemas.wire import WireJSON
from srbench.targets.accounting import CallCost

DECISION_HEADER = "x-vsr-selected-decision"
CONFIG_HASH_HEADER = "x-vsr-config-hash"


def _iso(ts: object) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat() if isinstance(ts, int | float) else None


def _buckets(usage: object) -> WireJSON | None:
    if not isinstance(usage, dict):
        return None
    return {"input_tokens": usage.get("input"), "cached_input_tokens": usage.get("cached_input"),
            "cache_write_tokens": usage.get("cache_write"), "output_tokens": usage.get("output")}


def call_fields(record: WireJSON, cost: CallCost | None, mom: bool) -> WireJSON:
    """Upstream's fields of one stored call record (`cost`: it priced, None when no target prices it)."""
    timings = record.get("timings") if isinstance(record.get("timings"), dict) else {}
    assert isinstance(timings, dict)
    started, latency = timings.get("started_at"), timings.get("latency_s")
    finished = started + latency if isinstance(started, int | float) and isinstance(latency, int | float) else None
    headers = record.get("headers") if isinstance(record.get("headers"), dict) else {}
    assert isinstance(headers, dict)
    finish = record.get("finish_reason")
    attribution = cost.attribution if cost is not None else None
    inference = attribution.inference_calls if attribution is not None else (
        1 if not mom and record.get("usage") is not None else None)
    return {"model": record.get("response_model"),
            "cost_usd": None if cost is None else cost.cost_usd,
            "cost_complete": cost is not None and cost.cost_usd is not None,
            "started_at": _iso(started), "finished_at": _iso(finished),
            "output_complete": None if not isinstance(finish, str) else finish != "length",
            "response_usage": _buckets(record.get("usage")), "inference_call_count": inference,
            "decision": headers.get(DECISION_HEADER), "config_hash": headers.get(CONFIG_HASH_HEADER),
            "activity": {"received_bytes": record.get("bytes_received")},
            **({"usage_complete": cost is not None and cost.usage is not None} if mom else {})}


def call_detail_fields(record: WireJSON) -> WireJSON:
    """What upstream's one-call answer adds: the visible reply, raw usage and tool calls."""
    return {"final": record.get("text"), "reasoning": None, "raw_usage": record.get("usage_raw"),
            "tool_calls": record.get("tool_calls") or []}


def result_fields(row: WireJSON, grade: WireJSON | None) -> WireJSON:
    """Upstream's case-result fields of one report row (`grade`: its stored grade, when graded)."""
    calls = row.get("calls")
    if not isinstance(calls, int):
        calls = int(bool(row.get("has_call"))) + int(bool(row.get("judge_call")))
    details = None
    if grade is not None:
        details = {"grader_version": grade.get("grader"), "strict_format": grade.get("strict_format"),
                   "grade_status": grade.get("status"),
                   "answer_status": "unparsed" if grade.get("extracted") is None else "parsed"}
    return {"answer": None if grade is None else grade.get("extracted"), "details": details, "call_count": calls,
            "subject_latency_s": None if row.get("conversation") else row.get("latency_s"), "queue_wait_s": None, "started_at": None,
            "finished_at": None}
