"""What compare reads of a stored result row (schemas/comparison_inputs.py `ComparedRow`): a field the row
lacks reads as the dict code's `.get` did, and whether an auxiliary cost field is present at all is kept."""

from __future__ import annotations

from srbench.schemas.comparison_inputs import ComparedRow
from srbench.stages.report.routing import routed_calls

BASE = {"case_id": "c1", "target_id": "mom", "benchmark": "gpqa", "state": "completed", "correct": True}


def test_absent_fields_read_as_before_and_presence_is_kept() -> None:
    single = ComparedRow.model_validate(BASE | {"cost_usd": 1, "judge_cost_usd": None})
    assert single.simulator_cost_usd == 0.0 and single.scaffolding_cost_usd == 0.0    # no such call: 0
    assert single.judge_cost_usd is None and single.has("judge_cost_usd")            # metered, unknown
    assert not single.has("simulator_cost_usd") and single.cost_usd == 1 and isinstance(single.cost_usd, int)
    unmetered = ComparedRow.model_validate(BASE | {"simulator_cost_usd": None})
    assert not unmetered.has("judge_cost_usd") and unmetered.simulator_cost_usd is None
    assert ComparedRow.model_validate(BASE | {"unknown_field": 1, "seq": None}).seq is None
    assert single.ok() == 1 and ComparedRow.model_validate(BASE | {"state": "failed"}).ok() == 0


def test_routed_calls_are_the_turns_of_a_conversation_else_the_row_itself() -> None:
    turn = {"has_call": True, "http_status": 200, "selected_model": "m1", "deployment": None, "inference_calls": 1,
            "retries": 0, "fallbacks": None}
    conv = ComparedRow.model_validate(BASE | {"turn_routing": [turn, {"http_status": 500}]})
    own = ComparedRow.model_validate(BASE | {"has_call": True, "http_status": 200, "selected_model": "m2"})
    calls = routed_calls([conv, own])
    assert [c.selected_model for c in calls] == ["m1", None, "m2"]
    assert [c.has_call for c in calls] == [True, False, True] and calls[2].retries is None
