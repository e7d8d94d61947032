"""The published (upstream) rules' outputs as models (the rules themselves: published.py).

A `PublishedGrade` is one cell's grade under a benchmark's published rule, kept in the stored grade (its
``published`` field) by `stored()`; a `PublishedSummary` is that rule's figure over one target's planned
cells of a benchmark, beside sr-bench's score in the report. Each rule's grade has its own fields; a field
that a rule writes only in some cases is left out of the stored JSON when it is not set, so the stored
bytes are those of the dicts the rules wrote before these models. A stored grade's ``published`` is read
back by `read_published`, which knows each rule's grade by its ``rule``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

# the published rules' versioned ids (each model below names its own in its `rule` Literal)
MMLU_PRO_RULE = "mmlu-pro-official-chain-v1"
GPQA_RULE = "gpqa-simple-evals-regex-v1"
ARC_RULE = "arc-agi-2-per-test-input-v1"
ARC_PASS2_RULE = "arc-agi-2-pass-at-2-v1"
SIMPLEQA_RULE = "simpleqa-f1-v1"
HLE_RULE = "hle-official-accuracy-v1"
LCB_RULE = "livecodebench-pass-at-1-v1"
SCICODE_RULE = "scicode-main-problem-v1"
TAU3_RULE = "tau2-pass-hat-1-v1"
TB_RULE = "terminal-bench-mean-reward-v1"


def _absent(value: object) -> bool:
    return value is None


class PublishedGrade(BaseModel):
    """One cell's grade under a published rule."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    rule: str
    """The published rule's versioned id (published.py)."""
    score: float
    """The cell's score under it (0–1; a fraction for the per-input and reward rules)."""

    def stored(self) -> dict[str, JsonValue]:
        """The JSON object a stored grade keeps as ``published``."""
        return self.model_dump(mode="json")


class MmluProPublished(PublishedGrade):
    """MMLU-Pro's extraction chain and seeded random fallback."""

    rule: Literal["mmlu-pro-official-chain-v1"]
    """The rule (``MMLU_PRO_RULE``)."""
    extracted: str | None
    """The letter the chain extracted (None: none, the fallback guessed)."""
    step: Literal["answer_is", "answer_colon", "last_letter"] | None
    """Which step of the chain matched."""
    fallback: bool
    """Whether the script's random fallback answered."""
    fallback_guess: str | None = Field(None, exclude_if=_absent)
    """The fallback's letter (only when it answered)."""
    reason: str | None = Field(None, exclude_if=_absent)
    """Why the cell scored nothing without reading a reply (only when there was none)."""


class GpqaPublished(PublishedGrade):
    """simple-evals' GPQA regex."""

    rule: Literal["gpqa-simple-evals-regex-v1"]
    """The rule (``GPQA_RULE``)."""
    extracted: str | None
    """The captured letter, as captured (None: no match)."""


class _ArcSolved(PublishedGrade):
    """ARC-AGI-2's per-input scoring, the fields both of its rules write."""

    solved_inputs: int
    """Test inputs solved."""
    test_inputs: int
    """The puzzle's test inputs."""
    solved: list[bool]
    """Per test input, whether it was solved."""


class ArcPublished(_ArcSolved):
    """ARC-AGI-2 scored per test input (one attempt)."""

    rule: Literal["arc-agi-2-per-test-input-v1"]
    """The rule (``ARC_RULE``)."""


class ArcPass2Published(_ArcSolved):
    """ARC-AGI-2's pass@2: a test input is solved by either attempt."""

    rule: Literal["arc-agi-2-pass-at-2-v1"]
    """The rule (``ARC_PASS2_RULE``)."""
    attempts: int
    """The attempts read."""
    solved_by_attempt: list[list[bool]]
    """Per attempt, its per-input solved flags."""


class CodePublished(PublishedGrade):
    """LiveCodeBench's pass@1 / SciCode's main-problem rule, read from the stored sandbox verdict."""

    rule: Literal["livecodebench-pass-at-1-v1", "scicode-main-problem-v1"]
    """The rule (``LCB_RULE`` or ``SCICODE_RULE``)."""
    verdict: str | None
    """The stored sandbox verdict (None: the cell was not graded)."""
    sub_steps_passed: int | None = Field(None, exclude_if=_absent)
    """SciCode only: scored steps that passed."""
    sub_steps_scored: int | None = Field(None, exclude_if=_absent)
    """SciCode only: the problem's scored steps."""


class Tau3Published(PublishedGrade):
    """τ³'s pass^1 over one trial."""

    rule: Literal["tau2-pass-hat-1-v1"]
    """The rule (``TAU3_RULE``)."""
    reward: float | None
    """The trial's reward (None: the conversation did not run to an end)."""
    ran: bool
    """Whether the conversation ran to an end with a reward."""


class TerminalPublished(PublishedGrade):
    """Terminal-Bench's mean verifier reward."""

    rule: Literal["terminal-bench-mean-reward-v1"]
    """The rule (``TB_RULE``)."""
    reward: float | None
    """The verifier's reward (None: the trial produced none)."""
    rewarded: bool
    """Whether the trial produced a reward."""


class VerdictPublished(PublishedGrade):
    """A judged benchmark's published per-answer verdict: the judge's own."""

    rule: Literal["simpleqa-f1-v1", "hle-official-accuracy-v1"]
    """The rule (``SIMPLEQA_RULE`` or ``HLE_RULE``)."""
    verdict: str | None
    """The judge's verdict (None: no verdict)."""


AnyPublished = Annotated[MmluProPublished | GpqaPublished | ArcPublished | ArcPass2Published | CodePublished
                         | Tau3Published | TerminalPublished | VerdictPublished, Field(discriminator="rule")]
"""A published grade of any rule, known by its ``rule``."""
_READER: TypeAdapter[AnyPublished] = TypeAdapter(AnyPublished)


def read_published(value: Mapping[str, JsonValue] | None) -> PublishedGrade | None:
    """A stored grade's ``published`` JSON as its rule's model (None stays None)."""
    return None if value is None else _READER.validate_python(value)


def published_json(grade: PublishedGrade | None) -> dict[str, JsonValue] | None:
    """What a stored grade keeps as ``published`` (None: the benchmark has no published rule)."""
    return None if grade is None else grade.stored()


class PublishedSummary(BaseModel):
    """A published rule's figure over one target's planned cells of one benchmark (`published.summarize`).

    Which fields a figure has depends on its rule (and an unavailable figure has only rule, score, n,
    graded_differently, reason and source); `stored()` writes exactly the fields that were set."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    rule: str | None = None
    """The published rule (None: no published figure; `reason` says why)."""
    source: str | None = None
    """Where the rule comes from upstream."""
    n: int = 0
    """Planned cells."""
    score: float | None = None
    """Mean published score over the planned cells (SimpleQA: F1)."""
    graded_differently: int | None = None
    """Cells whose published score differs from sr-bench's 0/1."""
    published_higher: int | None = None
    """Of those, cells the published rule scores higher."""
    published_lower: int | None = None
    """Of those, cells the published rule scores lower."""
    unextracted: int | None = None
    """MMLU-Pro: cells where no letter was extracted (the fallback guessed)."""
    fallback_credited: int | None = None
    """MMLU-Pro: of those, cells the guess credited."""
    score_without_fallback: float | None = None
    """MMLU-Pro: the score without the credited guesses."""
    test_inputs: int | None = None
    """ARC-AGI-2: test inputs over the cells."""
    solved_inputs: int | None = None
    """ARC-AGI-2: test inputs solved."""
    sub_steps_passed: int | None = None
    """SciCode: scored steps that passed."""
    sub_steps_scored: int | None = None
    """SciCode: scored steps over the planned problems."""
    sub_step_pass_rate: float | None = None
    """SciCode: passed / scored steps."""
    ran: int | None = None
    """τ³: cells whose conversation ran to an end."""
    score_ran_only: float | None = None
    """τ³: the mean over those cells."""
    rewarded: int | None = None
    """Terminal-Bench: trials that produced a reward."""
    score_rewarded_only: float | None = None
    """Terminal-Bench: the mean over those trials."""
    metric: str | None = None
    """The published headline metric's short label."""
    accuracy: float | None = None
    """SimpleQA: accuracy beside the F1 headline."""
    correct_given_attempted: float | None = None
    """SimpleQA: accuracy over the attempted answers."""
    not_attempted: float | None = None
    """SimpleQA: the share not attempted."""
    judge: str | None = None
    """SimpleQA: the judge template whose verdicts were read."""
    note: str | None = None
    """How the published rule relates to sr-bench's."""
    reason: str | None = None
    """Why the figure is unavailable, or a caveat."""

    def stored(self) -> dict[str, JsonValue]:
        """The report's JSON object of this figure: the fields that were set."""
        return self.model_dump(mode="json", exclude_unset=True)


__all__ = ["ARC_PASS2_RULE", "ARC_RULE", "GPQA_RULE", "HLE_RULE", "LCB_RULE", "MMLU_PRO_RULE", "SCICODE_RULE",
           "SIMPLEQA_RULE", "TAU3_RULE", "TB_RULE", "AnyPublished", "ArcPass2Published", "ArcPublished", "CodePublished",
           "GpqaPublished", "MmluProPublished", "PublishedGrade", "PublishedSummary", "Tau3Published",
           "TerminalPublished", "VerdictPublished", "published_json", "read_published"]
