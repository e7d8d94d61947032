"""A report row for tests (stages/report/cells.py builds the real ones): every always-present field at its
empty value, the given fields over them."""

from __future__ import annotations

from typing import Any

from srbench.schemas.results import ResultRow

EMPTY: dict[str, Any] = {
    "cell_id": "c", "seq": 0, "case_id": "case", "target_id": "t", "benchmark": "mmlu-pro", "stratum": None,
    "state": "pending", "error_class": None, "call": None, "has_call": False, "correct": None, "grade": None,
    "grade_status": None, "usage": None, "cost_usd": None, "cache_neutral_cost_usd": None, "latency_s": None,
    "ttft_s": None, "selected_model": None, "response_model": None, "decision": None, "finish_reason": None,
    "judge_call": None, "judge_cost_usd": 0.0, "published_score": None, "config_hash_seen": None}


def result_row(**fields: Any) -> ResultRow:
    return ResultRow.model_validate(EMPTY | fields)
