"""A cell's stored grade is a pydantic model (issue 26, item 1); its bytes did not change (the
digests below were taken from the dict-literal code before the model)."""

from __future__ import annotations

import json

from tests.benchmarks.fixtures import conversation_record

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.judge import JUDGE_GRADER
from srbench.cas import ObjectStore, canonical_json, digest_bytes
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.stages.grading.grade import _grade, _grade_conversation

MCQ = Case(id="mmlu-pro/1", benchmark="mmlu-pro", messages=[Message(role="user", content="Q? A. x B. y C. z")],
           answer="B", metadata=CaseMetadata(stratum="math", category="math", src="s", option_count=3,
                                             question_id=1))
OPEN = Case(id="hle/x1", benchmark="hle", messages=[Message(role="user", content="What is 6*7?")], answer="42",
            metadata=CaseMetadata(stratum="Math", category="Math", answer_type="exactMatch", hle_id="x1"))
TASK = Case(id="terminal-bench/t", benchmark="terminal-bench-2.1", messages=[Message(role="user", content="do")],
            answer=None, metadata=CaseMetadata(stratum="files"))


def _call(store: ObjectStore, text: str | None, status: str = "completed", finish: str = "stop") -> str:
    return store.put_json({"kind": "call", "status": status, "text": text, "finish_reason": finish})


def _params(benchmark: str, grader: str) -> dict:
    bench = get_benchmark(benchmark)
    return {"benchmark": benchmark, "grader": grader, "published": bench.published_rule}


def _digests(store: ObjectStore) -> tuple[list[str], list[dict]]:
    case_mcq, case_open, case_task = (store.put_json(c.model_dump(mode="json")) for c in (MCQ, OPEN, TASK))
    mcq = _params("mmlu-pro", get_benchmark("mmlu-pro").grader_version)
    hle = _params("hle", JUDGE_GRADER)
    verdict = json.dumps({"verdict": "correct", "explanation": "same"})
    grades = [
        _grade(store, {"case": case_mcq, "call": _call(store, "The answer is (B)")}, mcq),
        _grade(store, {"case": case_mcq, "call": _call(store, "The answer is (B)", finish="length")}, mcq),
        _grade(store, {"case": case_mcq, "call": _call(store, None, "failed")}, mcq),
        _grade(store, {"case": case_open, "call": _call(store, "Answer: 42\nConfidence: 90%"),
                       "judge": _call(store, verdict)}, hle),
        _grade(store, {"case": case_open, "call": _call(store, "Answer: 42"), "judge": _call(store, None, "failed")},
               hle),                                                                  # judge_failed
        _grade(store, {"case": case_open, "call": _call(store, "Answer: 42"), "judge": _call(store, "no json")},
               hle),                                                                  # judge_error
        _grade_conversation(store, {"case": case_task, "conversation": store.put_json(conversation_record(
            benchmark="terminal-bench-2.1", outputs={"reward": 1.0, "turns": 3}).model_dump(mode="json", by_alias=True))},
            {"benchmark": "terminal-bench-2.1", "grader": get_benchmark("terminal-bench-2.1").grader_version}),
    ]
    assert [g["status"] for g in grades] == ["correct", "output_limit", "unparsed", "correct", "judge_failed",
                                             "judge_error", "correct"]
    return [digest_bytes(canonical_json(g)) for g in grades], grades


def test_grade_bytes_unchanged(tmp_path):
    digests, grades = _digests(ObjectStore(str(tmp_path / "cas")))
    assert digests == PINNED, [g["status"] for g in grades]


PINNED = [
    "b3:d4a84807a40284045ff8715decac267548d9dcb36b02a4be4e27be23090f067d",
    "b3:8c06b2d18fa6be700647c01485ee61b81300094efbf49f3d3690e508ae76e054",
    "b3:2c1876dc38c95cf291676f815bf109532de96e1dbd52c886269224aa5e3b7801",
    "b3:8cfa5ad9ad0a61cd915278c5d7c58926d5f0788c3eaa25ac8d6457fc8e70376e",
    "b3:0cef1dd0e08f549708cd57064400a0bf8efad6b7a350de5e788a86406815fa3b",
    "b3:4ad18a1d3ef852c45b92ed25e59936d3dd68b26fbc3ab9c88efce85b7827a914",
    "b3:cfe6419d291e0958db6c91604977746b25cc0b5a8e80d3c6b9b718f42a65c652",
]


def test_the_grade_model_is_frozen_documented_and_round_trips(tmp_path):
    import pytest
    from pydantic import ValidationError

    from srbench.schemas.grade import CodeGradeRecord, GradeRecord

    for model in (GradeRecord, CodeGradeRecord):
        assert not [n for n, f in model.model_fields.items() if not f.description], model.__name__
    _, grades = _digests(ObjectStore(str(tmp_path / "cas")))
    for stored in grades:
        assert GradeRecord.model_validate(stored).stored() == stored
    with pytest.raises(ValidationError):
        GradeRecord.model_validate({**grades[0], "sandbox": None})    # a code grade is not this kind


def test_code_grade_bytes_unchanged(tmp_path):
    """A code cell whose reply holds no program is graded without the sandbox (its receipt: None)."""
    from srbench.stages.grading.code import _grade as code_grade

    store = ObjectStore(str(tmp_path / "cas"))
    case = Case(id="livecodebench/x", benchmark="livecodebench", messages=[Message(role="user", content="Write f.")],
                answer={"mode": "functional", "fn_name": "f", "tests": [{"input": "1", "output": "2"}]},
                metadata=CaseMetadata(stratum="easy"))
    bench = get_benchmark("livecodebench")
    params = {"benchmark": "livecodebench", "grader": bench.grader_version, "options": bench.options(None),
              "receipt": "b3:" + "0" * 64}
    grades = [code_grade(store, {"case": store.put_json(case.model_dump(mode="json")),
                                 "call": _call(store, text, finish=finish)}, params)
              for text, finish in (("no code, sorry", "stop"), (None, "length"))]
    assert [(g["status"], g["sandbox"]) for g in grades] == [("failed", None), ("failed", None)]
    assert [digest_bytes(canonical_json(g)) for g in grades] == CODE_PINNED


CODE_PINNED = ["b3:4b417b2ad410bd1a12e24c5aa1058b5b02ffa2d7a73f4c00db6610218c9f828a"] * 2


def test_grade_rule_keys_are_the_dicts_of_before():
    """The rules' parameter models key the action cache exactly as the dict literals did (no regrade)."""
    from srbench.stages.grading.grade import ConversationGradeParams, GradeParams

    hle = get_benchmark("hle")
    assert GradeParams(benchmark="hle", grader=JUDGE_GRADER, published=hle.published_rule_for(JUDGE_GRADER),
                       judge_template_sha256=hle.template_sha256_for(JUDGE_GRADER)).key() == {
        "benchmark": "hle", "grader": JUDGE_GRADER, "published": hle.published_rule_for(JUDGE_GRADER),
        "judge_template_sha256": hle.template_sha256_for(JUDGE_GRADER)}
    assert GradeParams(benchmark="mmlu-pro", grader="g", published=None).key() == {
        "benchmark": "mmlu-pro", "grader": "g", "published": None}
    tb = get_benchmark("terminal-bench-2.1")
    assert ConversationGradeParams(benchmark=tb.id, grader=tb.grader_version, published=tb.published_rule,
                                   published_conversation=tb.published_conversation_rule).model_dump() == {
        "benchmark": tb.id, "grader": tb.grader_version, "published": tb.published_rule,
        "published_conversation": tb.published_conversation_rule}
    from srbench.stages.grading.code import CodeGradeParams

    lcb = get_benchmark("livecodebench")
    given = {"benchmark": lcb.id, "grader": lcb.grader_version, "options": lcb.options(None), "receipt": "b3:" + "0" * 64}
    assert CodeGradeParams(**given).model_dump() == given


def test_a_case_object_is_decoded_once_for_every_cell_that_grades_it(tmp_path, monkeypatch) -> None:
    """Issue 42 (item 2): the grade rule reads its case by digest once per process (the cells of one case, a run's
    targets, share it); the grades are the ones each cell's own decoding gives."""
    from srbench.stages.grading import grade as grade_mod

    store = ObjectStore(str(tmp_path / "s"))
    case = store.put_json(MCQ.model_dump(mode="json"))
    decoded: list[str] = []
    real = Case.model_validate
    monkeypatch.setattr(grade_mod, "_CASES", {})
    monkeypatch.setattr(grade_mod.Case, "model_validate", lambda v, **k: decoded.append("x") or real(v, **k))
    params = _params("mmlu-pro", get_benchmark("mmlu-pro").grader_version)
    got = [_grade(store, {"case": case, "call": _call(store, text)}, params) for text in ("B", "A", "B")]
    assert len(decoded) == 1 and [g["correct"] for g in got] == [True, False, True]
