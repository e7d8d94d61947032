"""The simulator's weak coder (issue 42): its wrong LiveCodeBench programs fail slowly, in the real sandbox —
CPU spent before a wrong answer, or a loop the per-test time limit ends — in both program modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from srbench.benchmarks.livecodebench import LiveCodeBench
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, answer_key_from_cases, reply_for
from srbench.simulate.code_answers import lcb_program
from srbench.stages.grading.code import base_limits


def _cases(tmp_path: Path) -> list:
    bench = LiveCodeBench()
    root = samples.write_livecodebench(tmp_path / "lcb")
    cases = bench.load({k: v.read_bytes() for k, v in bench.locate(root).items()}, seed=1, revision="t")
    modes = {c.answer["mode"]: c for c in cases}
    assert set(modes) == {"functional", "stdin"}
    return list(modes.values())


def _grade(sandbox, case, reply: str, timeout_s: int) -> tuple[str, dict]:
    bench = LiveCodeBench()
    options = bench.options({"test_timeout_s": timeout_s})
    planned = bench.jobs(case, [reply], options)
    limits = base_limits(options)
    reports = sandbox.run_jobs([{"module": j.module, "input": j.input, "limits": limits.child(j.wall_s)}
                                for j in planned.jobs], limits.model_copy(update={"wall_s": 60}))
    return bench.verdict({**reports[0], "module": planned.jobs[0].module})


@pytest.mark.parametrize("failing", ["slow", "loop"])
def test_a_weak_coders_wrong_programs_fail_slowly(sandbox, tmp_path: Path, failing: str) -> None:
    timeout_s = 1 if failing == "loop" else 6     # the slow one's 0.2 s of CPU may take longer on a busy host
    for case in _cases(tmp_path):
        verdict, details = _grade(sandbox, case, lcb_program(case.answer, False, failing, 0.2), timeout_s)  # type: ignore[arg-type]
        assert verdict == ("time_limit" if failing == "loop" else "wrong_answer"), (case.answer["mode"], details)
        assert _grade(sandbox, case, lcb_program(case.answer, True, failing, 0.2), timeout_s)[0] == "passed"


def test_the_share_of_looping_programs_is_the_models(tmp_path: Path) -> None:
    cases = [c.model_dump() for c in _cases(tmp_path)]
    key = answer_key_from_cases(cases)
    for share, word in ((0.0, "_end = time.process_time()"), (1.0, "while True:")):
        coder = SimModel("weak", skill=0.0, fail_busy_s=0.2, fail_loop_share=share)
        for c in cases:
            assert word in reply_for(coder, c["messages"], key).text
    plain = reply_for(SimModel("plain", skill=0.0), cases[0]["messages"], key).text
    assert "process_time" not in plain and "while True" not in plain
