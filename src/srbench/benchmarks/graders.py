"""Offline graders for the visible final answer: multiple choice (MMLU-Pro, GPQA) and ARC grids.

Both graders are pure functions of (text, reference); they never call a model, so every grade can be
recomputed from the stored text (IT-6).

Visible text (shared)
    Closed ``<think>…</think>`` blocks are removed (the caller normally does this already). If a
    ``<think>`` is left unclosed the reply never reached its final answer: there is no candidate. A
    stray ``</think>`` without an opening tag (chat templates that open the block in the prompt)
    means only the text after the last ``</think>`` is visible.

``sr-bench-mcq-final-v2`` (multiple choice)
    Valid letters are the first ``option_count`` capital letters (A–D for GPQA, A–J at most for
    MMLU-Pro; a case frozen without a count, as upstream freezes them, counts the lettered option lines of
    its prompt); a letter outside that range is never a candidate (it is listed in ``details.ignored``).
    Only capital letters count, so the article "a" or a lower-case word is never read as a choice.
    Candidates come from three places:

    1. the first non-empty line when it is a bare answer: ``B``, ``(B)``, ``B.``, ``**B**``,
       ``ANSWER: B`` (markdown ``*``/``_``/backtick/``$`` wrappers allowed);
    2. declarations: "answer is X", "the correct/final answer is (X)", "Answer: X", "Final answer:
       **X**", "answer: $X$", "answer is option X" (the keyword is case-insensitive, the letter may
       be wrapped in ``( ) [ ] { } * _ ` $`` or ``\\text{}``), plus every alternative chained directly
       after one by "or", "and", "&", "/" or "," (so "the answer is A or B" yields A and B). A letter
       followed by an apostrophe ("I'm") is not a choice, nor is "I" followed by a verb such as
       "think", "believe" or "would" ("Answer: I think so" gives no candidate);
    3. ``\\boxed{X}`` (also ``\\boxed{(X)}`` and ``\\boxed{\\text{X}}``).

    Exactly one distinct valid letter is graded (``correct`` iff it equals the reference, else
    ``incorrect``); several distinct letters give ``ambiguous`` and none gives ``unparsed``; both
    count as incorrect. There is no "last capital letter" fallback and no random guess.
    ``strict_format`` is true when the whole visible text is one bare-answer line.

``sr-bench-arc-exact-v1`` (ARC-AGI-2)
    The answer is JSON found in this order: the whole visible text; else the last fenced code block
    (```` ```json ```` or untagged) that parses; else the last top-level ``[…]`` span in the prose
    that parses. It must be a non-empty list of grids, one per test input; a grid is a non-empty list
    of non-empty rows of equal length whose cells are integers 0–9 (booleans and floats rejected).
    ``correct`` iff the list equals the reference list exactly (one score per puzzle covering all its
    test inputs, one attempt). No JSON → ``unparsed``; JSON of the wrong shape → ``invalid``; a
    well-formed but different list (including a wrong number of grids) → ``incorrect``.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from srbench.benchmarks.contract import Grade
from srbench.errors import InvalidInput

MCQ_GRADER = "sr-bench-mcq-final-v2"
ARC_GRADER = "sr-bench-arc-exact-v1"
Grid: TypeAlias = list[list[int]]
"""An ARC grid: a list of rows, each cell an integer 0–9."""


class McqDetails(BaseModel):
    """A multiple-choice grade's details (``sr-bench-mcq-final-v2``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    candidates: list[str]
    """The option letters the final answer commits to (one: graded; none: unparsed; several: ambiguous)."""
    ignored: list[str]
    """Letters found that are not options of this question."""
    grader: str
    """The grader version."""


class ArcDetails(BaseModel):
    """An ARC grade's details (``sr-bench-arc-exact-v1``); a field is absent where grading stopped before it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    grader: str
    """The grader version."""
    expected_grids: int
    """The puzzle's test inputs."""
    reason: str | None = Field(None, exclude_if=lambda v: v is None)
    """Why the answer is unparsed or invalid."""
    found_in: str | None = Field(None, exclude_if=lambda v: v is None)
    """Where the JSON answer was found (``whole``: the whole final text)."""
    answered_grids: int | None = Field(None, exclude_if=lambda v: v is None)
    """Grids in the answer (a valid grid list only)."""

# -- visible text ------------------------------------------------------------------------------
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def visible_text(text: str | None) -> str | None:
    """The final visible text, or None when there is none (no text, or an unclosed ``<think>``)."""
    if text is None:
        return None
    out = _THINK_BLOCK.sub("", text)
    if _THINK_OPEN.search(out):
        return None
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end():]
    return out.strip()


def _no_text_grade(text: str | None) -> Grade:
    reason = "no answer text" if text is None else "unclosed <think>: no final answer"
    return Grade(correct=False, status="unparsed", details={"reason": reason})


# -- multiple choice ---------------------------------------------------------------------------
_OPEN = r"[\s*_`$(\[{]*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{)?[\s*_`$(\[{]*"
_LETTER = r"([A-Z])(?![A-Za-z0-9'’])"
# "Answer: I think it is B" - the pronoun I followed by a verb is not option I.
_PRONOUN_I = re.compile(r"\s+(?:think|believe|am|was|will|would|can|cannot|could|need|must|should|have|"
                        r"guess|choose|chose|select|pick|see|feel|suspect|recall|assume|agree|do|did)\b", re.I)
_CLOSE = r"[*_`$)\]}]*"
_KEYWORD = (
    r"(?i:\banswer\s*[:：=]"
    r"|\banswer\s+(?:is|would\s+be|should\s+be|must\s+be)\s*[:：]?)"
    r"(?i:\s*(?:option|choice|letter)\b)?"
)
_DECLARATION = re.compile(_KEYWORD + _OPEN + _LETTER + _CLOSE)
_CHAIN = re.compile(r"\s*(?:,|/|&|(?i:\bor\b)|(?i:\band\b))" + _OPEN + _LETTER + _CLOSE)
_BOXED = re.compile(r"\\boxed\s*\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{)?\s*\(?\s*([A-Z])\s*\)?\s*\}")
_BARE = re.compile(r"^(?i:answer\s*[:：]?)?[\s*_`$]*\(?\s*([A-Z])\s*\)?\.?[\s*_`$]*$")


def _bare_letter(line: str) -> str | None:
    m = _BARE.match(line.strip().strip("*_`#$ \t"))
    return m.group(1) if m else None


def _is_pronoun(text: str, m: re.Match[str]) -> bool:
    return m.group(1) == "I" and _PRONOUN_I.match(text, m.end(1)) is not None


def mcq_candidates(text: str) -> list[str]:
    """Every letter the MCQ rules read from `text`, in order of appearance (duplicates kept)."""
    found: list[tuple[int, str]] = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines:
        first = _bare_letter(lines[0])
        if first is not None:
            found.append((-1, first))
    for m in _DECLARATION.finditer(text):
        if _is_pronoun(text, m):
            continue
        found.append((m.start(1), m.group(1)))
        pos = m.end()
        while (c := _CHAIN.match(text, pos)) is not None and not _is_pronoun(text, c):
            found.append((c.start(1), c.group(1)))
            pos = c.end()
    for m in _BOXED.finditer(text):
        found.append((m.start(1), m.group(1)))
    found.sort(key=lambda item: item[0])
    return [letter for _, letter in found]


def valid_letters(option_count: int | None) -> str:
    if isinstance(option_count, bool) or not isinstance(option_count, int) or not 2 <= option_count <= 26:
        raise InvalidInput(f"a multiple-choice case needs 2..26 options, got {option_count!r}")
    return string.ascii_uppercase[:option_count]


def listed_options(prompt: str) -> int | None:
    """How many lettered options the prompt lists (lines ``A. …``, ``B. …`` in order, from A): the option count
    of a case frozen without one (a dataset frozen by upstream's vllm-sr, issue 39 item 6); None when none."""
    count = 0
    for line in prompt.splitlines():
        if count < 26 and line.startswith(string.ascii_uppercase[count] + ". "):
            count += 1
    return count or None


def grade_mcq(text: str | None, answer: str, option_count: int | None) -> Grade:
    """Grade a visible final answer against the reference letter under `sr-bench-mcq-final-v2`."""
    letters = valid_letters(option_count)
    if not isinstance(answer, str) or len(answer) != 1 or answer not in letters:
        raise InvalidInput(f"reference answer {answer!r} is not one of the letters {letters[0]}..{letters[-1]}")
    visible = visible_text(text)
    if visible is None:
        return _no_text_grade(text)
    strict = "\n" not in visible and _bare_letter(visible) is not None
    raw = mcq_candidates(visible)
    valid = sorted({c for c in raw if c in letters})
    ignored = sorted({c for c in raw if c not in letters})
    details = McqDetails(candidates=valid, ignored=ignored, grader=MCQ_GRADER).model_dump()
    if not valid:
        return Grade(correct=False, status="unparsed", strict_format=strict, details=details)
    if len(valid) > 1:
        return Grade(correct=False, status="ambiguous", strict_format=strict, details=details)
    letter = valid[0]
    ok = letter == answer
    return Grade(correct=ok, status="correct" if ok else "incorrect", extracted=letter,
                 strict_format=strict, details=details)


# -- ARC grids ---------------------------------------------------------------------------------
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _bracket_spans(text: str) -> list[tuple[int, int]]:
    """Top-level balanced ``[…]`` spans, left to right (grids hold no strings, so none are skipped)."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def extract_json_answer(text: str) -> tuple[bool, Any, str]:
    """(found, value, where) for the ARC answer in `text`; `where` is whole | fence | prose."""
    ok, value = _loads(text)
    if ok:
        return True, value, "whole"
    for block in reversed(_FENCE.findall(text)):
        ok, value = _loads(block.strip())
        if ok:
            return True, value, "fence"
    for start, end in reversed(_bracket_spans(text)):
        ok, value = _loads(text[start:end])
        if ok:
            return True, value, "prose"
    return False, None, ""


def grid_problem(grid: Any) -> str | None:
    """Why `grid` is not an ARC grid, or None when it is one."""
    if not isinstance(grid, list) or not grid:
        return "a grid must be a non-empty list of rows"
    width = None
    for row in grid:
        if not isinstance(row, list) or not row:
            return "every row must be a non-empty list"
        if width is None:
            width = len(row)
        elif len(row) != width:
            return "rows have different lengths (not rectangular)"
        for cell in row:
            if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell <= 9:
                return f"cell {cell!r} is not an integer 0-9"
    return None


def grid_list_problem(value: Any) -> str | None:
    """Why `value` is not a non-empty list of ARC grids, or None when it is one."""
    if not isinstance(value, list) or not value:
        return "the answer must be a non-empty JSON list of grids"
    for i, grid in enumerate(value):
        problem = grid_problem(grid)
        if problem is not None:
            return f"grid {i}: {problem}"
    return None


def grade_arc(text: str | None, expected: list[Grid]) -> Grade:
    """Grade a visible final answer against the list of expected test outputs (`sr-bench-arc-exact-v1`)."""
    problem = grid_list_problem(expected)
    if problem is not None:
        raise InvalidInput(f"ARC reference answer is malformed: {problem}")
    visible = visible_text(text)
    if visible is None:
        return _no_text_grade(text)
    found, value, where = extract_json_answer(visible)
    details = ArcDetails(grader=ARC_GRADER, expected_grids=len(expected))
    if not found:
        details = details.model_copy(update={"reason": "no JSON list found in the final text"})
        return Grade(correct=False, status="unparsed", strict_format=False, details=details.model_dump())
    strict = where == "whole"
    problem = grid_list_problem(value)
    if problem is not None:
        details = details.model_copy(update={"found_in": where, "reason": problem})
        return Grade(correct=False, status="invalid", strict_format=strict, details=details.model_dump())
    ok = value == expected
    details = details.model_copy(update={"found_in": where, "answered_grids": len(value)})
    return Grade(correct=ok, status="correct" if ok else "incorrect", extracted=value,
                 strict_format=strict, details=details.model_dump())
