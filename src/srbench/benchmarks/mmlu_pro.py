"""MMLU-Pro adapter: the pinned test parquet → zero-shot chain-of-thought MCQ cases, 14 subject strata.

Native rows (HF ``TIGER-Lab/MMLU-Pro``): ``question_id`` int64, ``question``, ``options`` list<str>
(up to ten, A–J), ``answer`` (letter), ``answer_index``, ``cot_content``, ``category``, ``src``.
Options equal to ``N/A`` (legacy padding) are dropped and the answer letter is re-mapped to the kept
options; the reference is the ``answer`` letter (``answer_index`` only fills in when it is empty).
A row whose answer is one of the dropped options, or with fewer than two options left, is not a task.
The prompt adapts the official header to zero-shot: one user message, question, lettered options and
"The answer is (X)" at the end. Grading: `sr-bench-mcq-final-v2`, letters limited to the case's options;
beside it the official extraction chain (`mmlu-pro-official-chain-v1`, published.py) as a diagnostic.
"""

from __future__ import annotations

import string
from pathlib import Path

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.graders import MCQ_GRADER, grade_mcq, listed_options
from srbench.benchmarks.native import locate_single, pyarrow_modules
from srbench.benchmarks.published import MMLU_PRO_RULE, mmlu_pro_grade
from srbench.benchmarks.published_grades import MmluProPublished
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.wire import WireJSON

TEST_FILE = "data/test-00000-of-00001.parquet"
COLUMNS = ("question_id", "question", "options", "answer", "category", "src")
CATEGORIES = (
    "biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
    "history", "law", "math", "other", "philosophy", "physics", "psychology",
)

PROMPT = (
    "The following is a multiple choice question about {category}. Think step by step and then "
    'finish your answer with "The answer is (X)" where X is the correct letter choice.\n\n'
    "Question: {question}\nOptions:\n{options}\n\nAnswer: Let's think step by step."
)


def _read_parquet(data: bytes) -> list[WireJSON]:
    pa, pq = pyarrow_modules("MMLU-Pro")
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInput(f"{TEST_FILE} is not a readable parquet file ({exc})") from exc
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise InvalidInput(f"{TEST_FILE} is missing columns: {', '.join(missing)}")
    rows: list[WireJSON] = table.to_pylist()
    return rows


def _answer_position(row: WireJSON, options: list[str]) -> int | None:
    """Index of the reference among the native options (before N/A options are dropped)."""
    letter = row.get("answer")
    if isinstance(letter, str) and len(letter.strip()) == 1 and letter.strip().isupper():
        pos = string.ascii_uppercase.index(letter.strip())
    elif isinstance(row.get("answer_index"), int):
        pos = row["answer_index"]
    else:
        return None
    return pos if 0 <= pos < len(options) else None


def _letter(index: int) -> str:
    """An option's letter (A–Z), or its 1-based number past Z."""
    return string.ascii_uppercase[index] if index < 26 else f"#{index + 1}"


def row_to_case(row: WireJSON, revision: str) -> Case | None:
    """One native row as a case, or None when the row is not a gradable task."""
    qid = row.get("question_id")
    if isinstance(qid, bool) or not isinstance(qid, int):
        raise InvalidInput(f"{TEST_FILE}: question_id {qid!r} is not an integer")
    question, category = row.get("question"), row.get("category")
    if not isinstance(question, str) or not question.strip() or not isinstance(category, str) or not category:
        raise InvalidInput(f"{TEST_FILE}: question {qid} has no question text or category")
    raw_options = row.get("options")
    if raw_options is not None and not isinstance(raw_options, list):
        raise InvalidInput(f"{TEST_FILE}: question {qid}'s options are a {type(raw_options).__name__}, not a list of "
                           "strings (MMLU-Pro's column is list<string>); use the dataset's own parquet file")
    native = list(raw_options or [])
    odd = next((j for j, o in enumerate(native) if not isinstance(o, str)), None)
    if odd is not None:
        raise InvalidInput(f"{TEST_FILE}: question {qid}'s option {_letter(odd)} is {native[odd]!r}, not a string "
                           "(MMLU-Pro's options are list<string>); use the dataset's own parquet file")
    pos = _answer_position(row, native)
    if pos is None or native[pos].strip() == "N/A":
        return None
    kept = [i for i, o in enumerate(native) if o.strip() != "N/A"]
    if len(kept) < 2:
        return None
    if len(kept) > 26:
        raise InvalidInput(f"{TEST_FILE}: question {qid} has {len(kept)} options, more than A-Z")
    letters = string.ascii_uppercase
    options = [native[i] for i in kept]
    lines = "\n".join(f"{letters[j]}. {text}" for j, text in enumerate(options))
    prompt = PROMPT.format(category=category, question=question.strip(), options=lines)
    meta = CaseMetadata(
        stratum=category,
        source_revision=revision,
        category=category,
        src=row.get("src") or "",
        option_count=len(options),
        question_id=qid,
    )
    return Case(id=f"mmlu-pro/{qid}", benchmark=MmluPro.id, messages=[Message(role="user", content=prompt)],
                answer=letters[kept.index(pos)], metadata=meta)


class MmluPro(Benchmark):
    id = "mmlu-pro"
    title = "MMLU-Pro"
    capability = "knowledge, 14 subjects"
    kind = "mcq"
    weight = 10
    profiles = {"smoke": 14, "quick": 500, "standard": 2000}
    strata = "category"
    grader_version = MCQ_GRADER
    published_rule = MMLU_PRO_RULE
    requires = ("pyarrow",)
    source = SourcePin(
        url="https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro",
        revision="b189ec765aa7ed75c8acfea42df31fdae71f97be",
        files=(TEST_FILE,),
        license_url="https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro",
        access_note="MIT licence; open (not gated).",
    )

    def locate(self, root: Path) -> dict[str, Path]:
        return locate_single(root, TEST_FILE)

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if TEST_FILE not in files:
            raise InvalidInput(f"mmlu-pro needs {TEST_FILE}; got {', '.join(sorted(files)) or 'no files'}")
        cases: list[Case] = []
        seen: set[str] = set()
        for row in _read_parquet(files[TEST_FILE]):
            case = row_to_case(row, revision)
            if case is None:
                continue
            if case.id in seen:
                raise InvalidInput(f"{TEST_FILE}: duplicate question_id {case.metadata.question_id}")
            seen.add(case.id)
            cases.append(case)
        if not cases:
            raise InvalidInput(f"{TEST_FILE} holds no gradable question")
        return cases

    def grade(self, case: Case, text: str | None) -> Grade:
        count = getattr(case.metadata, "option_count", None)
        if count is None:           # frozen by upstream: its metadata has no count, its prompt lists the options
            count = listed_options(case.messages[-1].content)
        return grade_mcq(text, case.answer, count)

    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> MmluProPublished:
        return mmlu_pro_grade(text, case.answer, int(getattr(case.metadata, "option_count", 10)))

    def notices(self) -> list[str]:
        return [*super().notices(),
                "An MMLU-Pro profile is a stratified sample, never the upstream 12,032-question result (CAT-2)."]
