"""τ³: native tasks → cases, the conversation loop and every reward component, with a fake session.

The session here is a stand-in for dispatch's CellSession: scripted replies per role, no network.
The end-to-end runs through the real service are in tests/service/test_tau3_service.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.conversation import CellStopped, Reply
from srbench.benchmarks.selection import order
from srbench.benchmarks.sources import read_files
from srbench.benchmarks.tau import env as tau_env
from srbench.benchmarks.tau import reward
from srbench.benchmarks.tau.models import CallFact, Criteria, GoldAction, TauOutputs
from srbench.benchmarks.tau3 import Tau3
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case
from srbench.simulate.tau_mini import REVISION, TASKS, write_mini_domain

from .fixtures import conversation_record


def tool(name: str, **args: Any) -> dict[str, Any]:
    return {"tool": name, "args": args}


class FakeSession:
    """Scripted replies per role: a str is a text reply, {"tool": ...} a tool call, "FAIL" a failed
    call, a callable(messages) returns one of those; STOP_AT raises CellStopped."""

    def __init__(self, case: Case, scripts: dict[str, list[Any]]) -> None:
        self.cell_id, self.case, self.target_id, self.seed = "cell-1", case, "agent", 7
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.calls: list[dict[str, Any]] = []
        self.stored: dict[str, Any] = {}

    async def call(self, messages: list[dict[str, Any]], *, role: str = "subject",
                   tools: list[dict[str, Any]] | None = None, tool_choice: Any = None,
                   max_tokens: int | None = None) -> Reply:
        script = self.scripts.get(role) or []
        item = script.pop(0) if len(script) > 1 else (script[0] if script else "")
        if callable(item):
            item = item(messages)
        if item == "STOP_AT":
            raise CellStopped("cancelled", "run cancelled")
        index = len(self.calls)
        self.calls.append({"role": role, "messages": json.loads(json.dumps(messages)), "tools": tools})
        if item == "FAIL":
            return Reply(index=index, role=role, target_id=role, status="failed", text=None,
                         error_class="http_500", error="HTTP 500")
        if isinstance(item, dict):
            calls = [{"id": f"c{index}", "type": "function",
                      "function": {"name": item["tool"], "arguments": item.get("raw") or json.dumps(item["args"])}}]
            return Reply(index=index, role=role, target_id=role, status="completed", text=None, tool_calls=calls,
                         finish_reason="tool_calls")
        return Reply(index=index, role=role, target_id=role, status="completed", text=item, finish_reason="stop")

    def store(self, value: bytes | dict[str, Any]) -> str:
        data = value if isinstance(value, bytes) else canonical_json(value)
        digest = digest_bytes(data)
        self.stored[digest] = value
        return digest

    def remaining_s(self) -> float:
        return 100.0


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    root = write_mini_domain(tmp_path_factory.mktemp("tau") / "src")
    bench = get_benchmark("tau3")
    files = bench.normalize(read_files(bench.locate(root)))
    return {c.metadata.task_id: c for c in bench.load(files, seed=1, revision=REVISION)}  # type: ignore[attr-defined]


def converse(case: Case, scripts: dict[str, list[Any]], bench: Tau3 | None = None) -> tuple[Any, FakeSession]:
    session = FakeSession(case, scripts)
    outcome = asyncio.run((bench or Tau3()).converse(case, session))
    return outcome, session


def graded(case: Case, outcome: Any, bench: Tau3 | None = None) -> Any:
    record = conversation_record(final_text=outcome.final_text, outputs=outcome.outputs,
                                 error_class=outcome.error_class, error=outcome.error)
    return (bench or Tau3()).grade_conversation(case, record)


GOOD_CANCEL = [tool("find_user_by_email", email="ada@example.com"), tool("get_order_details", order_id="o1"),
               tool("cancel_pending_order", order_id="o1", reason="changed my mind"),
               "Done: order o1 is cancelled and 30.00 USD will be refunded."]
USER_CANCEL = ["Hi, please cancel order o1. My email is ada@example.com.", "Thanks! ###STOP###"]


# -- native tasks → cases ------------------------------------------------------------------------
def test_mini_cases_carry_the_task(cases: dict[str, Case]) -> None:
    assert sorted(cases) == sorted(t["id"] for t in TASKS)
    c = cases["cancel_pending"]
    assert c.id == "tau3/mini/cancel_pending" and c.metadata.stratum == "mini"
    assert c.messages[0].role == "system" and "<policy>" in c.messages[0].content
    assert "customer service agent" in c.messages[0].content and "Only a pending order" in c.messages[0].content
    extra = c.metadata.model_extra or {}
    assert "<scenario>" in extra["user_system_prompt"] and "Your email is ada@example.com." in extra["user_system_prompt"]
    assert extra["release"] is None and extra["local_db"]["orders"]["o1"]["status"] == "pending"
    assert c.answer["reward_basis"] == ["DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION"]


def test_missing_basis_gets_the_tau2_default_and_release_needs_the_pinned_revision(tmp_path: Path) -> None:
    root = write_mini_domain(tmp_path)
    tasks_file = root / "data/tau2/domains/mini/tasks.json"
    tasks = json.loads(tasks_file.read_text())
    del tasks[1]["evaluation_criteria"]["reward_basis"]
    tasks_file.write_text(json.dumps(tasks))
    bench = Tau3()
    files = read_files(bench.locate(root))
    pinned = {c.metadata.task_id: c for c in bench.load(files, seed=1, revision=bench.source.revision)}  # type: ignore[attr-defined]
    assert pinned["refuse_delivered"].answer["reward_basis"] == ["DB", "COMMUNICATE"]
    assert pinned["refuse_delivered"].answer["reward_basis_default"] is True
    assert (pinned["refuse_delivered"].metadata.model_extra or {})["release"] == "1.0.1"


def test_bad_native_files_are_one_line_errors(tmp_path: Path) -> None:
    bench = Tau3()
    with pytest.raises(InvalidInput, match="tasks.json"):
        bench.locate(tmp_path)
    root = write_mini_domain(tmp_path)
    split = root / "data/tau2/domains/mini/split_tasks.json"
    split.write_text(json.dumps({"base": ["cancel_pending", "nope"]}))
    with pytest.raises(InvalidInput, match="not in tasks.json"):
        bench.load(read_files(bench.locate(root)), seed=1, revision="x")
    split.write_text(json.dumps({"base": ["cancel_pending"]}))
    tasks_file = root / "data/tau2/domains/mini/tasks.json"
    tasks = json.loads(tasks_file.read_text())
    tasks[0]["evaluation_criteria"]["reward_basis"] = ["DB", "VIBES"]
    tasks_file.write_text(json.dumps(tasks))
    with pytest.raises(InvalidInput, match="reward_basis"):
        bench.load(read_files(bench.locate(root)), seed=1, revision="x")
    tasks_file.write_text(json.dumps([tasks[0], {**tasks[1], "id": tasks[0]["id"]}, *tasks[2:]]))
    with pytest.raises(InvalidInput, match=r"tasks.json\[1\]: duplicate task id 'cancel_pending'"):
        bench.load(read_files(bench.locate(root)), seed=1, revision="x")        # (the first was kept silently)


def test_round_robin_selection_is_balanced_across_domains() -> None:
    from srbench.schemas.dataset import CaseMetadata, Message

    def case(domain: str, i: int) -> Case:
        return Case(id=f"tau3/{domain}/{i}", benchmark="tau3", messages=[Message(role="system", content="p")],
                    answer={}, metadata=CaseMetadata(stratum=domain))
    pool = [case("airline", i) for i in range(5)] + [case("retail", i) for i in range(20)] + \
        [case("telecom", i) for i in range(20)]
    ordered = order(pool, 20260918, "stratum-round-robin-v1")
    assert [c.metadata.stratum for c in ordered[:3]] == ["airline", "retail", "telecom"]
    first12 = [c.metadata.stratum for c in ordered[:12]]
    assert first12.count("airline") == first12.count("retail") == first12.count("telecom") == 4
    assert [c.metadata.stratum for c in ordered[15:18]] == ["retail", "telecom", "retail"]   # airline ran out
    assert ordered == order(list(reversed(pool)), 20260918, "stratum-round-robin-v1")
    assert ordered != order(pool, 1, "stratum-round-robin-v1")


# -- the loop and the reward -------------------------------------------------------------------
def test_db_changing_task_succeeds_with_every_component(cases: dict[str, Case]) -> None:
    outcome, s = converse(cases["cancel_pending"], {"subject": GOOD_CANCEL, "user_simulator": USER_CANCEL})
    assert outcome.error_class is None
    out = outcome.outputs
    assert out["termination"] == "user_stop" and out["calls"] == {"subject": 4, "user_simulator": 2, "judge": 0}
    assert out["env"]["predicted"] == out["env"]["gold"]           # another reason, same end state
    g = graded(cases["cancel_pending"], outcome)
    assert g.correct and g.status == "correct"
    assert g.details["components"] == {"DB": 1.0, "ENV_ASSERTION": 1.0, "COMMUNICATE": 1.0, "ACTION": 1.0}
    # the views: the agent saw its tools and the results, the user only the agent's text
    agent_last = s.calls[[c["role"] for c in s.calls].index("subject") + 3]
    assert agent_last["tools"] and [m["role"] for m in agent_last["messages"]][:3] == ["system", "assistant", "user"]
    assert any(m["role"] == "tool" and '"status": "cancelled"' in m["content"] for m in agent_last["messages"])
    user_last = [c for c in s.calls if c["role"] == "user_simulator"][-1]
    assert user_last["tools"] is None
    assert [m["role"] for m in user_last["messages"]] == ["system", "user", "assistant", "user"]
    assert user_last["messages"][-1]["content"].startswith("Done: order o1")
    traj = s.stored[outcome.trajectory]
    assert traj["kind"] == "tau3_trajectory" and traj["reward"]["reward"] == 1.0
    assert [m["role"] for m in traj["messages"]].count("tool") == 3


def test_each_component_can_fail(cases: dict[str, Case]) -> None:
    c = cases["cancel_pending"]
    silent = GOOD_CANCEL[:3] + ["Done, it is cancelled."]
    g = graded(c, converse(c, {"subject": silent, "user_simulator": USER_CANCEL})[0])
    assert not g.correct and g.details["components"]["COMMUNICATE"] == 0.0 and g.details["components"]["DB"] == 1.0
    commas = GOOD_CANCEL[:3] + ["Refund: 3,0.00"]     # commas are removed from the message
    assert graded(c, converse(c, {"subject": commas, "user_simulator": USER_CANCEL})[0]).details["components"][
        "COMMUNICATE"] == 1.0
    nothing = ["Sorry, I cannot help with that; the refund would be 30.00."]
    g = graded(c, converse(c, {"subject": nothing, "user_simulator": USER_CANCEL})[0])
    assert g.details["components"] == {"DB": 0.0, "ENV_ASSERTION": 0.0, "COMMUNICATE": 1.0, "ACTION": 0.0}


def test_refusal_task_needs_an_unchanged_database(cases: dict[str, Case]) -> None:
    c = cases["refuse_delivered"]
    user = ["Please cancel order o2, email ada@example.com.", "I see. ###STOP###"]
    refuse = [tool("find_user_by_email", email="ada@example.com"), tool("get_order_details", order_id="o2"),
              tool("cancel_pending_order", order_id="o2", reason="x"),       # the tool refuses: an error
              "Order o2 was delivered and cannot be cancelled."]
    outcome, _ = converse(c, {"subject": refuse, "user_simulator": user})
    assert outcome.outputs["tool_errors"] == 1 and graded(c, outcome).correct
    wrong = [tool("cancel_pending_order", order_id="o1", reason="x"), "I cancelled an order for you."]
    g = graded(c, converse(c, {"subject": wrong, "user_simulator": user})[0])
    assert not g.correct and g.details["components"] == {"DB": 0.0}


def judge_reply(*met: bool) -> str:
    return json.dumps({"results": [{"expectedOutcome": "x", "reasoning": "r", "metExpectation": m} for m in met]})


def test_nl_assertion_goes_to_the_pinned_judge(cases: dict[str, Case]) -> None:
    c = cases["status_question"]
    user = ["Where is my order o2?", "Great, thanks ###STOP###"]
    agent = [tool("get_order_details", order_id="o2"), "Order o2 was delivered."]
    outcome, s = converse(c, {"subject": agent, "user_simulator": user, "judge": [judge_reply(True)]})
    judge = [x for x in s.calls if x["role"] == "judge"]
    assert len(judge) == 1 and "expectedOutcomes" in judge[0]["messages"][1]["content"]
    assert '"The agent tells the customer that order o2 was delivered."' in judge[0]["messages"][1]["content"]
    assert "assistant: Order o2 was delivered." in judge[0]["messages"][1]["content"]
    assert outcome.outputs["calls"]["judge"] == 1 and graded(c, outcome).correct
    not_met = converse(c, {"subject": agent, "user_simulator": user, "judge": [judge_reply(False)]})[0]
    assert graded(c, not_met).status == "incorrect"
    for bad in ("the agent did fine", judge_reply(True, True), json.dumps({"results": [{"metExpectation": "yes"}]})):
        g = graded(c, converse(c, {"subject": agent, "user_simulator": user, "judge": [bad]})[0])
        assert g.status == "judge_error" and not g.correct
    fenced = "```json\n" + judge_reply(True) + "\n```"
    assert graded(c, converse(c, {"subject": agent, "user_simulator": user, "judge": [fenced]})[0]).correct
    # a DB already wrong: the judge is not asked (the product is 0 whatever it says)
    wrongdb = [tool("cancel_pending_order", order_id="o1", reason="x"), "Order o2 was delivered."]
    outcome, s = converse(c, {"subject": wrongdb, "user_simulator": user, "judge": [judge_reply(True)]})
    assert not [x for x in s.calls if x["role"] == "judge"] and not graded(c, outcome).correct


def test_max_steps_and_too_many_errors_give_zero(cases: dict[str, Case]) -> None:
    c = cases["cancel_pending"]
    bench = Tau3(max_steps=6)
    chatty = converse(c, {"subject": ["Tell me more."], "user_simulator": ["Hmm, let me think."]}, bench)[0]
    assert chatty.outputs["termination"] == "max_steps" and chatty.outputs["steps"] == 6
    assert chatty.outputs["calls"] == {"subject": 3, "user_simulator": 3, "judge": 0}
    g = graded(c, chatty, bench)
    assert g.details["reward"] == 0.0 and not g.correct
    # a user stop on the step that reaches max_steps is still max_steps (tau2's order of checks)
    late = converse(c, {"subject": ["ok"], "user_simulator": ["a", "b", "###STOP###"]}, Tau3(max_steps=5))[0]
    assert late.outputs["termination"] == "max_steps"
    bad_tool = converse(c, {"subject": [tool("no_such_tool")], "user_simulator": ["hi"]})[0]
    assert bad_tool.outputs["termination"] == "too_many_errors" and bad_tool.outputs["tool_errors"] == 3
    bad_json = converse(c, {"subject": [{"tool": "get_order_details", "raw": "{not json"}],
                            "user_simulator": ["hi"]})[0]
    assert bad_json.outputs["termination"] == "too_many_errors"
    empty = converse(c, {"subject": ["  "], "user_simulator": ["hi"]})[0]
    assert empty.outputs["termination"] == "agent_error" and not graded(c, empty).correct


def test_failed_calls_and_stops_end_the_cell_with_its_trajectory(cases: dict[str, Case]) -> None:
    c = cases["cancel_pending"]
    outcome, s = converse(c, {"subject": ["FAIL"], "user_simulator": USER_CANCEL})
    assert outcome.error_class == "http_500" and "agent call 1 failed" in outcome.error
    assert s.stored[outcome.trajectory]["reward"] is None
    assert graded(c, outcome).status == "invalid"
    outcome, _ = converse(c, {"subject": GOOD_CANCEL, "user_simulator": ["FAIL"]})
    assert outcome.error_class == "user_simulator_http_500"
    session = FakeSession(c, {"subject": [GOOD_CANCEL[0], "STOP_AT"], "user_simulator": USER_CANCEL})
    with pytest.raises(CellStopped):
        asyncio.run(Tau3().converse(c, session))
    (traj,) = session.stored.values()
    assert traj["termination"] is None and len(traj["messages"]) == 4


def test_real_domains_need_the_tau2_interpreter(cases: dict[str, Case], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tau_env.PYTHON_ENV, raising=False)
    real = cases["cancel_pending"].model_copy(deep=True)
    (real.metadata.model_extra or {})["domain"] = "airline"
    outcome, s = converse(real, {"subject": GOOD_CANCEL})
    assert outcome.error_class == "environment_unavailable" and tau_env.PYTHON_ENV in outcome.error
    assert s.calls == []                           # nothing was sent
    problems = Tau3().plan_problems([real, cases["status_question"]])
    assert len(problems) == 1 and tau_env.PYTHON_ENV in problems[0] and "airline" in problems[0]
    monkeypatch.setenv(tau_env.PYTHON_ENV, "/nonexistent/python")
    assert Tau3().plan_problems([real]) != []


def test_reward_rules_directly() -> None:
    assert reward.communicate(["The total is $1,234.50"], ["1234.50"])[0] == 1.0
    assert reward.communicate(["x"], ["A, B"])[0] == 0.0           # commas stay in the expected string
    gold = GoldAction(action_id="a", name="f", arguments={"x": 1, "note": "n"}, compare_args=["x"])
    assert reward.action_matches(gold, CallFact(name="f", arguments={"x": 1, "note": "other"}))
    assert not reward.action_matches(gold, CallFact(name="f", arguments={"x": 2}))
    every = gold.model_copy(update={"compare_args": None})
    assert reward.action_matches(every, CallFact(name="f", arguments={"x": 1}))   # the call's own keys
    assert not reward.action_matches(every, CallFact(name="f", arguments={"x": 1, "note": "other"}))
    out = TauOutputs.model_validate({"termination": "user_stop", "env": {"predicted": {"agent": "a", "user": "u1"},
                                                                         "gold": {"agent": "a", "user": "u2"}}})
    assert reward.reward(Criteria(reward_basis=["DB"]), out).reward == 0.0        # the user DB counts too
    assert reward.reward(Criteria(reward_basis=["NL_ASSERTION"], nl_assertions=[]), out).success


def test_the_scripted_roles_of_the_demo_solve_the_toy_domain(cases: dict[str, Case]) -> None:
    from srbench.simulate.tau_script import role_of, tau_reply

    def scripted(careful: bool) -> Any:
        def reply(messages: list[dict[str, Any]]) -> Any:
            got = tau_reply(messages, careful)
            assert got is not None, role_of(messages)
            text, calls = got
            if calls:
                fn = calls[0]["function"]
                return {"tool": fn["name"], "args": json.loads(fn["arguments"])}
            return text
        return reply

    for careful, want in ((True, {"cancel_pending": True, "refuse_delivered": True, "status_question": True}),
                          (False, {"cancel_pending": False, "refuse_delivered": True, "status_question": True})):
        roles = {r: [scripted(careful)] for r in ("subject", "user_simulator", "judge")}
        got = {tid: graded(c, converse(c, roles)[0]).correct for tid, c in cases.items()}
        assert got == want, (careful, got)


def test_a_broken_tau2_interpreter_is_an_environment_error_before_any_call(
        cases: dict[str, Case], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'tau2 is not installed here' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv(tau_env.PYTHON_ENV, str(fake))
    real = cases["cancel_pending"].model_copy(deep=True)
    (real.metadata.model_extra or {})["domain"] = "retail"
    outcome, s = converse(real, {"subject": GOOD_CANCEL})
    assert outcome.error_class == "environment_error" and "tau2 is not installed here" in outcome.error
    assert s.calls == []
    assert "cannot import tau2" in tau_env.interpreter_problems()[0]


# -- issue 27 item 2: grading only on the environment that matches the data ------------------------
def test_a_foreign_domain_named_like_the_toy_is_refused_at_prepare_and_plan(cases: dict[str, Case],
                                                                            tmp_path: Path) -> None:
    from srbench.benchmarks.acquire import acquire

    root = write_mini_domain(tmp_path / "foreign")
    db_file = root / "data/tau2/domains/mini/db.json"
    db = json.loads(db_file.read_text())
    db["orders"]["o1"]["status"] = "delivered"           # another shop's data under the toy's name
    db_file.write_text(json.dumps(db))
    with pytest.raises(InvalidInput) as info:
        acquire(Tau3(), cache_dir=tmp_path / "c", source_path=str(root), revision="their-fixture")
    msg = info.value.message
    assert "\n" not in msg and "τ³ domain mini: its db.json differ" in msg and "environment code of its own" in msg
    (root / "data/tau2/domains/mini/policy.md").write_text("# another policy\n")
    with pytest.raises(InvalidInput, match="its policy and db.json differ"):
        acquire(Tau3(), cache_dir=tmp_path / "c", source_path=str(root), revision="their-fixture")
    # the toy itself passes; a dataset prepared before this check is refused at plan
    assert acquire(Tau3(), cache_dir=tmp_path / "c", source_path=str(write_mini_domain(tmp_path / "toy")),
                   revision=REVISION).files
    assert Tau3().plan_problems(list(cases.values())) == []
    stale = cases["cancel_pending"].model_copy(deep=True)
    (stale.metadata.model_extra or {})["local_db"] = db
    problems = Tau3().plan_problems([stale])
    assert len(problems) == 1 and problems[0].startswith("tau3: τ³ domain mini: its db.json differ")


def test_a_gold_action_that_fails_to_replay_is_a_named_grading_error_never_a_reward(cases: dict[str, Case]) -> None:
    case = cases["refuse_delivered"].model_copy(deep=True)
    case.answer["actions"] = [*(case.answer.get("actions") or []),
                              {"action_id": "foreign_1", "name": "rebook_flight", "arguments": {"id": "x"}}]
    # "do nothing": the agent only talks; the database is unchanged, as an unreplayed gold one would be
    outcome, s = converse(case, {"subject": ["I cannot help with that order."], "user_simulator": USER_CANCEL})
    assert outcome.error_class == "grading_error" and "\n" not in outcome.error
    assert "foreign_1" in outcome.error and "fail to replay on sr-bench-mini-v1" in outcome.error
    assert [c["role"] for c in s.calls].count("judge") == 0            # nothing more is paid for
    grade = graded(case, outcome)
    assert grade.correct is False and grade.status == "invalid" and grade.details["error_class"] == "grading_error"
    traj = next(v for v in s.stored.values() if isinstance(v, dict) and v.get("kind") == "tau3_trajectory")
    assert traj["reward"] is None
    # a record stored before such cells were errors is still never rewarded
    legacy = {"final_text": "x", "error_class": None, "outputs": {
        "termination": "user_stop", "engine": "sr-bench-mini-v1",
        "env": {"predicted": {"agent": "h", "user": None}, "gold": {"agent": "h", "user": None},
                "gold_action_errors": ["foreign_1"], "env_assertions": []}}}
    old = Tau3().grade_conversation(case, conversation_record(**legacy))
    assert old.status == "invalid" and "gold action(s)" in old.details["error"] and "reward" not in old.details


def test_a_real_domain_whose_environment_has_other_data_is_refused_at_plan(cases: dict[str, Case], tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    real = cases["cancel_pending"].model_copy(deep=True)
    extra = real.metadata.model_extra or {}
    extra.update(domain="airline", env_sha256={"db.json": "a" * 64}, policy_sha256="b" * 64)
    extra.pop("local_db", None)

    def fake_tau2(db: str, policy: str) -> None:
        fake = tmp_path / f"python-{db[:1]}{policy[:1]}"
        reply = json.dumps({"ok": True, "tools": [], "policy_sha256": policy, "env_sha256": {"db.json": db},
                            "tau2_version": "fake", "python": "3"})
        fake.write_text(f"#!/bin/sh\nread line\necho '{reply}'\n")
        fake.chmod(0o755)
        monkeypatch.setenv(tau_env.PYTHON_ENV, str(fake))

    fake_tau2("a" * 64, "b" * 64)
    assert Tau3().plan_problems([real]) == []
    fake_tau2("c" * 64, "b" * 64)
    problems = Tau3().plan_problems([real])
    assert len(problems) == 1 and "another db.json" in problems[0] and "c" * 64 in problems[0]
    fake_tau2("a" * 64, "d" * 64)
    assert "another policy" in Tau3().plan_problems([real])[0]
