"""The demo's Terminal-Bench pieces without Docker: its two toy tasks (native layout, named as
sr-bench's), the scripted terminal agent behind the simulated router, the hook chain with the τ
roles, the local base image lookup, and the demo's reason when it leaves Terminal-Bench out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from srbench.benchmarks import all_benchmarks, get
from srbench.benchmarks.sources import read_files
from srbench.benchmarks.terminal_bench import adapter
from srbench.benchmarks.terminal_bench.agent import TOOL
from srbench.cli import demo
from srbench.simulate.behaviour import RouterRule
from srbench.simulate.scripted import Scripted, first_of
from srbench.simulate.tau_script import script_hook
from srbench.simulate.terminal_tasks import (
    DEMO_TASKS,
    SCRIPTS,
    TASKS,
    agent_script,
    local_base_image,
    write_demo_tasks,
)

TB = get("terminal-bench-2.1")
BASE = "sr-bench-grader-base:0123456789ab"


def test_the_demo_tasks_are_sr_benchs_toy_tasks_in_the_native_layout(tmp_path: Path) -> None:
    root = write_demo_tasks(tmp_path / "tb", BASE)
    assert sorted(p.name for p in (root / "tasks").iterdir()) == ["toy-fix-greeting", "toy-hello-file"]
    cases = TB.load(read_files(TB.locate(root)), seed=1, revision="sr-bench-toy-tasks-v1")
    assert [c.id for c in cases] == ["terminal-bench-2.1/toy-fix-greeting", "terminal-bench-2.1/toy-hello-file"]
    for c in cases:
        files = c.answer["files"]
        assert set(files) >= {"task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh",
                              "solution/solve.sh"}
        assert (root / "tasks" / c.metadata.task / "environment" / "Dockerfile").read_text().startswith(f"FROM {BASE}\n")
        assert c.metadata.has_solution is True
    hello = root / "tasks" / "toy-hello-file" / "task.toml"
    assert 'name = "sr-bench-toy/hello-file"' in hello.read_text() and 'schema_version = "1.1"' in hello.read_text()
    assert {c.metadata.stratum for c in cases} == {TASKS[t]["difficulty"] for t in DEMO_TASKS}


def _body(model: str, task: str, results: int, tools: bool = True) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are an autonomous agent."},
                                  {"role": "user", "content": TASKS[task]["instruction"]}]
    for i in range(results):
        msgs += [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "type": "function",
                                                                      "function": {"name": "terminal",
                                                                                   "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": f"c{i}", "content": "exit 0"}]
    return {"model": model, "messages": msgs, **({"tools": [TOOL]} if tools else {})}


def _command(reply: Scripted | None) -> str | None:
    assert reply is not None
    return reply.tool_calls[0]["arguments"]["command"] if reply.tool_calls else None


def test_the_router_plays_the_model_its_rule_picks_each_turn() -> None:
    short = RouterRule(strong="sim-large", weak="sim-small", long_prompt_chars=10_000)
    hook = agent_script({"sim-large": "solve", "sim-small": "fail"}, router=short)
    task = "fix-greeting"
    assert _command(hook(_body("MoM", task, 0))) == SCRIPTS[task]["fail"][0]        # short prompt: weak model
    assert _command(hook(_body("sim-large", task, 1))) == SCRIPTS[task]["solve"][1]
    assert _command(hook(_body("MoM", task, len(SCRIPTS[task]["fail"])))) is None      # weak's script is done
    long = RouterRule(strong="sim-large", weak="sim-small", long_prompt_chars=1)
    assert _command(agent_script({"sim-large": "solve"}, router=long)(_body("MoM", task, 0))) == SCRIPTS[task]["solve"][0]
    assert agent_script({"sim-large": "solve"})(_body("MoM", task, 0)) is None          # no router: not played


def test_the_demo_chain_answers_tau_roles_and_terminal_turns_apart() -> None:
    router = RouterRule(strong="sim-large", weak="sim-small")
    hook = first_of(script_hook({"sim-large"}, router), agent_script({"sim-large": "solve"}, router=router))
    assert _command(hook(_body("sim-large", "hello-file", 0))) == SCRIPTS["hello-file"]["solve"][0]
    tau = {"model": "sim-large", "tools": [TOOL], "messages": [
        {"role": "system", "content": "You are a customer service agent.\n<policy>be kind</policy>"},
        {"role": "user", "content": "Hi, where is my order?"}]}
    got = hook(tau)
    assert got is not None and not got.tool_calls and "order" in got.content.lower()
    assert hook(_body("sim-large", "hello-file", 0, tools=False)) is None   # a plain question: the model answers


class _Images:
    def __init__(self, images: list[dict[str, Any]]) -> None:
        self.listed = images

    def images(self, name: str) -> list[dict[str, Any]]:
        return [i for i in self.listed if any(t.startswith(name + ":") for t in i.get("RepoTags") or [])]


def test_the_local_base_image_is_the_grading_base_first() -> None:
    both = _Images([{"RepoTags": ["sr-bench-grader:aa"]}, {"RepoTags": ["sr-bench-grader-base:bb"]}])
    assert local_base_image(both) == "sr-bench-grader-base:bb"
    assert local_base_image(_Images([{"RepoTags": ["sr-bench-grader:aa"]}])) == "sr-bench-grader:aa"
    assert local_base_image(_Images([{"RepoTags": ["debian:12"]}, {"RepoTags": None}])) is None


def test_the_demo_says_why_it_leaves_terminal_bench_out(monkeypatch) -> None:
    everything_else = {b.id for b in all_benchmarks()} - {"terminal-bench-2.1"}
    monkeypatch.setattr(adapter, "availability", lambda: "needs a Docker engine for its task containers: none here")
    assert demo.not_run(everything_else) == [
        "terminal-bench-2.1: not run here — needs a Docker engine for its task containers: none here"]
    monkeypatch.setattr(adapter, "availability", lambda: None)
    assert demo.not_run(everything_else) == [f"terminal-bench-2.1: not run here — {demo.NO_TB_BASE}"]
    monkeypatch.setitem(demo.LEFT_OUT, "scicode", "writing its sample's test_data.h5 needs h5py on this host")
    assert demo.not_run(everything_else - {"scicode"})[0] == (
        "scicode: not run here — writing its sample's test_data.h5 needs h5py on this host")
