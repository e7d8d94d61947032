"""Terminal-Bench's stored bytes stay put: the outputs, the stored trajectory, what the model was sent
and the grade of scripted trials on the fake environment are pinned by digest (taken from the
dict-literal code before the typed trial models of issue 26)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from srbench.benchmarks.conversation import CellStopped
from srbench.benchmarks.published_grades import published_json
from srbench.benchmarks.terminal_bench import environment
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.sandbox.task_container import BaseImageMissing
from srbench.simulate.terminal_tasks import SCRIPTS

from .fixtures import conversation_record
from .tbench_fakes import FakeEnvironment, FakeSession, reply, scripted
from .test_terminal_bench import TB, checkout, trial
from .test_terminal_bench import cases as tb_cases

__all__ = ["checkout", "tb_cases"]
TXT, JSON = "/logs/verifier/reward.txt", "/logs/verifier/reward.json"
BAD_CALLS = [{"id": "a", "type": "function", "function": {"name": "python", "arguments": "{}"}},
             {"id": "b", "type": "function", "function": {"name": "terminal", "arguments": "{oops"}},
             {"id": "c", "type": "function", "function": {"name": "terminal", "arguments": '{"command": ""}'}}]


def scenarios() -> dict[str, tuple[str, Any, Any]]:
    """name → (task, session factory, environment factory)."""
    return {
        "solved": ("hello-file", lambda: FakeSession(scripted(SCRIPTS["hello-file"]["solve"])),
                   lambda: FakeEnvironment(reward_files={TXT: b"1\n"})),
        "zero_json": ("fix-greeting", lambda: FakeSession(scripted(SCRIPTS["fix-greeting"]["fail"])),
                      lambda: FakeEnvironment(reward_files={JSON: b'{"reward": 0.0}'})),
        "no_reward": ("never-rewards", lambda: FakeSession(scripted(["true"])), FakeEnvironment),
        "partial": ("hello-file", lambda: FakeSession(scripted([])),
                    lambda: FakeEnvironment(reward_files={TXT: b"0.99"})),
        "verifier_timeout": ("hello-file", lambda: FakeSession(scripted([])),
                             lambda: FakeEnvironment(reward_files={TXT: b"1"},
                                                     outputs={"bash /tests/test.sh": (124, b"", b"", True)})),
        "max_steps": ("hello-file", lambda: FakeSession([reply(i, f"echo {i}") for i in range(10)],
                                                        options=TB.freeze_options({"max_steps": 3})),
                      lambda: FakeEnvironment(reward_files={TXT: b"0"})),
        "bad_calls": ("hello-file", lambda: FakeSession([reply(0, tool_calls=BAD_CALLS), reply(1, text="giving up")]),
                      lambda: FakeEnvironment(reward_files={TXT: b"0"})),
        "long_output": ("hello-file", lambda: FakeSession(scripted(["spew", "hang"])),
                        lambda: FakeEnvironment(reward_files={TXT: b"0"}, outputs={
                            "spew": (0, b"x" * 30_000 + b"END", b"e" * 9_000, False), "hang": (124, b"", b"", True)})),
        "failed_call": ("hello-file", lambda: FakeSession([reply(0, "ls"), reply(1, status="failed",
                                                                                 error_class="http_5xx", tool_calls=[])]),
                        lambda: FakeEnvironment(reward_files={TXT: b"1"})),
        "stopped": ("hello-file", lambda: FakeSession([reply(0, "ls"), CellStopped("budget_stop", "budget is spent")]),
                    lambda: FakeEnvironment(reward_files={TXT: b"1"})),
        "time_shared": ("hello-file", lambda: FakeSession(scripted(["ls"]), remaining=36.0),
                        lambda: FakeEnvironment(reward_files={TXT: b"0"})),
        "no_time": ("hello-file", lambda: FakeSession(scripted(["ls"]), remaining=0.0),
                    lambda: FakeEnvironment(reward_files={TXT: b"0"})),
    }


def _digest(value: Any) -> str:
    return digest_bytes(canonical_json(value))[3:15]


def _bytes_of(case: Any, session: FakeSession, out: Any) -> str:
    conv = conversation_record(final_text=out.final_text, outputs=out.outputs, error_class=out.error_class,
                               error=out.error)
    g = TB.grade_conversation(case, conv)
    return _digest({"outputs": out.outputs, "final": out.final_text, "error": [out.error_class, out.error],
                    "trajectory": out.trajectory, "stored": sorted(_digest(v) for v in session.objects.values()),
                    "sent": session.sent, "grade": [g.correct, g.status, g.extracted, g.details],
                    "published": published_json(TB.published_conversation(case, conv, g)), "row": TB.conversation_row(conv)})


PINNED = {
    "bad_calls": "17d908025281",
    "failed_call": "1d8813b2f29a",
    "long_output": "8419bec3bbfb",
    "max_steps": "1859cb2826f8",
    "no_reward": "a83f566f722b",
    "no_time": "835bddcf69e3",
    "partial": "dd1f3d546e01",
    "solved": "0e38be847194",
    "stopped": "8ae15e788edc",
    "time_shared": "53de16345398",
    "verifier_timeout": "1a5a4a99ef2a",
    "zero_json": "d931af86b492",
    "no_environment": "66d3152bed8d",
}


@pytest.mark.parametrize("name", sorted(scenarios()))
def test_trials_keep_their_bytes(tb_cases: dict[str, Any], name: str) -> None:
    task, session_of, env_of = scenarios()[name]
    session = session_of()
    out = trial(tb_cases[task], session, env_of())
    assert _bytes_of(tb_cases[task], session, out) == PINNED[name]


def test_an_environment_that_cannot_start_keeps_its_bytes(tb_cases: dict[str, Any]) -> None:
    async def factory(task: Any, cell_id: str, options: Any) -> Any:
        raise BaseImageMissing(f"task {task.name}: base image is not on the Docker engine")

    environment.use_factory(factory)
    session = FakeSession(scripted(["ls"]))
    try:
        out = asyncio.run(TB.converse(tb_cases["hello-file"], session))
    finally:
        environment.use_factory(None)
    assert _bytes_of(tb_cases["hello-file"], session, out) == PINNED["no_environment"]
