"""LiveCodeBench (code generation, release_v6): native JSONL rows → one case per problem, graded by
running the tests in the offline sandbox.

Native files: ``test.jsonl``, ``test2.jsonl`` … ``test6.jsonl`` (release_vN = the first N; a local copy
may hold a subset, and the files read are recorded). Row fields: ``question_title``,
``question_content``, ``platform``, ``question_id``, ``contest_id``, ``contest_date``, ``starter_code``,
``difficulty``, ``public_test_cases`` (JSON string), ``private_test_cases`` (the same JSON, or
base64 → zlib → pickle → that JSON string), ``metadata`` (JSON string; ``func_name`` for functional
problems). Case id ``livecodebench/<question_id>``; stratum = ``difficulty``.

Private tests in pickled form are decoded by an unpickler that resolves **no** global at all, so
the only thing it can build is plain data (the upstream payload is one pickled string): no code
runs while reading. At the pinned revision every file's size and sha256 are held to the pin table
(benchmarks/pins.py) before it is read, and all six files must be there.

Prompt: the official chat prompt (``lcb_runner/prompts/code_generation.py``): the system message
and a user message with the question, the format instruction (starter code, or stdin), and
``### Answer: (use the provided format with backticks)``. Extraction (``lcb-first-fence``): the
lines between the first two lines that contain a triple backtick; fewer than two → no program.
Grading: every public and private test in the sandbox under LiveCodeBench's own rules
(``sandbox/harness/lcb_child.py``), ``test_timeout_s`` (6) per test, the problem passes iff every test
passes; pass@1 per problem with one sample.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.code import CodeBenchmark, CodeJobs, GradingOptions, LcbJobInput, SandboxJob, Verdict
from srbench.benchmarks.figures import CodeDetails, LcbFigures
from srbench.benchmarks.native import read_jsonl_cases
from srbench.benchmarks.pins import PINS
from srbench.benchmarks.published import LCB_RULE, code_grade
from srbench.benchmarks.published_grades import CodePublished
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.grade import StoredGrade
from srbench.schemas.wire import WireJSON

FILES = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl")
PINNED_SHA256: dict[str, str] = {n: p.sha256 for n, p in PINS["livecodebench"].files.items()}   # the pin table's
SYSTEM = ("You are an expert Python programmer. You will be given a question (problem specification) and will "
          "generate a correct Python program that matches the specification and passes all tests. You will NOT "
          "return anything except for the program.")
FORMAT_STARTER = ("### Format: You will use the following starter code to write the solution to the problem and "
                  "enclose your code within delimiters.\n")
FORMAT_STDIN = ("### Format: Read the inputs from stdin solve the problem and write the answer to stdout (do not "
                "directly test on the sample inputs). Enclose your code within delimiters as follows.\n")
ANSWER = "### Answer: (use the provided format with backticks)\n\n"
DIFFICULTIES = ("easy", "medium", "hard")
GRADER = "sr-bench-lcb-sandbox-v1"


class LcbTest(BaseModel):
    """One test of a problem, as LiveCodeBench's rows give it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    input: str
    """The test's input: stdin text, or the call's arguments one JSON value a line (functional)."""
    output: str
    """The expected output."""
    testtype: str
    """``stdin`` or ``functional`` (as the row says; ``stdin`` when it says nothing)."""


class LcbAnswer(BaseModel):
    """A case's reference (``Case.answer``): how the program is called and every test it must pass."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    mode: Literal["functional", "stdin"]
    """A method of ``class Solution`` called per test (functional), or a program reading stdin."""
    fn_name: str | None
    """The method's name (functional problems only)."""
    tests: list[LcbTest]
    """The public tests, then the private ones."""
    public_count: int
    """How many of `tests` are public."""


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused global {module}.{name} in private tests")


def decode_private(text: str, where: str) -> list[LcbTest]:
    """Private tests as a list of {input, output, testtype}: plain JSON, or base64 → zlib → pickle."""
    try:
        tests = json.loads(text)
    except ValueError:
        try:
            raw = zlib.decompress(base64.b64decode(text.encode("ascii"), validate=False))
            inner = _NoGlobals(io.BytesIO(raw)).load()
            tests = json.loads(inner) if isinstance(inner, str | bytes) else inner
        except (ValueError, zlib.error, pickle.UnpicklingError, EOFError, TypeError, UnicodeEncodeError) as exc:
            raise InvalidInput(f"{where}: private_test_cases is neither JSON nor base64/zlib/pickle ({exc})") from exc
    return _tests(tests, where)


def _tests(value: Any, where: str) -> list[LcbTest]:
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: test cases must be a JSON list")
    out = []
    for i, t in enumerate(value):
        if not isinstance(t, dict) or not isinstance(t.get("input"), str) or not isinstance(t.get("output"), str):
            raise InvalidInput(f"{where}: test {i} needs string input and output")
        if not isinstance(t.get("testtype", "stdin"), str):
            raise InvalidInput(f"{where}: test {i} has a testtype that is not a string")
        out.append(LcbTest(input=t["input"], output=t["output"], testtype=t.get("testtype", "stdin")))
    return out


def user_prompt(question: str, starter: str) -> str:
    text = f"### Question:\n{question}\n\n"
    if starter:
        text += FORMAT_STARTER + f"```python\n{starter}\n```\n\n"
    else:
        text += FORMAT_STDIN + "```python\n# YOUR CODE HERE\n```\n\n"
    return text + ANSWER


def extract_code(text: str | None) -> str:
    """LiveCodeBench's extraction: the lines between the first two lines holding a triple backtick."""
    if not text:
        return ""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[0] + 1: fences[1]])


def _check_row(row: WireJSON, where: str) -> None:
    """A native row's fields have LiveCodeBench's types, else a one-line error naming the field."""
    for field in ("question_id", "question_content", "difficulty", "public_test_cases", "private_test_cases"):
        if field not in row:
            raise InvalidInput(f"{where}: missing field {field!r}")
    qid = row["question_id"]
    if isinstance(qid, bool) or not isinstance(qid, str | int) or not str(qid).strip():
        raise InvalidInput(f"{where}: question_id {qid!r} is not a non-empty string")
    if not isinstance(row["question_content"], str) or not row["question_content"].strip():
        raise InvalidInput(f"{where}: question_content is empty or not a string")
    for field in ("public_test_cases", "private_test_cases", "metadata", "starter_code"):
        if not isinstance(row.get(field, ""), str) and not (field in ("metadata", "starter_code") and row[field] is None):
            raise InvalidInput(f"{where}: {field} is not a string; LiveCodeBench's rows hold it as a string (of JSON "
                               "for the tests and metadata): use the dataset's own jsonl files")


def row_to_case(row: WireJSON, where: str, revision: str) -> Case:
    _check_row(row, where)
    qid = str(row["question_id"])
    difficulty = str(row["difficulty"]).lower()
    if difficulty not in DIFFICULTIES:
        raise InvalidInput(f"{where}: difficulty {row['difficulty']!r} is not easy, medium or hard")
    try:
        public = _tests(json.loads(row["public_test_cases"]), where)
        meta = json.loads(row.get("metadata") or "{}")
    except ValueError as exc:
        raise InvalidInput(f"{where}: public_test_cases or metadata is not JSON") from exc
    private = decode_private(row["private_test_cases"], where)
    fn_name = meta.get("func_name") if isinstance(meta, dict) else None
    if fn_name is not None and not isinstance(fn_name, str):
        raise InvalidInput(f"{where}: metadata.func_name {fn_name!r} is not a string")
    starter = str(row.get("starter_code") or "")
    mode = "functional" if fn_name else "stdin"
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=user_prompt(
        row["question_content"], starter))]
    metadata = CaseMetadata(stratum=difficulty, source_revision=revision, task_id=qid,
                            platform=row.get("platform"), contest_date=row.get("contest_date"),
                            question_title=row.get("question_title"), fn_name=fn_name, mode=mode,
                            test_count=len(public) + len(private))
    answer = LcbAnswer(mode=mode, fn_name=fn_name, tests=public + private, public_count=len(public))
    return Case(id=f"livecodebench/{qid}", benchmark=LiveCodeBench.id, messages=messages, answer=answer.model_dump(),
                metadata=metadata)


class LiveCodeBench(CodeBenchmark):
    id = "livecodebench"
    title = "LiveCodeBench (code generation, release_v6)"
    capability = "v6 cumulative coding"
    kind = "code"
    weight = 10
    profiles = {"smoke": 2, "quick": 30, "standard": 150}
    strata = "difficulty"
    grader_version = GRADER
    published_rule = LCB_RULE
    source = SourcePin(
        url="https://huggingface.co/datasets/livecodebench/code_generation_lite",
        revision="0fe84c3912ea0c4d4a78037083943e8f0c4dd505",
        files=FILES,
        license_url="https://huggingface.co/datasets/livecodebench/code_generation_lite",
        access_note="release_v6 = test.jsonl … test6.jsonl; graded in the offline sandbox.",
    )
    default_options = {"test_timeout_s": 6, "grade_timeout_s": 300, "memory_mb": 2048}

    def locate(self, root: Path) -> dict[str, Path]:
        root = Path(root)
        if root.is_file():
            if root.name not in FILES:
                raise InvalidInput(f"{root} is not one of {', '.join(FILES)}")
            return {root.name: root}
        found = {name: root / name for name in FILES if (root / name).is_file()}
        if not found:
            raise InvalidInput(f"none of {', '.join(FILES)} under {root}")
        return found

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        cases: list[Case] = []
        seen: set[str] = set()                  # question ids across the files
        for name in [n for n in FILES if n in files]:
            cases += read_jsonl_cases(files[name], name, lambda row, where: row_to_case(row, where, revision),
                                      "question_id", seen)
        if not cases:
            raise InvalidInput("livecodebench: no problems in the given files")
        return cases

    def jobs(self, case: Case, texts: list[str | None], options: GradingOptions) -> CodeJobs:
        code = extract_code(texts[-1] if texts else None)
        if not code.strip():
            return CodeJobs(reason="no fenced program in the reply")
        ans = LcbAnswer.model_validate(case.answer)
        timeout = int(options["test_timeout_s"])
        payload = LcbJobInput(mode=ans.mode, fn_name=ans.fn_name, code=code, timeout=timeout,
                              inputs=[t.input for t in ans.tests], outputs=[t.output for t in ans.tests])
        job = SandboxJob(module="lcb_child.py", input=payload.model_dump(),
                         wall_s=min(float(options["grade_timeout_s"]), (timeout + 1) * len(ans.tests) + 5))
        return CodeJobs(jobs=(job,))

    def judge(self, case: Case, verdicts: list[Verdict], planned: CodeJobs) -> Grade:
        if not verdicts:
            why = {"reason": planned.reason} if planned.reason is not None else {}
            return Grade(correct=False, status="failed", details={"verdict": "failed", **why,
                                                                  "difficulty": case.metadata.stratum})
        verdict, details = verdicts[0]
        ok = verdict == "passed"
        return Grade(correct=ok, status="correct" if ok else "incorrect", extracted=None,
                     details={"verdict": verdict, **details, "difficulty": case.metadata.stratum})

    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> CodePublished:
        """A cell without a sandbox grade: no program ran, it fails pass@1 too."""
        return code_grade(LCB_RULE, None)

    def published_stored(self, case: Case, grade: StoredGrade, grader: str | None = None) -> CodePublished:
        return code_grade(LCB_RULE, grade)

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        by: dict[str, list[bool]] = {}
        verdicts: dict[str, int] = {}
        for g in grades:
            if g is None:
                continue
            d = CodeDetails.model_validate(g.details)
            by.setdefault(str(d.difficulty), []).append(bool(g.correct))
            v = str(d.verdict)
            verdicts[v] = verdicts.get(v, 0) + 1
        figures = LcbFigures(pass_at_1=(sum(sum(v) for v in by.values()) / len(grades)) if grades else None,
                             pass_at_1_by_difficulty={k: sum(v) / len(v) for k, v in sorted(by.items())},
                             verdicts=dict(sorted(verdicts.items())), samples_per_problem=1)
        return {"livecodebench": figures.model_dump()}


__all__ = ["LiveCodeBench", "decode_private", "extract_code", "user_prompt", "Benchmark"]
