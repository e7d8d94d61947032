"""SimpleQA Verified adapter: ``simpleqa_verified.csv`` → one-question factuality cases, topic strata.

Native columns (HF ``google/simpleqa-verified``, 1,000 rows): ``original_index`` (the row in OpenAI's
SimpleQA test set), ``problem``, ``answer``, ``topic``, ``answer_type``, ``multi_step``,
``requires_reasoning``, ``urls``. The CSV is read with the csv module (a UTF-8 BOM is tolerated)
and the header is checked, naming every missing column.

Case id ``simpleqa-verified/<original_index>``; stratum = ``topic``; the prompt is the bare
``problem`` as one user message (no system prompt, no tools). The answer is kept verbatim: numeric
golds embed their tolerance ("33.7738 (acceptable range: anything between …)") and the judge reads it.
Grading: the reference judge ``sr-bench-reference-judge-v1`` (judge.py); the headline metric is
`f1_metrics` over the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import JsonValue

from srbench.benchmarks.base import SourcePin
from srbench.benchmarks.figures import F1Metrics, SimpleQaFigures
from srbench.benchmarks.judge import JUDGE_GRADER, VERDICTS, JudgedBenchmark
from srbench.benchmarks.native import locate_single, read_csv_rows
from srbench.benchmarks.official_judges import SIMPLEQA_AUTORATER
from srbench.benchmarks.published import SIMPLEQA_RULE, PublishedCells
from srbench.benchmarks.published_grades import PublishedSummary, VerdictPublished
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.grade import StoredGrade

CSV_FILE = "simpleqa_verified.csv"
REQUIRED = ("original_index", "problem", "answer", "topic", "answer_type", "multi_step",
            "requires_reasoning", "urls")
URL = "https://huggingface.co/datasets/google/simpleqa-verified"
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")

NOTICES = (
    "SimpleQA Verified is graded by sr-bench's pinned reference judge (sr-bench-reference-judge-v1) unless "
    f"benchmark-options.json pins grader_version {SIMPLEQA_AUTORATER} (the paper's A/B/C autorater prompt); "
    "its published headline is F1, shown beside accuracy. Under the reference judge, compare F1 with "
    "published numbers only as a plausibility band.",
)


def f1_metrics(verdicts: Sequence[str]) -> F1Metrics:
    """SimpleQA metrics over judge verdicts (each ``correct`` | ``incorrect`` | ``not_attempted``).

    With n verdicts: ``correct`` = #correct / n, ``incorrect`` = #incorrect / n,
    ``not_attempted`` = #not_attempted / n (all 0 when n = 0);
    ``correct_given_attempted`` = #correct / (#correct + #incorrect), 0 when nothing was attempted;
    ``f1`` = 2 · correct · cga / (correct + cga), 0 when both are 0 (the headline metric; the paper's
    "hedged" rate is ``not_attempted``). ``n`` is returned as well.
    """
    counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for i, verdict in enumerate(verdicts):
        if verdict not in counts:
            raise InvalidInput(f"verdict {i} is {verdict!r}, not one of {', '.join(VERDICTS)}")
        counts[verdict] += 1
    n = len(verdicts)
    shares = {k: (v / n if n else 0.0) for k, v in counts.items()}
    attempted = counts["correct"] + counts["incorrect"]
    cga = counts["correct"] / attempted if attempted else 0.0
    c = shares["correct"]
    f1 = 2 * c * cga / (c + cga) if c + cga else 0.0
    return F1Metrics(n=n, correct=shares["correct"], incorrect=shares["incorrect"],
                     not_attempted=shares["not_attempted"], correct_given_attempted=cga, f1=f1)


def _flag(value: str, column: str, line: int) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidInput(f"{CSV_FILE} row {line}: {column} {value!r} is not a boolean")


def _rows(data: bytes) -> list[dict[str, str]]:
    return read_csv_rows(data, CSV_FILE, REQUIRED)


def row_to_case(row: dict[str, str], line: int, revision: str) -> Case:
    """One native CSV row (data row `line`, counting the header as 1) as a case."""
    raw_index = row["original_index"].strip()
    try:
        index = int(raw_index)
    except ValueError:
        raise InvalidInput(f"{CSV_FILE} row {line}: original_index {raw_index!r} is not an integer") from None
    problem, answer, topic = row["problem"].strip(), row["answer"].strip(), row["topic"].strip()
    if not problem or not answer or not topic:
        raise InvalidInput(f"{CSV_FILE} row {line}: empty problem, answer or topic")
    meta = CaseMetadata(
        stratum=topic,
        source_revision=revision,
        topic=topic,
        answer_type=row["answer_type"].strip(),
        multi_step=_flag(row["multi_step"], "multi_step", line),
        requires_reasoning=_flag(row["requires_reasoning"], "requires_reasoning", line),
        urls=row["urls"].strip(),
        original_index=index,
    )
    return Case(id=f"{SimpleQaVerified.id}/{index}", benchmark=SimpleQaVerified.id,
                messages=[Message(role="user", content=problem)], answer=answer, metadata=meta)


class SimpleQaVerified(JudgedBenchmark):
    id = "simpleqa-verified"
    title = "SimpleQA Verified"
    capability = "factuality"
    kind = "judge"
    weight = 10
    profiles = {"smoke": 5, "quick": 100, "standard": 500}
    strata = "topic"
    judge_graders = (JUDGE_GRADER, SIMPLEQA_AUTORATER)
    published_rule = SIMPLEQA_RULE
    source = SourcePin(
        url=URL,
        revision="0dc97e0d28d8233463e005cdc4475cc2a13ba2dc",
        files=(CSV_FILE,),
        license_url=URL,
        access_note="MIT per the loaders (to verify); open (not gated).",
    )

    def locate(self, root: Path) -> dict[str, Path]:
        return locate_single(root, CSV_FILE)

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if CSV_FILE not in files:
            raise InvalidInput(f"simpleqa-verified needs {CSV_FILE}; got {', '.join(sorted(files)) or 'no files'}")
        cases: list[Case] = []
        seen: dict[str, int] = {}
        for line, row in enumerate(_rows(files[CSV_FILE]), start=2):
            case = row_to_case(row, line, revision)
            if case.id in seen:
                raise InvalidInput(f"{CSV_FILE} rows {seen[case.id]} and {line} share original_index "
                                   f"{case.metadata.original_index}")
            seen[case.id] = line
            cases.append(case)
        if not cases:
            raise InvalidInput(f"{CSV_FILE} holds no question")
        return cases

    def notices(self) -> list[str]:
        return [*super().notices(), *NOTICES]

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        return _metrics(grades)

    def published_summary(self, cells: PublishedCells,
                          grader: str | None = None) -> PublishedSummary:
        """F1 over the judge's verdicts (a cell without one counts as not attempted), accuracy beside."""
        out = super().published_summary(cells, grader)
        said = [p.verdict if isinstance(p, VerdictPublished) else None for _, p in cells]
        verdicts = [v if v in VERDICTS else "not_attempted" for v in said]
        m = f1_metrics(verdicts)
        judge = self.judge_grader(grader)
        note = ("the paper's A/B/C autorater prompt" if judge == SIMPLEQA_AUTORATER else
                "verdicts of sr-bench's reference judge, not the paper's autorater prompt")
        return out.model_copy(update={"metric": "f1", "score": m.f1, "accuracy": m.correct,
                                      "correct_given_attempted": m.correct_given_attempted,
                                      "not_attempted": m.not_attempted, "judge": judge, "note": note})


__all__ = ["CSV_FILE", "REQUIRED", "SimpleQaVerified", "f1_metrics", "row_to_case"]


def _metrics(grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
    verdicts = [g.status if g and g.status in VERDICTS else "not_attempted" for g in grades]
    return SimpleQaFigures(simpleqa=f1_metrics(verdicts),
                           simpleqa_note="cells without a judge verdict (failed, unanswered) count as not_attempted"
                           ).model_dump()

