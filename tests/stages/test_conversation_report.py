"""Report rows of multi-call cells (stages/report/conversations.py), by hand: principal from the subject
calls, auxiliary costs apart per role, unknown stays unknown, and per-role totals over every row."""

from __future__ import annotations

from tests.benchmarks.fixtures import conversation_record
from tests.stages.rows import result_row

from srbench.schemas.results import ResultRow
from srbench.schemas.target import Target
from srbench.stages.report.conversations import conversation_row, role_totals

P = {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}
AGENT = Target(id="agent", kind="single", base_url="http://127.0.0.1:1/v1", model="a", prices={"a": P})
SIM = Target(id="sim", kind="single", base_url="http://127.0.0.1:1/v1", model="s", prices={"s": P})


def _rec(inp: int | None, out: int = 10, latency: float = 1.0, sent: bool = True) -> dict:
    usage = None if inp is None else {"input": inp, "cached_input": 0, "cache_write": 0, "output": out}
    return {"kind": "call", "usage": usage, "response_model": None, "headers": {}, "finish_reason": "stop",
            "http_status": 200, "timings": {"latency_s": latency, "ttft_s": 0.1}, "sent": sent}


def _row(records: dict, calls: list) -> ResultRow:
    row = result_row(state="completed", has_call=True, cell_id="c", benchmark="tau3")
    full = [{"request": "q", "cost_usd": None, "status": "completed", "error_class": None, "selected_model": None, **c}
            for c in calls]
    return conversation_row(row, conversation_record(calls=full), AGENT, {"sim": SIM}, records.__getitem__)[0]


def test_principal_is_the_subject_calls_and_the_simulator_is_apart() -> None:
    records = {"r0": _rec(100), "r1": _rec(50), "r2": _rec(1000, 1)}
    calls = [{"index": 0, "role": "subject", "target_id": "agent", "record": "r0"},
             {"index": 1, "role": "user_simulator", "target_id": "sim", "record": "r2"},
             {"index": 2, "role": "subject", "target_id": "agent", "record": "r1"}]
    row = _row(records, calls)
    assert row.cost_usd == (150 * 1.0 + 20 * 2.0) / 1e6
    assert row.simulator_cost_usd == (1000 + 2) / 1e6
    assert row.judge_cost_usd == 0.0 and row.scaffolding_cost_usd == 0.0
    assert row.usage is not None and row.usage.model_dump() == {"input": 150, "cached_input": 0, "cache_write": 0, "output": 20}
    assert row.tokens_by_role is not None and row.tokens_by_role["user_simulator"].input == 1000
    assert row.calls == 3 and row.calls_by_role == {"subject": 2, "user_simulator": 1}
    assert row.latency_s == 3.0 and "turn_models" not in row.model_fields_set
    totals = role_totals([row])
    assert totals.call_count == 3 and totals.simulator_cost_usd == row.simulator_cost_usd


def test_unknown_stays_unknown_and_an_unsent_call_costs_nothing() -> None:
    records = {"r0": _rec(None), "r1": _rec(10, sent=False), "r2": _rec(None)}
    row = _row(records, [{"index": 0, "role": "subject", "target_id": "agent", "record": "r1"},
                         {"index": 1, "role": "user_simulator", "target_id": "sim", "record": "r2"}])
    assert row.cost_usd == 0.0 and row.simulator_cost_usd is None
    row2 = _row(records, [{"index": 0, "role": "subject", "target_id": "agent", "record": "r0"}])
    assert row2.cost_usd is None and row2.usage is None and row2.cost_unknown_reason
    ambiguous = result_row(state="ambiguous", has_call=False, conversation=True, calls=None, tokens_by_role={},
                           simulator_cost_usd=None, scaffolding_cost_usd=None)
    totals = role_totals([row2, ambiguous])
    assert totals.simulator_cost_usd is None and totals.tokens_by_role["subject"] is None


def test_single_call_rows_count_as_their_subject_and_judge_calls() -> None:
    u = {"input": 7, "cached_input": 1, "cache_write": 0, "output": 3}
    single = result_row(state="completed", has_call=True, usage=u, judge_call="j", judge_usage=u)
    assert role_totals([single, result_row(state="pending", has_call=False)]).model_dump(exclude_unset=True) == {
        "call_count": 2, "calls_by_role": {"judge": 1, "subject": 1}, "tokens_by_role": {"judge": u, "subject": u}}
    # a call that may have been billed without a record: its role's tokens are unknown, never 0
    lost = result_row(state="ambiguous", has_call=False, error_class="ambiguous_dispatch")
    assert role_totals([single, lost]).tokens_by_role == {"judge": u, "subject": None}


def test_a_conversation_and_single_calls_add_up_per_role() -> None:
    records = {"r0": _rec(100), "r1": _rec(1000, 1)}
    conv = _row(records, [{"index": 0, "role": "subject", "target_id": "agent", "record": "r0"},
                          {"index": 1, "role": "user_simulator", "target_id": "sim", "record": "r1"}])
    single = result_row(state="completed", has_call=True, usage={"input": 5, "cached_input": 0, "cache_write": 0,
                                                                 "output": 2})
    totals = role_totals([conv, single])
    assert totals.calls_by_role == {"subject": 2, "user_simulator": 1} and totals.call_count == 3
    assert totals.tokens_by_role["subject"] == {"input": 105, "cached_input": 0, "cache_write": 0, "output": 12}
    assert totals.simulator_cost_usd == conv.simulator_cost_usd
