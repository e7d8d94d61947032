"""GPQA Diamond adapter: the gated ``gpqa_diamond.csv`` → four-choice cases with a frozen shuffle.

The CSV is read with the csv module (multi-line cells; a UTF-8 BOM is tolerated) and its header is
checked. Case id = ``gpqa-diamond/`` + the first 24 hex of ``digest_json(question)`` (the stripped
question text), so ids do not depend on the row order; the native ``Record ID`` is kept in metadata.

Shuffle ``b3-permutation-v1``: the choices are ``[Correct, Incorrect 1, Incorrect 2, Incorrect 3]``;
``k = int(digest_json([seed, case_id]) hex, 16) mod 4!`` is read as a Lehmer code (factorial number
system, most significant digit first) that picks, for letters A..D in turn, one of the choices not
yet placed. ``metadata.permutation[j]`` is the index of the native choice shown at letter j. Python's
``random`` is not used, so the shuffle cannot change with the interpreter. The prompt follows the
simple-evals template (last line ``Answer: $LETTER``). Grading: `sr-bench-mcq-final-v2`, letters A–D;
beside it simple-evals' own regex (`gpqa-simple-evals-regex-v1`, published.py) as a diagnostic.
"""

from __future__ import annotations

import math
from pathlib import Path

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.graders import MCQ_GRADER, grade_mcq
from srbench.benchmarks.native import locate_single, read_csv_rows
from srbench.benchmarks.published import GPQA_RULE, gpqa_grade
from srbench.benchmarks.published_grades import GpqaPublished
from srbench.cas.digest import digest_json, short
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message

CSV_FILE = "gpqa_diamond.csv"
SHUFFLE = "b3-permutation-v1"
CHOICE_COLUMNS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
REQUIRED = ("Question", *CHOICE_COLUMNS, "Subdomain")
_VALIDATOR = ("Feedback", "Validator Revision Suggestion", "Is First Validation", "Post hoc agreement",
              "Sufficient Expertise?", "Understand the question?", "Question Difficulty",
              "Validator Answered Correctly", "Self-reported time (minutes)", "Probability Correct",
              "Manual Correctness Adjustment", "Expert Validator")
_NON_EXPERT = ("Feedback", "Validator Answered Correctly", "Explanation", "Self-reported time (minutes)",
               "Websites visited", "Probability Correct", "Manual Correctness Adjustment", "Non-Expert Validator")
# Every column of the upstream gpqa_diamond.csv (research notes §2); the loader needs only REQUIRED.
NATIVE_HEADER = [
    "Pre-Revision Question", "Pre-Revision Correct Answer", "Pre-Revision Incorrect Answer 1",
    "Pre-Revision Incorrect Answer 2", "Pre-Revision Incorrect Answer 3", "Pre-Revision Explanation",
    "Self-reported question-writing time (minutes)", "Question", "Correct Answer", "Incorrect Answer 1",
    "Incorrect Answer 2", "Incorrect Answer 3", "Explanation", "Revision Comments (from Question Writer)",
    "Subdomain", "Writer's Difficulty Estimate", "Extra Revised Question", "Extra Revised Explanation",
    "Extra Revised Correct Answer", "Extra Revised Incorrect Answer 1", "Extra Revised Incorrect Answer 2",
    "Extra Revised Incorrect Answer 3", "Non-Expert Validator Accuracy", "Majority Non-Expert Vals Incorrect",
    "Expert Validator Accuracy", "Record ID", "High-level domain", "Question Writer",
    *[f"{c}_EV_{k}" for k in (1, 2) for c in _VALIDATOR],
    *[f"{c}_NEV_{k}" for k in (1, 2, 3) for c in _NON_EXPERT],
    "Expert Validator Disagreement Category", "Canary String",
]
URL = "https://huggingface.co/datasets/Idavidrein/gpqa"

PROMPT = (
    "Answer the following multiple choice question. The last line of your response should be of the "
    "following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by "
    "step before answering.\n\n{question}\n\nA) {a}\nB) {b}\nC) {c}\nD) {d}"
)
RETEST_NOTICE = ("GPQA labels may have been seen by the models or the operators (the set is public); "
                 "results on seen labels are a retest, not a first measurement (DS-5).")


def permutation(digest: str, n: int = 4) -> list[int]:
    """``b3-permutation-v1``: the Lehmer-code permutation of ``range(n)`` chosen by a ``b3:`` digest."""
    k = int(digest.removeprefix("b3:"), 16) % math.factorial(n)
    pool = list(range(n))
    out: list[int] = []
    for place in range(n, 0, -1):
        digit, k = divmod(k, math.factorial(place - 1))
        out.append(pool.pop(digit))
    return out


def _rows(data: bytes) -> list[dict[str, str]]:
    return read_csv_rows(data, CSV_FILE, REQUIRED)


class GpqaDiamond(Benchmark):
    id = "gpqa-diamond"
    title = "GPQA Diamond"
    capability = "science reasoning"
    kind = "mcq"
    weight = 15
    profiles = {"smoke": 4, "quick": 40, "standard": 158}
    strata = "Subdomain"
    source_partition = "diamond"
    grader_version = MCQ_GRADER
    published_rule = GPQA_RULE
    source = SourcePin(
        url=URL,
        revision="633f5ee89ab8ad4522a9f850766b73f62147ffdd",
        files=(CSV_FILE,),
        license_url=URL,
        access_note=f"CC BY 4.0; gated: accept the terms at {URL} and set HF_TOKEN. Do not republish examples.",
        gated=True,
    )

    def locate(self, root: Path) -> dict[str, Path]:
        return locate_single(root, CSV_FILE, also=("dataset/" + CSV_FILE,))

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if CSV_FILE not in files:
            raise InvalidInput(f"gpqa-diamond needs {CSV_FILE}; got {', '.join(sorted(files)) or 'no files'}")
        cases: list[Case] = []
        seen: dict[str, int] = {}
        for line, row in enumerate(_rows(files[CSV_FILE]), start=2):
            question = row["Question"].strip()
            choices = [row[c].strip() for c in CHOICE_COLUMNS]
            if not question or not all(choices):
                raise InvalidInput(f"{CSV_FILE} row {line}: empty question or answer choice")
            if choices[0] in choices[1:]:
                raise InvalidInput(f"{CSV_FILE} row {line}: the Correct Answer is also "
                                   f"{CHOICE_COLUMNS[choices.index(choices[0], 1)]} (the same text), so two letters "
                                   "would be right; correct the row, or use the dataset's own file")
            case_id = f"{self.id}/{short(digest_json(question), 24)}"
            if case_id in seen:
                raise InvalidInput(f"{CSV_FILE} rows {seen[case_id]} and {line} hold the same question")
            seen[case_id] = line
            perm = permutation(digest_json([seed, case_id]))
            shown = [choices[i] for i in perm]
            prompt = PROMPT.format(question=question, a=shown[0], b=shown[1], c=shown[2], d=shown[3])
            extra = {"record_id": row["Record ID"].strip()} if row.get("Record ID", "").strip() else {}
            meta = CaseMetadata(
                stratum=row["Subdomain"].strip() or "unknown",
                source_revision=revision,
                subdomain=row["Subdomain"].strip(),
                high_level_domain=row.get("High-level domain", "").strip(),
                option_count=4,
                permutation=perm,
                shuffle=SHUFFLE,
                **extra,
            )
            cases.append(Case(id=case_id, benchmark=self.id, messages=[Message(role="user", content=prompt)],
                              answer="ABCD"[perm.index(0)], metadata=meta))
        if not cases:
            raise InvalidInput(f"{CSV_FILE} holds no question")
        return cases

    def native_ids(self, cases: list[Case], files: dict[str, bytes]) -> dict[str, str]:
        """The full digest of each native (unformatted, stripped) question: the case id keeps 24 hex."""
        full = {f"{self.id}/{short(d, 24)}": d for d in
                (digest_json(row["Question"].strip()) for row in _rows(files[CSV_FILE]))}
        missing = [c.id for c in cases if c.id not in full]
        if missing:
            raise InvalidInput(f"{CSV_FILE}: case {missing[0]} is not a question of this source")
        return {c.id: full[c.id] for c in cases}

    def grade(self, case: Case, text: str | None) -> Grade:
        return grade_mcq(text, case.answer, getattr(case.metadata, "option_count", 4))

    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> GpqaPublished:
        return gpqa_grade(text, case.answer)

    def notices(self) -> list[str]:
        return [*super().notices(), RETEST_NOTICE]
