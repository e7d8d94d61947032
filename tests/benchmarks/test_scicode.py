"""SciCode without a sandbox: the native loader (fixture, GitHub layout, the wheel's mirror), the
multi-turn conversation driven through a fake CellSession, extraction, step scripts, options, metrics
and the test-data checks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.code import CodeJobs
from srbench.benchmarks.conversation import CellStopped, Reply
from srbench.benchmarks.scicode import SciCode
from srbench.benchmarks.scicode_protocol import (
    INITIAL_PROMPT,
    SUBPROBLEM_PROMPT,
    SciCodeAnswer,
    extract_code,
    step_prompt,
    step_scripts,
)
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.sandbox import scicode_data
from srbench.sandbox.base import Receipt
from srbench.schemas.dataset import Case
from srbench.schemas.grade import StoredGrade
from srbench.simulate import scicode_samples

from .fixtures import conversation_record, stored_grade

BENCH: SciCode = get("scicode")  # type: ignore[assignment]


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _cases() -> list[Case]:
    return BENCH.load({"problems_test.jsonl": _jsonl(scicode_samples.rows())}, seed=1, revision="fixture")


class FakeSession:
    """A CellSession that answers each call from a list (a Reply, a text, or an exception to raise)."""

    def __init__(self, case: Case, answers: list[Any]) -> None:
        self.cell_id, self.case, self.target_id, self.seed = "c1", case, "t", 1
        self.answers = list(answers)
        self.sent: list[list[dict[str, Any]]] = []

    async def call(self, messages, *, role="subject", tools=None, tool_choice=None, max_tokens=None) -> Reply:
        assert role == "subject" and tools is None
        self.sent.append(json.loads(json.dumps(messages)))
        got = self.answers.pop(0)
        if isinstance(got, BaseException):
            raise got
        if isinstance(got, Reply):
            return got
        return Reply(index=len(self.sent) - 1, role="subject", target_id="t", status="completed", text=got,
                     finish_reason="stop")

    def store(self, value) -> str:
        raise AssertionError("SciCode stores nothing itself")

    def remaining_s(self) -> float:
        return 600.0


def test_native_rows_become_whole_problems() -> None:
    cases = _cases()
    assert [c.id for c in cases] == ["scicode/9001", "scicode/9002"]
    c = cases[1]
    assert c.metadata.stratum == "all" and c.metadata.step_count == 4 and c.metadata.scored_steps == 3
    assert c.metadata.test_count == 3 and c.metadata.protocol == "sr-bench-scicode-multiturn-v1"
    assert [m.role for m in c.messages] == ["system", "user"]
    assert c.messages[0].content == INITIAL_PROMPT.format(required_dependencies="import numpy as np\nfrom scipy import sparse")
    assert c.messages[1].content == step_prompt(scicode_samples.rows()[1]["sub_steps"][0])
    assert [s["step_number"] for s in c.answer["steps"]] == ["9002.1", "9002.2", "9002.3", "9002.4"]
    assert c.answer["steps"][2]["test_cases"] == []
    assert c.metadata.model_extra["source_record"] == scicode_samples.rows()[1]


def test_the_prompts_are_the_upstream_templates() -> None:
    assert INITIAL_PROMPT.startswith("\nPROBLEM DESCRIPTION:\nYou will be provided with a description of a scientific")
    assert "{required_dependencies}\n\nYou MUST NOT import these dependencies anywhere" in INITIAL_PROMPT
    assert INITIAL_PROMPT.endswith("The response must be formatted as ```python```\n")
    assert SUBPROBLEM_PROMPT.startswith("\nImplement code to solve the following subproblem, using the description")
    assert ("SUBPROBLEM DESCRIPTION:\n{step_description_prompt}\n\nFUNCTION HEADER:\n{function_header}\n\n"
            "RETURN LINE:\n{return_line}\n\nExample:\n```python\n# Background:") in SUBPROBLEM_PROMPT
    provided = {"step_description_prompt": "d", "function_header": "def f(x):", "return_line": None}
    assert "RETURN LINE:\nNone\n" in step_prompt(provided)          # as upstream's str.format renders null


def test_a_stratum_comes_from_a_domain_field_when_the_rows_have_one() -> None:
    row = dict(scicode_samples.rows()[0], domain="Physics")
    assert BENCH.load({"problems_test.jsonl": _jsonl([row])}, seed=1, revision="x")[0].metadata.stratum == "Physics"


def test_locate_finds_the_hf_and_the_github_names(tmp_path: Path) -> None:
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "problems_test.jsonl").write_bytes(_jsonl(scicode_samples.rows()))
    gh = tmp_path / "gh" / "eval" / "data"
    gh.mkdir(parents=True)
    (gh / "problems_all.jsonl").write_bytes(_jsonl(scicode_samples.rows()))
    assert list(BENCH.locate(tmp_path / "hf")) == ["problems_test.jsonl"]
    assert list(BENCH.locate(tmp_path / "gh")) == ["eval/data/problems_all.jsonl"]
    files = {"eval/data/problems_all.jsonl": (gh / "problems_all.jsonl").read_bytes()}
    assert len(BENCH.load(files, seed=1, revision="x")) == 2
    with pytest.raises(InvalidInput, match="no problems_test.jsonl"):
        BENCH.locate(tmp_path)
    with pytest.raises(InvalidInput, match="is not problems_test.jsonl"):
        BENCH.locate(Path(__file__))


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.pop("sub_steps"), "missing field 'sub_steps'"),
    (lambda r: r.update(sub_steps=[]), "has no sub_steps"),
    (lambda r: r["sub_steps"][0].update(step_number="77.1"), "is not 9001.<k>"),
    (lambda r: r["sub_steps"][0].update(test_cases="assert x"), "must be a list of strings"),
    (lambda r: r["sub_steps"][1].update(step_number="9001.1"), "repeats a step_number"),
    (lambda r: [s.update(test_cases=[]) for s in r["sub_steps"]], "no step with test cases"),
    (lambda r: r.update(required_dependencies=["import numpy"]), "must be a string of import lines"),
])
def test_malformed_rows_are_refused_naming_the_line(mutate, message: str) -> None:
    rows = scicode_samples.rows()
    mutate(rows[0])
    with pytest.raises(InvalidInput, match=message) as info:
        BENCH.load({"problems_test.jsonl": _jsonl(rows)}, seed=1, revision="x")
    assert "line 1" in info.value.message
    with pytest.raises(InvalidInput, match="duplicate problem_id"):
        BENCH.load({"problems_test.jsonl": _jsonl(scicode_samples.rows() * 2)}, seed=1, revision="x")


def test_the_wheel_is_the_offline_mirror() -> None:
    try:
        package, files = BENCH.mirror_files()
    except SourceUnavailable:
        pytest.skip("the nvidia-scicode wheel is not installed (pip install --no-deps nvidia-scicode==26.3)")
    assert package.startswith("nvidia-scicode==") and list(files) == ["problems_test.jsonl"]
    cases = BENCH.load(files, seed=1, revision=package)
    # the research notes' counts: 65 test problems, 291 steps, 288 scored (13.6, 62.1, 76.3 provided)
    assert len(cases) == 65 and sum(c.metadata.step_count for c in cases) == 291
    assert sum(c.metadata.scored_steps for c in cases) == 288
    unscored = [s["step_number"] for c in cases for s in c.answer["steps"] if not s["test_cases"]]
    assert sorted(unscored) == ["13.6", "62.1", "76.3"]


def test_converse_sends_one_call_per_step_carrying_the_conversation() -> None:
    case = _cases()[1]
    answers = [f"step {i}\n```python\nimport numpy as np\ndef f{i}():\n    return {i}\n```" for i in range(4)]
    session = FakeSession(case, answers)
    out = asyncio.run(BENCH.converse(case, session))
    assert len(session.sent) == 4 and out.error_class is None
    first, last = session.sent[0], session.sent[-1]
    assert first == [m.model_dump() for m in case.messages]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in last if m["role"] == "assistant"] == answers[:3]     # its own earlier replies
    steps = case.metadata.model_extra["source_record"]["sub_steps"]
    assert [m["content"] for m in last if m["role"] == "user"] == [step_prompt(s) for s in steps]
    assert out.outputs["replies"] == answers and out.outputs["finish_reasons"] == ["stop"] * 4
    assert "# step 9002.4\n\ndef f3():" in out.final_text and "import numpy" not in out.final_text
    assert BENCH.conversation_texts(conversation_record(outputs=out.outputs)) == (answers, "stop")


def test_an_interrupted_conversation_ends_the_cell() -> None:
    case = _cases()[0]
    session = FakeSession(case, ["```python\ndef scale(v, a):\n    return v\n```", CellStopped("cancelled", "run cancelled")])
    with pytest.raises(CellStopped):
        asyncio.run(BENCH.converse(case, session))
    assert len(session.sent) == 2


def test_a_failed_step_call_ends_the_conversation_as_that_failure() -> None:
    case = _cases()[0]
    failed = Reply(index=1, role="subject", target_id="t", status="failed", text=None, error_class="http_error",
                   error="HTTP 500")
    session = FakeSession(case, ["```python\npass\n```", failed, "never sent"])
    out = asyncio.run(BENCH.converse(case, session))
    assert len(session.sent) == 2 and out.final_text is None
    assert (out.error_class, out.error) == ("http_error", "HTTP 500") and out.outputs["replies"] == ["```python\npass\n```"]


@pytest.mark.parametrize("reply, code", [
    ("text\n```python\nx = 1\n```\nmore\n```python\ny = 2\n```", "\nx = 1\n"),
    ("```\nz = 3\n```", "\nz = 3\n"),
    ("no fence: w = 4", "no fence: w = 4"),
    ("```python\nimport numpy as np\nfrom scipy import sparse\n    import os\ndef f():\n    return np.pi\n```",
     "\n\ndef f():\n    return np.pi\n"),     # ^\\s* spans the newlines, as upstream
    ("", ""),
    (None, ""),
])
def test_extraction_is_scicodes(reply: str | None, code: str) -> None:
    assert extract_code(reply) == code


def test_each_scored_step_script_holds_the_earlier_steps_then_the_tests() -> None:
    case = _cases()[1]
    replies = [f"```python\ndef s{i}():\n    return {i}\n```" for i in range(4)]
    scripts = step_scripts(SciCodeAnswer.model_validate(case.answer), replies)
    assert scripts[2] is None and [s[0] for s in scripts if s] == ["9002.1", "9002.2", "9002.4"]
    last = scripts[3][1]
    assert last.startswith("import numpy as np\nfrom scipy import sparse\n\ndef s0():\n    return 0\n\n\n")
    assert last.index("def s2()") < last.index("def s3()") < last.index("from scicode.parse.parse import")
    assert ("\n\nfrom scicode.parse.parse import process_hdf5_to_tuple\n\n"
            "targets = process_hdf5_to_tuple('9002.4', 1)\ntarget = targets[0]\n\n"
            "from scicode.compare.cmp import are_dicts_close\n") in last


def test_jobs_need_every_reply_and_run_each_scored_step() -> None:
    case = _cases()[1]
    options = BENCH.options(None)
    planned = BENCH.jobs(case, ["```python\npass\n```"] * 4, options)
    assert len(planned.jobs) == 3 and planned.steps == ("9002.1", "9002.2", "9002.4")
    job = planned.jobs[0]
    assert job.module == "script_child.py" and job.wall_s == 60
    assert set(job.input["modules"]) == {"scicode.parse.parse", "scicode.compare.cmp"}
    assert job.input["env"]["SRBENCH_SCICODE_H5"] == scicode_data.INSIDE
    why = BENCH.jobs(case, ["x", None, "y", "z"], options)
    assert why.jobs == () and why.reason and "3 of 4 replies" in why.reason
    g = BENCH.judge(case, [], why)
    assert g.correct is False and g.status == "failed" and g.details["sub_steps_scored"] == 3


def test_judge_resolves_only_when_every_scored_step_passes() -> None:
    case = _cases()[1]
    ctx = CodeJobs(steps=("9002.1", "9002.2", "9002.4"), test_data_sha256="ab" * 32)
    ok = BENCH.judge(case, [("passed", {"exit": 0})] * 3, ctx)
    assert ok.correct and ok.details["sub_steps_passed"] == 3 and ok.details["verdict"] == "passed"
    tb = 'Traceback (most recent call last):\n  File "/tmp/srbench/job1/test_step.py", line 9, in <module>\nAssertionError\n'
    bad = BENCH.judge(case, [("passed", {}), ("wrong_answer", {"exit": 1, "stderr_tail": tb}), ("passed", {})], ctx)
    assert not bad.correct and bad.details["verdict"] == "wrong_answer" and bad.details["sub_steps_passed"] == 2
    assert bad.details["steps"][1] == {"step": "9002.2", "verdict": "wrong_answer", "exit": 1, "stderr_tail": tb}
    reader = ('Traceback (most recent call last):\n  File "/tmp/srbench-mods-x/scicode/parse/parse.py", line 99, in '
              'process_hdf5_to_tuple\nKeyError: "Unable to open object"\n')
    with pytest.raises(scicode_data.TestDataMissing, match="no readable targets for step 9002.1"):
        BENCH.judge(case, [("runtime_error", {"stderr_tail": reader})] + [("passed", {})] * 2, ctx)


def test_metrics_give_the_resolve_rate_and_the_sub_step_pass_rate() -> None:
    pin = BENCH.default_options["test_data_sha256"]

    def grade(ok: bool, passed: int, scored: int, sha: str = pin) -> StoredGrade:
        steps = [{"step": str(i), "verdict": "passed" if i < passed else "wrong_answer"} for i in range(scored)]
        return stored_grade(correct=ok, sandbox=None, details={"sub_steps_passed": passed, "sub_steps_scored": scored,
                                                               "steps": steps, "test_data_sha256": sha})

    m = BENCH.metrics([grade(True, 3, 3), grade(False, 1, 4), None])["scicode"]
    assert m["main_problem_resolve_rate"] == pytest.approx(1 / 3) and m["problems_graded"] == 2
    assert m["sub_step_pass_rate"] == pytest.approx(4 / 7) and m["step_verdicts"] == {"passed": 4, "wrong_answer": 3}
    assert m["test_data_pinned"] is True
    assert BENCH.metrics([grade(True, 1, 1, "cd" * 32)])["scicode"]["test_data_pinned"] is False
    assert BENCH.metrics([])["scicode"]["main_problem_resolve_rate"] is None


def test_options_are_checked() -> None:
    assert BENCH.options(None)["test_data_sha256"] == scicode_data.PINNED_SHA256
    assert BENCH.options({"step_timeout_s": 5})["step_timeout_s"] == 5
    with pytest.raises(InvalidInput, match="64 lowercase hex"):
        BENCH.options({"test_data_sha256": "not-a-hash"})
    with pytest.raises(InvalidInput, match="unknown keys"):
        BENCH.options({"timeout": 5})


def _receipt(sha: str | None = None, packages: dict[str, str] | None = None) -> Receipt:
    return Receipt(backend="bwrap", rootfs_digest="0" * 64, python_packages=packages or {},
                   scicode_test_data_sha256=sha)


def test_the_test_data_must_be_there_and_be_the_expected_file(tmp_path: Path, monkeypatch) -> None:
    h5 = tmp_path / "test_data.h5"
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(h5))
    options = BENCH.options(None)
    with pytest.raises(scicode_data.TestDataMissing, match="not on this host") as info:
        BENCH.mounts(options, _receipt())
    assert "setup --benchmark scicode --install" in info.value.message and "\n" not in info.value.message
    h5.write_bytes(b"not the pinned file")
    with pytest.raises(scicode_data.TestDataMissing, match="has sha256"):
        BENCH.mounts(options, _receipt())
    sha = scicode_data.file_sha256(h5)
    assert BENCH.mounts(BENCH.options({"test_data_sha256": sha}), _receipt()) == {scicode_data.INSIDE: str(h5)}
    assert BENCH.mounts(options, _receipt(scicode_data.PINNED_SHA256)) == {}          # baked into the image
    h5.unlink()
    assert BENCH.mounts(options, _receipt(scicode_data.PINNED_SHA256)) == {}


def test_setup_needs_name_the_packages_and_the_data(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(tmp_path / "none.h5"))
    needs = BENCH.setup_needs(_receipt(packages={"numpy": "1"}))
    assert any("lacks scipy, h5py, sympy, matplotlib" in n for n in needs)
    assert any("not on this host" in n for n in needs)
    full = dict.fromkeys(("numpy", "scipy", "h5py", "sympy", "matplotlib"), "x")
    assert BENCH.setup_needs(_receipt(scicode_data.PINNED_SHA256, full)) == []
    assert "64 lowercase hex" in BENCH.setup_needs(_receipt(packages=full), {"test_data_sha256": "x"})[0]


def test_the_plain_grader_is_refused() -> None:
    with pytest.raises(InvalidInput, match="graded in the sandbox"):
        BENCH.grade(_cases()[0], "anything")
    with pytest.raises(InvalidInput, match="graded in the sandbox"):
        BENCH.grade_conversation(_cases()[0], conversation_record(final_text="x"))


def test_the_simulated_models_answer_every_step_of_the_sample() -> None:
    from srbench.simulate.behaviour import SimModel, answer_key_from_cases, reply_for

    cases = _cases()
    key = {**answer_key_from_cases(cases), **scicode_samples.answer_key()}
    good, bad = SimModel("good", skill=1.0), SimModel("bad", skill=0.0)
    for case in cases:
        messages = [m.model_dump() for m in case.messages]
        for i, step in enumerate(case.metadata.model_extra["source_record"]["sub_steps"]):
            if i:
                messages += [{"role": "assistant", "content": "earlier"}, {"role": "user", "content": step_prompt(step)}]
            right, wrong = reply_for(good, messages, key), reply_for(bad, messages, key)
            gold = next(s for p in scicode_samples.PROBLEMS for s in p["steps"] if s["row"] is not None
                        and s["row"]["step_number"] == step["step_number"])
            assert right.correct is True and gold["right"] in right.text and "```python" in right.text
            assert wrong.correct is False and gold["wrong"] in wrong.text


def test_the_test_data_is_found_under_sr_bench_home_by_default(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SR_BENCH_SCICODE_TEST_DATA", raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path))
    h5 = tmp_path / "assets" / "scicode" / "test_data.h5"
    h5.parent.mkdir(parents=True)
    h5.write_bytes(b"data")
    options = BENCH.options({"test_data_sha256": scicode_data.file_sha256(h5)})
    assert BENCH.mounts(options, _receipt()) == {scicode_data.INSIDE: str(h5)}
