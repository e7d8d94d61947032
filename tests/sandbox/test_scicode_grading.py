"""SciCode grading through the code-grade rule (each backend): a stored conversation record (as
`converse` leaves it) and a case are graded in the sandbox against the fixture's test_data.h5; the
grade is cached by (case, conversation, options, receipt); a missing or wrong test-data file is a
sandbox fault, never the model's wrong answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fixtures import conversation_record
from benchmarks.test_scicode import FakeSession
from srbench.benchmarks import get
from srbench.cas import ObjectStore
from srbench.rules import Engine, MemoryActionCache
from srbench.sandbox import SandboxFault, scicode_data
from srbench.schemas.dataset import Case
from srbench.simulate import scicode_samples
from srbench.stages.grading import code as code_grade

from .conftest import backend_or_skip

pytest.importorskip("h5py", reason="writing the h5 fixture needs the fidelity extra (h5py)")
BENCH = get("scicode")
KEY = scicode_samples.answer_key()


@pytest.fixture(params=["docker", "bwrap"])
def env(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    code_grade.use_sandbox(backend_or_skip(request.param))
    root = scicode_samples.write_scicode(tmp_path / "src")
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(root / "test_data.h5"))
    store = ObjectStore(str(tmp_path / "cas"))
    cases = BENCH.load({"problems_test.jsonl": (root / "problems_test.jsonl").read_bytes()}, seed=1, revision="x")
    yield store, Engine(store, MemoryActionCache()), cases, root / "test_data.h5"
    code_grade.use_sandbox(None)


def _conversation(store: ObjectStore, case: Case, pick: dict[str, str]) -> str:
    """Run `converse` with replies from the sample key (right unless `pick` says wrong / a text)."""
    replies = []
    for s in case.answer["steps"]:
        entry = next(v for v in KEY.values() if v["scicode_step"] == s["step_number"])
        replies.append(entry[pick.get(s["step_number"], "right")] if pick.get(s["step_number"], "right")
                       in ("right", "wrong") else pick[s["step_number"]])
    out = asyncio.run(BENCH.converse(case, FakeSession(case, replies)))
    return store.put_json(conversation_record(benchmark="scicode", case_id=case.id, final_text=out.final_text,
                                              outputs=out.outputs).model_dump(mode="json", by_alias=True))


def _grade(store, engine, case: Case, conv: str, options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    digest, hit = code_grade.grade_code_cell(engine, store.put_json(case.model_dump(mode="json")), conv, "scicode",
                                             options)
    return store.get_json(digest), hit


def test_a_right_and_a_wrong_conversation(env) -> None:
    store, engine, cases, h5 = env
    options = {"test_data_sha256": scicode_data.file_sha256(h5)}
    right, hit = _grade(store, engine, cases[1], _conversation(store, cases[1], {}), options)
    assert not hit and right["correct"] and right["status"] == "correct"
    d = right["details"]
    assert (d["sub_steps_passed"], d["sub_steps_scored"]) == (3, 3) and [s["step"] for s in d["steps"]] == \
        ["9002.1", "9002.2", "9002.4"]
    assert right["sandbox"]["backend"] in ("docker", "bwrap") and d["test_data_sha256"] == options["test_data_sha256"]
    again, hit = _grade(store, engine, cases[1], _conversation(store, cases[1], {}), options)
    assert hit and again == right
    wrong, _ = _grade(store, engine, cases[0], _conversation(store, cases[0], {"9001.2": "wrong"}), options)
    assert not wrong["correct"] and wrong["status"] == "incorrect"
    assert [s["verdict"] for s in wrong["details"]["steps"]] == ["passed", "wrong_answer", "passed"]


def test_a_cut_reply_is_never_credited(env) -> None:
    store, engine, cases, h5 = env
    conv = store.get_json(_conversation(store, cases[0], {}))
    conv["outputs"]["finish_reasons"][1] = "length"
    g, _ = _grade(store, engine, cases[0], store.put_json(conv), {"test_data_sha256": scicode_data.file_sha256(h5)})
    assert g["correct"] is False and g["status"] == "output_limit"


def test_missing_or_foreign_test_data_is_a_sandbox_fault(env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store, engine, cases, h5 = env
    conv = _conversation(store, cases[0], {})
    options = {"test_data_sha256": scicode_data.file_sha256(h5)}
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(tmp_path / "absent.h5"))
    with pytest.raises(SandboxFault, match="not on this host"):
        _grade(store, engine, cases[0], conv, options)
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(h5))
    with pytest.raises(SandboxFault, match="grading needs 48b0272a"):          # the pin, by default
        _grade(store, engine, cases[0], conv, {})
    import h5py

    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.create_dataset("1.1/test1/var1", data=1.0)
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(other))
    with pytest.raises(SandboxFault, match="no readable targets for step 9001.1"):
        _grade(store, engine, cases[0], conv, {"test_data_sha256": scicode_data.file_sha256(other)})
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(h5))
    g, hit = _grade(store, engine, cases[0], conv, options)           # nothing was cached meanwhile
    assert not hit and g["correct"]


def test_a_single_call_record_is_not_graded_as_the_models_failure(env) -> None:
    store, engine, cases, h5 = env
    call = store.put_json({"kind": "call", "status": "completed", "text": "```python\npass\n```", "finish_reason": "stop"})
    with pytest.raises(SandboxFault, match="must be a conversation record"):
        _grade(store, engine, cases[0], call, {"test_data_sha256": scicode_data.file_sha256(h5)})
