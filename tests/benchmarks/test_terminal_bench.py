"""Terminal-Bench 2.1 without Docker: task.toml (both forms), task trees and digests, the loader,
Dockerfile bases, reward files, and the pinned agent loop against a fake session and environment."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.conversation import CellStopped
from srbench.benchmarks.published_grades import published_json
from srbench.benchmarks.selection import select
from srbench.benchmarks.sources import read_files
from srbench.benchmarks.terminal_bench import adapter, agent, environment
from srbench.benchmarks.terminal_bench.options import TerminalOptions, options_from
from srbench.benchmarks.terminal_bench.tasks import parse_task_toml, size_mb, tree_sha256
from srbench.benchmarks.terminal_bench.trajectory import Trajectory
from srbench.benchmarks.terminal_bench.verifier import RewardError, parse_reward
from srbench.errors import IntegrityError, InvalidInput
from srbench.sandbox.dockerfile import external_images
from srbench.sandbox.task_container import BaseImageMissing
from srbench.simulate.terminal_tasks import SCRIPTS, write_task, write_terminal_bench

from .fixtures import conversation_record, stored_grade
from .tbench_fakes import FakeEnvironment, FakeSession, reply, scripted

TB = get("terminal-bench-2.1")
BASE = "sr-bench-fixture-base:test"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return write_terminal_bench(tmp_path / "tb", BASE)


@pytest.fixture
def cases(checkout: Path):
    files = read_files(TB.locate(checkout))
    return {c.metadata.task: c for c in TB.load(files, seed=7, revision="r1")}


# -- task.toml ---------------------------------------------------------------------------------
def test_the_21_form_is_parsed(checkout: Path) -> None:
    c = parse_task_toml((checkout / "tasks/hello-file/task.toml").read_bytes())
    assert c.form == "2.1" and c.name == "sr-bench-fixtures/hello-file" and c.difficulty == "easy"
    assert (c.verifier_timeout_s, c.agent_timeout_s, c.build_timeout_s) == (60, 300, 120)
    assert (c.cpus, c.memory_mb, c.storage_mb, c.gpus, c.allow_internet) == (1, 512, 1024, 0, False)
    assert c.verifier_env == {"EXPECTED_GREETING": "Hello, sr-bench!"} and c.tags == ["fixture", "bash"]
    assert c.docker_image == "sr-bench-fixtures/hello-file:20260101"


def test_the_20_form_with_size_strings_is_parsed(checkout: Path) -> None:
    c = parse_task_toml((checkout / "tasks/fix-greeting/task.toml").read_bytes())
    assert c.form == "2.0" and c.name is None and c.difficulty == "medium"
    assert (c.memory_mb, c.storage_mb, c.cpus) == (1024, 2048, 1)
    assert c.verifier_env == {} and c.allow_internet is True            # Harbor's default when absent
    # no version key at all is the 2.0 form with Harbor's defaults
    d = parse_task_toml(b"[metadata]\ndifficulty = 'Hard'\n")
    assert d.form == "2.0" and d.difficulty == "hard" and (d.verifier_timeout_s, d.memory_mb) == (600, 2048)


@pytest.mark.parametrize("value,mb", [("2G", 2048), ("512M", 512), ("1.5g", 1536), ("4GiB", 4096), ("2048", 2048),
                                      (4096, 4096)])
def test_sizes(value, mb) -> None:
    assert size_mb(value, "memory", "t") == mb


@pytest.mark.parametrize("text,needle", [
    (b'schema_version = "2.0"\n', "schema_version '2.0' is not supported"),
    (b'version = "3"\n', "version '3' is not supported"),
    (b'[environment]\nmemory = "lots"\n', "[environment] memory 'lots' is not a size"),
    (b'[verifier]\ntimeout_sec = -5\n', "[verifier] timeout_sec must be a positive number"),
    (b'[agent]\ntimeout_sec = true\n', "[agent] timeout_sec must be a positive number"),
    (b'[environment]\nallow_internet = "yes"\n', "allow_internet must be true or false"),
    (b'[verifier.env]\nX = [1]\n', "[verifier.env] must map names to strings"),
    (b'metadata = 3\n', "[metadata] must be a table"),
    (b'[task\n', "not valid TOML"),
])
def test_bad_task_toml_is_one_line_naming_the_field(text, needle) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_task_toml(text, "task x: task.toml")
    assert needle in err.value.message and "\n" not in err.value.message and err.value.message.startswith("task x")


# -- trees, layouts, loader ---------------------------------------------------------------------
def test_every_layout_gives_the_same_files_and_digests(checkout: Path, tmp_path: Path) -> None:
    full = read_files(TB.locate(checkout))
    assert sorted({n.split("/")[1] for n in full}) == ["fix-greeting", "hello-file", "never-rewards"]
    assert "tasks/fix-greeting/environment/greet.sh" in full and "tasks/hello-file/solution/solve.sh" in full
    assert read_files(TB.locate(checkout / "tasks")) == full                 # a folder of task directories
    one = read_files(TB.locate(checkout / "tasks" / "hello-file"))          # one task directory
    assert one == {k: v for k, v in full.items() if k.startswith("tasks/hello-file/")}
    (checkout / "tasks/hello-file/.git").mkdir()
    (checkout / "tasks/hello-file/.git/HEAD").write_text("ref\n")
    assert read_files(TB.locate(checkout)) == full                          # .git is not part of a task
    with pytest.raises(InvalidInput, match="no task directory"):
        TB.locate(tmp_path)


def test_the_tree_digest_pins_every_byte_and_nothing_else(checkout: Path) -> None:
    tree = {"a.txt": b"1", "dir/b": b"2"}
    assert tree_sha256(tree) == tree_sha256(dict(reversed(list(tree.items()))))
    assert tree_sha256(tree) != tree_sha256({"a.txt": b"1", "dir/b": b"3"})
    assert tree_sha256(tree) != tree_sha256({"a.txt": b"1", "dir/c": b"2"})
    assert len(tree_sha256(tree)) == 64


def test_load_gives_one_case_per_task(cases) -> None:
    assert set(cases) == {"hello-file", "fix-greeting", "never-rewards"}
    c = cases["hello-file"]
    assert c.id == "terminal-bench-2.1/hello-file" and c.benchmark == "terminal-bench-2.1"
    assert {k: x.metadata.stratum for k, x in cases.items()} == {"hello-file": "easy", "fix-greeting": "medium",
                                                                  "never-rewards": "hard"}
    assert [m.role for m in c.messages] == ["system", "user"] and "Hello, sr-bench!" in c.messages[1].content
    assert c.messages[0].content == agent.first_messages("", TerminalOptions())[0]["content"]
    meta = c.metadata.model_dump()
    assert meta["task_config"]["form"] == "2.1" and meta["has_solution"] and meta["source_revision"] == "r1"
    task = TB.task_of(c)                                                      # files come back, digest checked
    assert task.files["tests/test.sh"].startswith(b"#!/bin/bash") and task.tree_sha256 == meta["tree_sha256"]
    tampered = c.model_copy(deep=True)
    tampered.answer["files"]["tests/test.sh"] = "ZWNobyAx"
    with pytest.raises(IntegrityError, match="tree digest"):
        TB.task_of(tampered)


def test_quick_covers_every_difficulty_and_smoke_is_one(cases) -> None:
    all_cases = list(cases.values())
    assert {c.metadata.stratum for c in select(all_cases, "quick", TB.profiles, 7, benchmark=TB.id)} == \
        {"easy", "medium", "hard"}
    assert len(select(all_cases, "smoke", TB.profiles, 7, benchmark=TB.id)) == 1


def test_incomplete_tasks_are_refused(tmp_path: Path) -> None:
    d = write_task(tmp_path / "tasks", "hello-file", BASE)
    (d / "tests" / "test.sh").unlink()
    with pytest.raises(InvalidInput, match="task hello-file lacks tests/test.sh"):
        TB.load(read_files(TB.locate(tmp_path)), seed=1, revision="r")
    (d / "tests" / "test.sh").write_text("#!/bin/bash\n")
    shutil.move(d / "environment" / "Dockerfile", d / "environment" / "docker-compose.yaml")
    with pytest.raises(InvalidInput, match="docker-compose environments are not supported"):
        TB.load(read_files(TB.locate(tmp_path)), seed=1, revision="r")


# -- Dockerfile bases ---------------------------------------------------------------------------
def test_external_images_of_a_dockerfile() -> None:
    text = """# syntax=docker/dockerfile:1
ARG BASE=debian:bookworm-slim
ARG TAG
FROM --platform=linux/amd64 ${BASE} AS build
RUN echo \\
  hi
FROM build AS second
COPY --from=build /x /y
COPY --from=0 /x /z
COPY --from=tools:1 /bin/t /bin/t
FROM scratch
FROM python:${TAG:-3.12}
"""
    assert external_images(text) == ["debian:bookworm-slim", "tools:1", "python:3.12"]
    with pytest.raises(InvalidInput, match=r"uses \$TAG, which has no default"):
        external_images("ARG TAG\nFROM python:$TAG\n")
    with pytest.raises(InvalidInput, match="no FROM line"):
        external_images("RUN true\n")


# -- reward files ------------------------------------------------------------------------------
def test_reward_files_are_read_as_harbor_reads_them() -> None:
    assert parse_reward(b"1\n", None)[:2] == (1.0, "reward.txt")
    assert parse_reward(b"0.5", b'{"reward": 1}')[0] == 0.5                 # reward.txt wins
    assert parse_reward(None, b'{"reward": 1.0, "partial": 0.5}')[:2] == (1.0, "reward.json")
    assert parse_reward(None, b'{"score": 0}')[0] == 0.0                    # the only entry
    for txt, js, kind in [(None, None, "RewardFileNotFoundError"), (b" \n", None, "RewardFileEmptyError"),
                          (b"pass", None, "VerifierOutputParseError"), (b"nan", None, "VerifierOutputParseError"),
                          (None, b"", "RewardFileEmptyError"), (None, b"[1]", "VerifierOutputParseError"),
                          (None, b'{"a": 1, "b": 0}', "VerifierOutputParseError"),
                          (None, b'{"reward": true}', "VerifierOutputParseError")]:
        with pytest.raises(RewardError) as err:
            parse_reward(txt, js)
        assert err.value.kind == kind


# -- the agent loop (fake session, fake environment) ---------------------------------------------
def trial(case, session, env: FakeEnvironment):
    async def factory(task, cell_id, options):
        return env

    environment.use_factory(factory)
    try:
        return asyncio.run(TB.converse(case, session))
    finally:
        environment.use_factory(None)


def test_a_solved_trial_has_reward_one_and_a_stored_trajectory(cases) -> None:
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"1\n"})
    session = FakeSession(scripted(SCRIPTS["hello-file"]["solve"]))
    out = trial(cases["hello-file"], session, env)
    assert out.error_class is None and out.outputs["reward"] == 1.0 and out.outputs["stop_reason"] == "agent_done"
    assert [c[0] for c in env.commands[:3]] == SCRIPTS["hello-file"]["solve"]
    assert env.commands[3][0] == agent.RESET_VERIFIER and env.commands[4][0] == "bash /tests/test.sh"
    assert env.commands[4][2] == {"EXPECTED_GREETING": "Hello, sr-bench!"}             # [verifier.env]
    assert env.commands[4][1] == 60 and all(c[1] == 30 for c in env.commands[:3])
    assert "/tests/test_outputs.py" in env.files and env.closed
    # every turn sent the one terminal tool and the whole conversation so far
    assert len(session.sent) == 4 and all(s["tools"] == [agent.TOOL] for s in session.sent)
    last = session.sent[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user"] + ["assistant", "tool"] * 3
    assert last[3]["tool_call_id"] == "call-0-0" and last[3]["content"].startswith("exit_code: 0\nstdout:\nran: ls")
    traj = session.objects[out.trajectory]
    assert Trajectory.model_validate(traj).model_dump(mode="json", by_alias=True) == traj     # its model's bytes
    assert traj["kind"] == "trajectory" and traj["format"] == "terminal-bench-trajectory-v1" and traj["agent"] == "sr-bench-terminal-v1"
    assert [s["command"] for s in traj["steps"]] == SCRIPTS["hello-file"]["solve"] and traj["turns"] == 4
    assert traj["verifier"]["reward_files"]["reward.txt"] == "1\n" and out.outputs["trajectory"] == out.trajectory
    g = TB.grade_conversation(cases["hello-file"], conversation_record(final_text=out.final_text, outputs=out.outputs))
    assert g.correct and g.status == "correct" and g.details["reward"] == 1.0 and g.details["receipt"]["backend"] == "fake"


def test_a_failed_trial_is_a_zero_and_a_missing_reward_is_an_error(cases) -> None:
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.json": b'{"reward": 0.0}'})
    out = trial(cases["fix-greeting"], FakeSession(scripted(SCRIPTS["fix-greeting"]["fail"])), env)
    assert out.error_class is None and out.outputs["reward"] == 0.0 and out.outputs["reward_source"] == "reward.json"
    g = TB.grade_conversation(cases["fix-greeting"], conversation_record(outputs=out.outputs))
    assert not g.correct and g.status == "incorrect"
    out = trial(cases["never-rewards"], FakeSession(scripted(["true"])), FakeEnvironment())
    assert out.error_class == "trial_error" and out.error.startswith("RewardFileNotFoundError")
    assert out.outputs["reward"] is None
    g = TB.grade_conversation(cases["never-rewards"], conversation_record(outputs=out.outputs,
                                                                       error_class=out.error_class))
    assert g.status == "trial_error" and not g.correct


def test_partial_rewards_and_verifier_timeouts(cases) -> None:
    out = trial(cases["hello-file"], FakeSession(scripted([])),
                FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0.99"}))
    conv = conversation_record(outputs=out.outputs)
    g = TB.grade_conversation(cases["hello-file"], conv)
    assert not g.correct                                   # sr-bench: resolved only at reward 1
    assert published_json(TB.published_conversation(cases["hello-file"], conv, g))["score"] == 0.99   # Harbor: the mean reward
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"1"},
                          outputs={"bash /tests/test.sh": (124, b"", b"", True)})
    out = trial(cases["hello-file"], FakeSession(scripted([])), env)
    assert out.error_class == "trial_error" and "VerifierTimeoutError" in out.error


def test_max_steps_ends_the_agent_phase_then_the_verifier_runs(cases) -> None:
    session = FakeSession([reply(i, f"echo {i}") for i in range(10)],
                          options=TB.freeze_options({"max_steps": 3}))
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0"})
    out = trial(cases["hello-file"], session, env)
    assert out.outputs["stop_reason"] == "max_steps" and out.outputs["turns"] == 3 and len(session.sent) == 3
    assert out.outputs["reward"] == 0.0 and env.commands[-1][0] == "bash /tests/test.sh"


def test_tool_call_problems_are_told_to_the_model(cases) -> None:
    bad = [{"id": "a", "type": "function", "function": {"name": "python", "arguments": "{}"}},
           {"id": "b", "type": "function", "function": {"name": "terminal", "arguments": "{oops"}},
           {"id": "c", "type": "function", "function": {"name": "terminal", "arguments": '{"command": ""}'}}]
    session = FakeSession([reply(0, tool_calls=bad), reply(1, text="giving up")])
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0"})
    out = trial(cases["hello-file"], session, env)
    tools = [m["content"] for m in session.sent[1]["messages"] if m["role"] == "tool"]
    assert tools == ["error: unknown tool 'python'; the only tool is terminal",
                     'error: the arguments are not valid JSON; call terminal with {"command": "..."}',
                     "error: terminal needs a non-empty string argument 'command'"]
    assert out.outputs["commands"] == 3 and env.commands[0][0] == agent.RESET_VERIFIER     # nothing was run


def test_long_output_is_cut_to_tails_and_a_timeout_is_said(cases) -> None:
    big = b"x" * 30_000 + b"END"
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0"},
                          outputs={"spew": (0, big, b"e" * 9_000, False), "hang": (124, b"", b"", True)})
    session = FakeSession(scripted(["spew", "hang"]))
    trial(cases["hello-file"], session, env)
    spew, hang = [m["content"] for m in session.sent[-1]["messages"] if m["role"] == "tool"]
    out_part = spew.split("stdout:", 1)[1].split("\nstderr:", 1)[0]
    assert "[only the last 24000 characters of 30003 bytes]" in out_part and out_part.endswith("END")
    assert len(out_part.split("\n", 1)[1]) == 24_000
    assert "stderr: [only the last 8000 characters of 9000 bytes]" in spew
    assert hang.startswith("[the command did not finish within 30 s and was killed]\nexit_code: 124")


def test_failed_calls_and_stops_end_the_cell_without_a_verifier(cases) -> None:
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"1"})
    session = FakeSession([reply(0, "ls"), reply(1, status="failed", error_class="http_5xx", tool_calls=[])])
    out = trial(cases["hello-file"], session, env)
    assert out.error_class == "http_5xx" and out.outputs["stop_reason"] == "call_failed" and out.outputs["reward"] is None
    assert [c[0] for c in env.commands] == ["ls"] and env.closed
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"1"})
    out = trial(cases["hello-file"], FakeSession([reply(0, "ls"), CellStopped("budget_stop", "budget is spent")]), env)
    assert out.error_class == "budget_stop" and out.outputs["stop_reason"] == "stopped" and env.closed
    assert TB.grade_conversation(cases["hello-file"], conversation_record(outputs=out.outputs, error_class="budget_stop")
                                 ).status == "trial_error"


def test_the_cell_time_is_shared_and_none_left_means_no_call(cases) -> None:
    # 36 s left for a task with 300 s agent + 60 s verifier timeouts: the agent gets 30 s
    session = FakeSession(scripted(["ls"]), remaining=36.0)
    env = FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0"})
    out = trial(cases["hello-file"], session, env)
    assert out.outputs["environment"]["time_shared"] == {"cell_remaining_s": 36.0, "agent_s": 30.0}
    assert len(session.sent) == 2 and env.commands[-1] == ("bash /tests/test.sh", 36.0,
                                                           {"EXPECTED_GREETING": "Hello, sr-bench!"})
    session = FakeSession(scripted(["ls"]), remaining=0.0)
    out = trial(cases["hello-file"], session, FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"0"}))
    assert session.sent == [] and out.outputs["stop_reason"] == "agent_timeout" and out.outputs["reward"] == 0.0


def test_an_environment_that_cannot_start_costs_no_call(cases) -> None:
    async def factory(task, cell_id, options):
        raise BaseImageMissing(f"task {task.name}: base image {BASE} is not on the Docker engine")

    environment.use_factory(factory)
    session = FakeSession(scripted(["ls"]))
    try:
        out = asyncio.run(TB.converse(cases["hello-file"], session))
    finally:
        environment.use_factory(None)
    assert session.sent == [] and out.error_class == "base_image_missing" and BASE in out.error
    assert session.objects[out.trajectory]["error_class"] == "base_image_missing"


def test_options_are_checked_and_frozen() -> None:
    assert options_from(None) == TerminalOptions() and TerminalOptions().max_steps == 100
    assert TB.freeze_options({}) == {"grading": TerminalOptions().model_dump()}
    frozen = TB.freeze_options({"max_steps": 5, "grader_version": "x"})
    assert frozen["grading"]["max_steps"] == 5 and TB.freeze_options(frozen) == frozen     # idempotent
    with pytest.raises(InvalidInput, match="terminal-bench options"):
        TB.freeze_options({"cpus_cap": -1})
    assert options_from({"max_steps": 5}).max_steps == 5
    with pytest.raises(InvalidInput, match="terminal-bench options"):
        options_from({"max_stepz": 5})
    with pytest.raises(InvalidInput):
        options_from({"build_network": "internet"})


# -- catalog ---------------------------------------------------------------------------------------
def test_the_catalog_says_why_terminal_bench_is_unavailable(monkeypatch) -> None:
    monkeypatch.setattr(adapter, "availability", lambda: "needs a Docker engine for its task containers: none here")
    entry = TB.catalog_entry().model_dump(exclude_unset=True)
    assert entry["available"] is False and entry["reason"].startswith("needs a Docker engine")
    monkeypatch.setattr(adapter, "availability", lambda: None)
    entry = TB.catalog_entry().model_dump(exclude_unset=True)
    assert entry["available"] is True and "reason" not in entry and entry["kind"] == "agent"
    assert json.dumps(entry)


def test_a_trial_holds_its_cpu_cap_of_the_grading_budget(cases, monkeypatch) -> None:
    """Issue 31 (item 3): a trial's container CPU cap counts against the host's grading budget."""
    from srbench.sandbox import capacity

    budget = capacity.Budget(4)
    monkeypatch.setattr(capacity, "GRADING", budget)
    seen: list[float] = []

    async def factory(task, cell_id, options):
        seen.append(budget.used)
        return FakeEnvironment(reward_files={"/logs/verifier/reward.txt": b"1\n"})
    environment.use_factory(factory)
    try:
        asyncio.run(TB.converse(cases["hello-file"], FakeSession(scripted(SCRIPTS["hello-file"]["solve"]))))
    finally:
        environment.use_factory(None)
    want = environment.effective_limits(TB.task_of(cases["hello-file"]), options_from(None)).cpus
    assert seen == [want] and budget.used == 0


def test_a_trial_error_cell_counts_as_a_trial_error_not_as_ungraded() -> None:
    """A trial that ended without a reward fails its cell before any grade (issue 27): the benchmark row
    counts it under trial_errors; ungraded keeps the cells that never ran."""
    tb = get("terminal-bench-2.1")
    solved = stored_grade(correct=True, status="correct", details={"reward": 1.0, "stop_reason": "agent_done"})
    m = tb.report_metrics([solved, None, None], [None, "trial_error", None])
    assert m["trial_errors"] == 1 and m["ungraded"] == 1 and m["trials_with_reward"] == 1
    assert tb.metrics([solved, None, None])["trial_errors"] == 0          # the grades alone cannot tell
