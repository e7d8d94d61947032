"""Published-rule diagnostics: each benchmark's own upstream grading rule, applied to the stored answer.

sr-bench grades with its own strict rules (graders.py, judge.py) so that a router and a model are
compared fairly. Users also hold their figures against published ones, which come from the upstream
scripts. These pure functions re-grade the *same visible final text* (closed ``<think>`` blocks
removed, as sr-bench sees it) under the upstream rule, with zero model calls. They are diagnostics
shown beside sr-bench's score, never its replacement. Each rule has a versioned id; its outputs on
the golden corpora are pinned by a test, so a change in behaviour needs a new id.

``mmlu-pro-official-chain-v1`` (TIGER-AI-Lab/MMLU-Pro ``evaluate_from_api.py``)
    ``**`` is removed from the reply, then the first match of this chain wins:
    1. ``re.search(r"answer is \\(?([A-J])\\)?", text)``;
    2. ``re.search(r".*[aA]nswer:\\s*([A-J])", text)``;
    3. ``re.search(r"\\b[A-J]\\b(?!.*\\b[A-J]\\b)", text, re.DOTALL)`` — the last standalone letter.
    Letters are A–J whatever the option count (a letter beyond the options is simply wrong). No
    letter at all: the script's fallback ``random.seed(12345); random.randint(0, n - 1)`` with n
    options is credited when it hits the answer — the published numbers include it, so the score
    does too (``fallback`` marks those cells). A cell whose call gave no reply is wrong (the script
    would have skipped it; sr-bench's denominator keeps every planned cell).

``gpqa-simple-evals-regex-v1`` (openai/simple-evals ``gpqa_eval.py``)
    ``re.search(r"(?i)Answer[ \\t]*:[ \\t]*\\$?([A-D])\\$?", text)``; the captured letter must equal
    the reference *as captured* (``(?i)`` also captures a lower-case letter, which then never
    equals the upper-case reference). No match scores 0.

``arc-agi-2-per-test-input-v1`` (arcprize ``arc-agi-benchmarking`` scoring, one attempt)
    The JSON answer is found as sr-bench finds it (graders.extract_json_answer; the harness's own
    parser is not pinned here). A bare grid answers a one-input puzzle. Test input i is solved iff
    grid i of the answer (by position; extra grids are ignored) is a valid grid (integers 0–9, so
    ``true`` or ``1.0`` never pass for 1) equal to expected output i; the cell's score is solved / inputs and
    the benchmark's is the mean over puzzles. This is pass@1 per test input: the published pass@2
    needs two journaled attempts per cell, made when the plan asks for them (next rule).

``arc-agi-2-pass-at-2-v1`` (ARC Prize scoring with its two attempts; the plan asks for ``attempts: 2``)
    Two journaled attempts of the same prompt (a multi-call cell). Test input i is solved iff grid i
    of attempt 1 *or* of attempt 2 is right, each read as in the one-attempt rule above; the cell's
    score is solved / inputs, the benchmark's the mean over puzzles. An attempt without a reply
    solves nothing. sr-bench's own score stays the first attempt, all-or-nothing.

``simpleqa-f1-v1`` / ``hle-official-accuracy-v1`` (judged benchmarks)
    The per-answer verdict is the judge's (no second judge call): SimpleQA's published headline is
    F1 over the verdicts (accuracy beside it); HLE's is accuracy over all questions, which equals
    sr-bench's score when the plan pins the official judge prompt (``hle-official-judge-v1``) and
    is unavailable (null, with the reason) under sr-bench's reference judge.

The benchmarks graded by execution or by a trial (no text rule to differ on) read the stored grade:

``livecodebench-pass-at-1-v1`` (LiveCodeBench ``pass@1``, one sample per problem)
    A problem passes iff its extracted program passed every public and private test (the stored
    sandbox verdict ``passed``); the benchmark's pass@1 is the mean over problems. Same rule as
    sr-bench's except that upstream runs whatever program was extracted even when the reply was cut by
    the output limit (sr-bench grades such a cell ``output_limit``, never correct).

``scicode-main-problem-v1`` (SciCode README: main-problem resolve rate, sub-step pass rate)
    A main problem is resolved iff every scored step passed in the sandbox (the three steps SciCode
    provides are not scored); the headline is resolved / planned problems and the sub-step pass rate
    (passed / scored steps, every planned problem's scored steps counted, 288 on the full test split)
    is beside it. Same per-problem rule as sr-bench's except for the output limit, as above.

``tau2-pass-hat-1-v1`` (tau2-bench ``pass^k`` with one trial: k = 1)
    pass^k per task = C(successes, k) / C(trials, k), averaged over tasks; with one trial pass^1 is
    the mean success, success ⇔ reward within 1e-6 of 1. Same rule as sr-bench's (its score *is*
    pass^1). tau2 leaves simulations that never ran (infrastructure errors) out of the mean; sr-bench
    counts every planned cell, so ``score_ran_only`` gives the mean over the cells whose conversation
    ran to an end (the two agree when no cell failed).

``terminal-bench-mean-reward-v1`` (Harbor: benchmark = mean reward over tasks × trials, one trial here)
    A trial's score is its verifier reward (``reward.txt`` / ``reward.json``); the benchmark's is the
    mean. sr-bench counts a task only when the reward is exactly 1, so the two agree while every
    reward is 0 or 1 (Terminal-Bench's tests write 1 or 0); a fractional reward is where they differ.
    A trial without a reward (Harbor's trial error) scores 0 here as in sr-bench's denominator;
    ``score_rewarded_only`` is the mean over the trials that produced a reward.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import JsonValue

from srbench.benchmarks.figures import CodeDetails
from srbench.benchmarks.graders import extract_json_answer, grid_problem, visible_text
from srbench.benchmarks.published_grades import (
    ARC_PASS2_RULE,
    ARC_RULE,
    GPQA_RULE,
    HLE_RULE,
    LCB_RULE,
    MMLU_PRO_RULE,
    SCICODE_RULE,
    SIMPLEQA_RULE,
    TAU3_RULE,
    TB_RULE,
    ArcPass2Published,
    ArcPublished,
    CodePublished,
    GpqaPublished,
    MmluProPublished,
    PublishedGrade,
    PublishedSummary,
    Tau3Published,
    TerminalPublished,
    VerdictPublished,
)
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.grade import StoredGrade

SOURCES = {
    MMLU_PRO_RULE: "TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py: extraction chain and seed-12345 random fallback",
    GPQA_RULE: "openai/simple-evals gpqa_eval.py: ANSWER_PATTERN_MULTICHOICE, first match",
    ARC_RULE: "ARC Prize scoring: each test input scored on its own, puzzle = mean of its inputs (1 attempt, "
              "not the published pass@2)",
    ARC_PASS2_RULE: "ARC Prize scoring: each test input solved by either of two attempts (pass@2), puzzle = mean "
                    "of its inputs",
    SIMPLEQA_RULE: "SimpleQA Verified paper / simple-evals: F1 of accuracy and accuracy-given-attempted",
    HLE_RULE: "centerforaisafety/hle run_judge_results.py: accuracy over all questions with the official judge",
    LCB_RULE: "LiveCodeBench lcb_runner: pass@1 per problem (every test passes), mean over problems",
    SCICODE_RULE: "SciCode eval: main-problem resolve rate (every scored step passes), sub-step pass rate beside it",
    TAU3_RULE: "tau2-bench agent_metrics.py: pass^k = C(successes, k) / C(trials, k) per task, k = 1 (one trial)",
    TB_RULE: "Harbor / Terminal-Bench 2: mean verifier reward over tasks x trials (one trial)",
}
METRICS = {MMLU_PRO_RULE: "accuracy", GPQA_RULE: "accuracy", ARC_RULE: "per input", ARC_PASS2_RULE: "pass@2/input",
           HLE_RULE: "accuracy", SIMPLEQA_RULE: "f1", LCB_RULE: "pass@1", SCICODE_RULE: "resolved",
           TAU3_RULE: "pass^1", TB_RULE: "mean reward"}       # short labels: the CLI tables show them
# the rules that are sr-bench's own rule by construction (up to the named exceptions): the report says so
SAME_RULE = {
    LCB_RULE: "same rule as sr-bench's (pass@1, one sample, every test passes) except for replies cut by the "
              "output limit, which upstream still runs",
    SCICODE_RULE: "same rule as sr-bench's (every scored step passes) except for replies cut by the output limit",
    TAU3_RULE: "same rule as sr-bench's: pass^1 = mean success (reward within 1e-6 of 1) over one trial per task",
    TB_RULE: "same as sr-bench's resolution rate while every reward is 0 or 1; a fractional reward counts in full",
}

_MMLU_1 = re.compile(r"answer is \(?([A-J])\)?")
_MMLU_2 = re.compile(r".*[aA]nswer:\s*([A-J])")
_MMLU_3 = re.compile(r"\b[A-J]\b(?!.*\b[A-J]\b)", re.DOTALL)
_GPQA = re.compile(r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?")
MMLU_FALLBACK_SEED = 12345


def _text(text: str | None) -> str | None:
    """The visible text the rules read; '' when the call answered with no final text."""
    if text is None:
        return None
    visible = visible_text(text)
    return "" if visible is None else visible


McqStep = Literal["answer_is", "answer_colon", "last_letter"]


def mmlu_pro_extract(text: str) -> tuple[str | None, McqStep | None]:
    """(letter, step) under the official chain; step is answer_is | answer_colon | last_letter."""
    text = text.replace("**", "")
    steps: tuple[tuple[McqStep, re.Pattern[str]], ...] = (("answer_is", _MMLU_1), ("answer_colon", _MMLU_2))
    for step, pattern in steps:
        m = pattern.search(text)
        if m:
            return m.group(1), step
    m = _MMLU_3.search(text)
    return (m.group(0), "last_letter") if m else (None, None)


def mmlu_pro_fallback_index(option_count: int) -> int:
    """The official script's guess for an unextracted answer: ``random.seed(12345); randint(0, n-1)``."""
    return random.Random(MMLU_FALLBACK_SEED).randint(0, option_count - 1)


def mmlu_pro_grade(text: str | None, answer: str, option_count: int) -> MmluProPublished:
    """Published-rule grade of one MMLU-Pro reply (None = the call gave no reply)."""
    visible = _text(text)
    if visible is None:
        return MmluProPublished(rule=MMLU_PRO_RULE, score=0.0, extracted=None, step=None, fallback=False,
                                reason="no reply")
    letter, step = mmlu_pro_extract(visible)
    if letter is not None:
        return MmluProPublished(rule=MMLU_PRO_RULE, score=float(letter == answer), extracted=letter, step=step,
                                fallback=False)
    guess = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[mmlu_pro_fallback_index(option_count)]
    return MmluProPublished(rule=MMLU_PRO_RULE, score=float(guess == answer), extracted=None, step=None,
                            fallback=True, fallback_guess=guess)


def gpqa_grade(text: str | None, answer: str) -> GpqaPublished:
    """Published-rule grade of one GPQA reply (simple-evals regex, first match, exact letter)."""
    visible = _text(text)
    m = _GPQA.search(visible) if visible else None
    letter = m.group(1) if m else None
    return GpqaPublished(rule=GPQA_RULE, score=float(letter is not None and letter == answer), extracted=letter)


def arc_grade(text: str | None, expected: list[Any]) -> ArcPublished:
    """Published-rule grade of one ARC-AGI-2 reply: each test input on its own, one attempt."""
    inputs = len(expected)
    visible = _text(text)
    found, value, _ = extract_json_answer(visible) if visible else (False, None, "")
    if found and inputs == 1 and grid_problem(value) is None:
        value = [value]                         # a bare grid answers a one-input puzzle
    grids = value if found and isinstance(value, list) else []
    solved = [i < len(grids) and grid_problem(grids[i]) is None and grids[i] == expected[i] for i in range(inputs)]
    return ArcPublished(rule=ARC_RULE, score=sum(solved) / inputs, solved_inputs=sum(solved), test_inputs=inputs,
                        solved=solved)


def arc_pass2_grade(texts: Sequence[str | None], expected: list[Any]) -> ArcPass2Published:
    """Published-rule grade of two ARC-AGI-2 attempts (pass@2 per test input)."""
    each = [arc_grade(t, expected).solved for t in texts]
    inputs = len(expected)
    solved = [any(s[i] for s in each) for i in range(inputs)]
    return ArcPass2Published(rule=ARC_PASS2_RULE, score=sum(solved) / inputs, solved_inputs=sum(solved),
                             test_inputs=inputs, solved=solved, attempts=len(texts), solved_by_attempt=each)


def code_grade(rule: str, grade: StoredGrade | None) -> CodePublished:
    """LiveCodeBench / SciCode: the stored sandbox verdict (`grade`: the stored grade object), before
    sr-bench's output-limit rule (``passed`` = every test / every scored step passed). `grade` None: the
    cell was not graded."""
    details = CodeDetails.model_validate(grade.details if grade is not None else {})
    verdict = details.verdict
    scicode = rule == SCICODE_RULE
    return CodePublished.model_validate({
        "rule": rule, "score": float(verdict == "passed"), "verdict": verdict,
        "sub_steps_passed": (details.sub_steps_passed or 0) if scicode else None,
        "sub_steps_scored": (details.sub_steps_scored or 0) if scicode else None})


def tau3_grade(conversation: ConversationRecord, details: Mapping[str, JsonValue] | None) -> Tau3Published:
    """One τ³ trial under pass^1: success ⇔ reward within 1e-6 of 1 (`details`: the stored reward)."""
    stored = (details or {}).get("reward")
    ran = not conversation.error_class and isinstance(stored, int | float)
    reward = float(stored) if ran and isinstance(stored, int | float) else None
    success = reward is not None and abs(reward - 1.0) <= 1e-6
    return Tau3Published(rule=TAU3_RULE, score=float(success), reward=reward, ran=ran)


def terminal_grade(conversation: ConversationRecord) -> TerminalPublished:
    """One Terminal-Bench trial: its verifier reward (no reward, or a failed trial: 0, ``rewarded`` false)."""
    reward = conversation.outputs.get("reward")
    ok = not conversation.error_class and isinstance(reward, int | float) and not isinstance(reward, bool)
    value = float(reward) if ok and isinstance(reward, int | float) else None
    return TerminalPublished(rule=TB_RULE, score=value if value is not None else 0.0, reward=value, rewarded=ok)


def verdict_grade(rule: str, verdict: str | None) -> VerdictPublished:
    """Judged benchmarks: the published per-answer verdict is the judge's own."""
    return VerdictPublished.model_validate({"rule": rule, "score": float(verdict == "correct"), "verdict": verdict})


# -- summaries over a benchmark's planned cells -------------------------------------------------
PublishedCells = Sequence[tuple[bool, PublishedGrade | None]]
"""Per planned cell: (sr-bench's verdict, the cell's published grade or None)."""


def summarize(rule: str | None, cells: PublishedCells, *,
              reason: str | None = None) -> PublishedSummary:
    """The published-rule figure of one target on one benchmark, beside sr-bench's.

    `cells` holds, per planned cell, (sr-bench correct, published grade or None); a cell without a
    published grade (no answer, failed call) scores 0 under both rules. ``score`` = mean published
    score over the planned cells; ``graded_differently`` = cells whose published score differs from
    sr-bench's 0/1 (``published_higher`` / ``published_lower`` split it). With ``rule`` None the
    published figure is unavailable and ``reason`` says why.
    """
    n = len(cells)
    if rule is None:
        return PublishedSummary(rule=None, score=None, n=n, graded_differently=None, reason=reason, source=None)
    scores = [p.score if p is not None else 0.0 for _, p in cells]
    higher = sum(1 for (c, _), s in zip(cells, scores, strict=True) if s > float(bool(c)))
    lower = sum(1 for (c, _), s in zip(cells, scores, strict=True) if s < float(bool(c)))
    out = PublishedSummary(rule=rule, source=SOURCES.get(rule), n=n, score=sum(scores) / n if n else None,
                           graded_differently=higher + lower, published_higher=higher, published_lower=lower)
    out = _with_rule_fields(out, rule, [p for _, p in cells], scores)
    if rule in METRICS:
        out = out.model_copy(update={"metric": METRICS[rule]})
    if rule in SAME_RULE:
        out = out.model_copy(update={"note": SAME_RULE[rule]})
    return out.model_copy(update={"reason": reason}) if reason else out


def _with_rule_fields(out: PublishedSummary, rule: str, grades: list[PublishedGrade | None],
                      scores: list[float]) -> PublishedSummary:
    """`out` with the fields that only `rule`'s figure has."""
    n = len(grades)
    if rule == MMLU_PRO_RULE:
        fb = [p for p in grades if isinstance(p, MmluProPublished) and p.fallback]
        credited = sum(1 for p in fb if p.score)
        return out.model_copy(update={"unextracted": len(fb), "fallback_credited": credited,
                                      "score_without_fallback": ((sum(scores) - credited) / n) if n else None})
    if rule in (ARC_RULE, ARC_PASS2_RULE):
        arc = [p for p in grades if isinstance(p, ArcPublished | ArcPass2Published)]
        return out.model_copy(update={"test_inputs": sum(p.test_inputs for p in arc),
                                      "solved_inputs": sum(p.solved_inputs for p in arc)})
    if rule == SCICODE_RULE:
        code = [p for p in grades if isinstance(p, CodePublished)]
        passed = sum(p.sub_steps_passed or 0 for p in code)
        scored = sum(p.sub_steps_scored or 0 for p in code)
        return out.model_copy(update={"sub_steps_passed": passed, "sub_steps_scored": scored,
                                      "sub_step_pass_rate": passed / scored if scored else None})
    if rule == TAU3_RULE:
        ran = [p for p in grades if isinstance(p, Tau3Published) and p.ran]
        return out.model_copy(update={"ran": len(ran),
                                      "score_ran_only": sum(p.score for p in ran) / len(ran) if ran else None})
    if rule == TB_RULE:
        got = [p for p in grades if isinstance(p, TerminalPublished) and p.rewarded]
        return out.model_copy(update={"rewarded": len(got),
                                      "score_rewarded_only": sum(p.score for p in got) / len(got) if got else None})
    return out


__all__ = ["ARC_PASS2_RULE", "ARC_RULE", "GPQA_RULE", "HLE_RULE", "LCB_RULE", "METRICS", "MMLU_PRO_RULE", "SAME_RULE",
           "SCICODE_RULE", "SIMPLEQA_RULE", "SOURCES", "TAU3_RULE", "TB_RULE", "arc_grade", "arc_pass2_grade",
           "code_grade", "gpqa_grade", "mmlu_pro_extract", "mmlu_pro_fallback_index", "mmlu_pro_grade", "summarize",
           "tau3_grade", "terminal_grade", "verdict_grade"]
