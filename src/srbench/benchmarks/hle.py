"""Humanity's Last Exam (text-only) adapter: the gated test parquet → judged cases, 8 category strata.

Native rows (HF ``cais/hle``, 12 columns): ``id`` (24 hex), ``question`` (multiple-choice options are
inlined as "Answer Choices:"), ``image`` (``""`` or a ``data:image/…;base64,`` URI), ``image_preview``,
``answer``, ``answer_type`` (``exactMatch`` | ``multipleChoice``), ``author_name``, ``rationale``,
``rationale_image``, ``raw_subject``, ``category``, ``canary``. Only ``id``, ``question``, ``image``,
``answer``, ``answer_type`` and ``category`` are read; rows whose ``image`` is non-empty are not
text-only and are dropped (2,158 of 2,500 rows remain upstream). The set is rolling, so the pin is
the HF revision. The source is gated (DS-10): accept the terms at the dataset page and set HF_TOKEN.

Case id ``hle/<id>``; stratum = ``category``; messages = the HLE response-format system prompt
(``Explanation:`` / ``Answer:`` / ``Confidence: N%``) and the bare question; answer = the reference
text. Grading: the reference judge ``sr-bench-reference-judge-v1`` (judge.py), or the official HLE
judge prompt when the plan pins ``hle-official-judge-v1`` (official_judges.py; the judge model is the
operator's pinned judge, not necessarily o3-mini). The grade details carry the stated confidence for
`calibration_error` (with the official judge: the confidence the judge extracted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks.base import SourcePin
from srbench.benchmarks.figures import ConfidenceDetails, HleFigures
from srbench.benchmarks.graders import visible_text
from srbench.benchmarks.judge import JUDGE_GRADER, JudgedBenchmark
from srbench.benchmarks.native import locate_single, pyarrow_modules
from srbench.benchmarks.official_judges import HLE_OFFICIAL
from srbench.benchmarks.published import HLE_RULE
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.grade import StoredGrade
from srbench.schemas.wire import WireJSON

TEST_FILE = "data/test-00000-of-00001.parquet"
COLUMNS = ("id", "question", "image", "answer", "answer_type", "category")
ANSWER_TYPES = ("exactMatch", "multipleChoice")
URL = "https://huggingface.co/datasets/cais/hle"
CALIBRATION_BIN = 100

SYSTEM_PROMPT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your answer choice}\n"
    "Answer: {your chosen answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)
NOTICES = (
    "HLE is graded by sr-bench's pinned reference judge (sr-bench-reference-judge-v1) unless "
    f"benchmark-options.json pins grader_version {HLE_OFFICIAL} (the official HLE judge prompt): under the "
    "reference judge, compare with published HLE numbers only as a plausibility band.",
    "HLE is a rolling dataset: results hold for the pinned revision only.",
    f"HLE calibration error needs at least {CALIBRATION_BIN} judged answers; smaller runs report it as unknown.",
)


class StatedConfidence(BaseModel):
    """The confidence the subject's reply states, kept in an HLE grade's details (calibration error)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    confidence: float
    """0..1; 1.0 when none is stated (upstream's convention)."""
    confidence_stated: bool
    """Whether the reply stated one."""


# -- reading the parquet -----------------------------------------------------------------------
def _read_parquet(data: bytes) -> tuple[list[WireJSON], int]:
    """The text-only rows (without ``image``) and the number of image rows dropped."""
    pa, pq = pyarrow_modules("HLE")
    # deferred: pyarrow is heavy: imported only when a parquet file is read or written
    import pyarrow.compute as pc
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        missing = [c for c in COLUMNS if c not in parquet.schema_arrow.names]
        if missing:
            raise InvalidInput(f"{TEST_FILE} is missing columns: {', '.join(missing)}")
        table = parquet.read(columns=list(COLUMNS))
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInput(f"{TEST_FILE} is not a readable parquet file ({exc})") from exc
    image = table.column("image")
    if not (pa.types.is_string(image.type) or pa.types.is_large_string(image.type)):
        raise InvalidInput(f"{TEST_FILE}: column image has type {image.type}, expected a string")
    text_only = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(pc.fill_null(image, ""))), 0)
    kept = table.filter(text_only).drop_columns(["image"])
    return kept.to_pylist(), table.num_rows - kept.num_rows


def _text(row: WireJSON, key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{TEST_FILE}: {where} has no {key}")
    return value.strip()


def row_to_case(row: WireJSON, revision: str) -> Case:
    """One text-only native row as a case."""
    native_id = _text(row, "id", "a row")
    where = f"question {native_id}"
    question, answer = _text(row, "question", where), _text(row, "answer", where)
    category, answer_type = _text(row, "category", where), _text(row, "answer_type", where)
    if answer_type not in ANSWER_TYPES:
        raise InvalidInput(f"{TEST_FILE}: {where} has answer_type {answer_type!r}, expected one of "
                           f"{', '.join(ANSWER_TYPES)}")
    meta = CaseMetadata(stratum=category, source_revision=revision, category=category,
                        answer_type=answer_type, hle_id=native_id)
    return Case(id=f"hle/{native_id}", benchmark=Hle.id,
                messages=[Message(role="system", content=SYSTEM_PROMPT), Message(role="user", content=question)],
                answer=answer, metadata=meta)


# -- confidence and calibration ----------------------------------------------------------------
_CONFIDENCE = re.compile(
    r"confidence(?:\s+score)?[\s*_]*[:：][\s*_]*(\d{1,3}(?:\.\d+)?)\s*(%)?", re.IGNORECASE)


def extract_confidence(text: str | None) -> float | None:
    """The stated confidence as 0..1 from the last ``Confidence: 85%`` line, or None.

    A value with ``%`` (or above 1 without it) is a percentage; a bare value in 0..1 is a fraction.
    Values outside 0..100 % give None. Closed ``<think>`` blocks are ignored.
    """
    visible = visible_text(text)
    if not visible:
        return None
    matches = list(_CONFIDENCE.finditer(visible))
    if not matches:
        return None
    number, percent = float(matches[-1].group(1)), matches[-1].group(2)
    value = number / 100 if percent or number > 1 else number
    return value if 0.0 <= value <= 1.0 else None


def _check_pairs(pairs: Sequence[tuple[float, bool]]) -> None:
    for i, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise InvalidInput(f"calibration pair {i} is not (confidence, correct)")
        conf, ok = pair
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not math.isfinite(conf) \
                or not 0.0 <= conf <= 1.0:
            raise InvalidInput(f"calibration pair {i}: confidence {conf!r} is not a number in 0..1")
        if not isinstance(ok, bool):
            raise InvalidInput(f"calibration pair {i}: correct {ok!r} is not a boolean")


def calibration_error(pairs: Sequence[tuple[float, bool]], min_samples: int = 100, *,
                      bin_size: int = CALIBRATION_BIN, skip_last_bin: bool = False) -> float | None:
    """HLE RMS calibration error (0..1; ×100 for the percentage HLE prints), or None below `min_samples`.

    Formula (research/benchmarks.md §3, after ``hle_eval/run_judge_results.py``): sort the n
    ``(confidence, correct)`` pairs by confidence (stable, so ties keep the given order); cut them
    into ``B = max(1, n // bin_size)`` consecutive bins of ``bin_size`` items, the last bin absorbing
    the remainder; for bin b with ``n_b`` items, ``d_b = |mean(confidence) - mean(correct)|``; then

        calibration_error = sqrt( Σ_b (n_b / n) · d_b² )

    Upstream's loop skips the last bin (``range(len(bins) - 1)``), which gives 0 for 100–199 items;
    sr-bench includes it (``skip_last_bin=True`` reproduces upstream). Upstream crashes below 100
    items; here fewer than ``max(min_samples, 1)`` pairs give None (unknown), so the smoke (4) and
    quick (40) profiles report calibration as unknown.
    """
    for name, value in (("min_samples", min_samples), ("bin_size", bin_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(f"{name} must be a positive integer, got {value!r}")
    _check_pairs(pairs)
    n = len(pairs)
    if n < min_samples:
        return None
    ordered = sorted(pairs, key=lambda pair: float(pair[0]))
    count = max(1, n // bin_size)
    bounds = [(b * bin_size, (b + 1) * bin_size) for b in range(count)]
    bounds[-1] = (bounds[-1][0], n)
    total = 0.0
    for lo, hi in bounds[:-1] if skip_last_bin else bounds:
        chunk = ordered[lo:hi]
        mean_conf = sum(float(c) for c, _ in chunk) / len(chunk)
        mean_ok = sum(1.0 for _, ok in chunk if ok) / len(chunk)
        total += len(chunk) / n * (mean_conf - mean_ok) ** 2
    return math.sqrt(total)


# -- the adapter -------------------------------------------------------------------------------
class Hle(JudgedBenchmark):
    id = "hle"
    title = "Humanity's Last Exam (text-only)"
    capability = "HLE text-only reasoning"
    kind = "judge"
    weight = 15
    profiles = {"smoke": 4, "quick": 40, "standard": 200}
    strata = "category"
    requires = ("pyarrow",)
    judge_graders = (JUDGE_GRADER, HLE_OFFICIAL)
    published_rule = HLE_RULE
    source = SourcePin(
        url=URL,
        revision="5a81a4c7271a2a2a312b9a690f0c2fde837e4c29",
        files=(TEST_FILE,),
        license_url=URL,
        access_note=f"MIT; gated: accept the terms at {URL} and set HF_TOKEN. Do not redistribute examples.",
        gated=True,
    )

    def locate(self, root: Path) -> dict[str, Path]:
        return locate_single(root, TEST_FILE)

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if TEST_FILE not in files:
            raise InvalidInput(f"hle needs {TEST_FILE}; got {', '.join(sorted(files)) or 'no files'}")
        rows, _dropped = _read_parquet(files[TEST_FILE])
        cases: list[Case] = []
        seen: set[str] = set()
        for row in rows:
            case = row_to_case(row, revision)
            if case.id in seen:
                raise InvalidInput(f"{TEST_FILE}: duplicate id {case.metadata.hle_id}")
            seen.add(case.id)
            cases.append(case)
        if not cases:
            raise InvalidInput(f"{TEST_FILE} holds no text-only question")
        return cases

    def judged_details(self, case: Case, candidate: str | None) -> StatedConfidence:
        """The stated confidence; upstream's convention is 100 % when none is stated."""
        stated = extract_confidence(candidate)
        return StatedConfidence(confidence=1.0 if stated is None else stated, confidence_stated=stated is not None)

    def notices(self) -> list[str]:
        return [*super().notices(), *NOTICES]

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        return _metrics(grades)

    def published_rule_for(self, grader: str | None) -> str | None:
        """HLE's published accuracy exists only with its official judge prompt."""
        return HLE_RULE if self.judge_grader(grader) == HLE_OFFICIAL else None

    def published_unavailable(self) -> str:
        return (f"HLE's published accuracy needs its official judge prompt, which this plan does not pin: pin "
                f"it with `sr-bench options set hle judge=<target id> grader_version={HLE_OFFICIAL}` and run again "
                "(sr-bench's reference judge asks another prompt)")


__all__ = ["SYSTEM_PROMPT", "TEST_FILE", "Hle", "calibration_error", "extract_confidence", "row_to_case"]


def _metrics(grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
    pairs = [(ConfidenceDetails.model_validate(g.details).confidence, bool(g.correct)) for g in grades if g]
    return HleFigures(calibration_error=calibration_error(pairs),
                      calibration_note="RMS calibration error over graded cells; null below 100 graded answers"
                      ).model_dump()

