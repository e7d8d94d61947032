"""What the simulated models answer, how many tokens they bill, and where the simulated router sends
a prompt. Pure and deterministic: every choice is a BLAKE3 hash of (model, prompt), never a random draw.

Answer key
    Maps a prompt to its correct answer. Keys are :func:`messages_key` digests of a case's messages
    (``answer_key_from_cases`` / ``load_answer_key`` build them from a frozen dataset JSONL) or the
    plain text of the last user message. Values are what the dataset stores: an MCQ letter, a list
    of ARC grids, or free text.

Correctness
    A model with skill s answers a known prompt correctly iff unit_hash("skill", model, prompt) < s.
    Otherwise it gives a deterministic wrong answer (another letter among A–D or up to the correct
    one; the first cell of the first grid changed by +1 mod 10; free text → "I am not sure.").
    Unknown prompts get a deterministic letter A–D.

Code answers
    A LiveCodeBench case gets a fenced program, a SciCode step (keyed by its user turn) a fenced
    solution of that step (see :mod:`code_answers`): right or wrong as above. A weak coder's wrong
    LiveCodeBench programs fail slowly: `fail_busy_s` of CPU first, or, for the share
    unit_hash("loop", model, prompt) < `fail_loop_share`, a loop the test's time limit ends.

Rendering
    A letter is answered ``Answer: X`` (or, for a model with ``mcq_styles``, in one of `MCQ_STYLES`
    picked by unit_hash("style", model, prompt)); a list or object as compact JSON; other text verbatim.
    A model with ``think=True`` prefixes ``<think>…</think>`` to the answer.

Tokens (no tokenizer)
    prompt_tokens = max(1, ceil(prompt chars / 4)) where prompt chars = Σ len(message content);
    cached_tokens = floor(cached_fraction · prompt_tokens);
    completion_tokens = max(1, ceil(len(completion text) / 4)), the think block included.

Judge prompts
    A user message that is JSON with ``reference_answer`` and ``candidate_answer`` gets a JSON
    verdict (see :func:`judge_reply`), whatever the model; the official SimpleQA autorater and HLE
    judge prompts get replies in their own formats (:func:`official_judge_reply`).

Router rule (:class:`RouterRule`)
    The strong model when the prompt has more than `long_prompt_chars` characters or the last user
    message contains one of `keywords` (case-insensitive); otherwise the weak model.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3

from srbench.cas.digest import canonical_json, digest_json
from srbench.schemas.wire import WireJSON
from srbench.simulate import code_answers

__all__ = ["SimModel", "RouterRule", "Reply", "messages_key", "prompt_chars", "last_user_text",
           "unit_hash", "answer_key_from_cases", "load_answer_key", "lookup_answer", "wrong_answer",
           "render_answer", "reply_for", "usage_for"]

MessageList = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class SimModel:
    """A simulated model: `skill` is the probability (over prompts) of a correct answer."""

    name: str
    skill: float
    latency_s: float = 0.0        # whole response time: half before the first token, half spread
    cached_fraction: float = 0.0
    think: bool = False
    mcq_styles: tuple[str, ...] = ()   # how letters are written (see MCQ_STYLES); () = always "Answer: X"
    fail_busy_s: float = 0.0      # a wrong program computes this long (CPU) before it fails: a weak coder
    fail_loop_share: float = 0.0  # this share of its wrong programs loop until the test's time limit

    def __post_init__(self) -> None:
        if not (0.0 <= self.skill <= 1.0 and 0.0 <= self.cached_fraction <= 1.0 and self.latency_s >= 0
                and self.fail_busy_s >= 0 and 0.0 <= self.fail_loop_share <= 1.0):
            raise ValueError("SimModel needs 0 ≤ skill ≤ 1, 0 ≤ cached_fraction ≤ 1, latency_s ≥ 0, "
                             "fail_busy_s ≥ 0, 0 ≤ fail_loop_share ≤ 1")


@dataclass(frozen=True)
class RouterRule:
    """The simulated MoM's documented, deterministic routing rule (see the module docstring)."""

    strong: str
    weak: str
    long_prompt_chars: int = 800
    keywords: tuple[str, ...] = ("prove", "derive", "grid", "step by step", "calculate")
    strong_decision: str = "complex_reasoning"
    weak_decision: str = "simple_knowledge"
    config_hash: str = "sim-config-v1"
    name: str = "MoM"
    reports_config_hash: bool = True      # False: a router that gives no config-hash evidence at all

    def route(self, messages: MessageList) -> tuple[str, str]:
        """(selected model, decision name)."""
        text = last_user_text(messages).lower()
        if prompt_chars(messages) > self.long_prompt_chars or any(k.lower() in text for k in self.keywords):
            return self.strong, self.strong_decision
        return self.weak, self.weak_decision


@dataclass(frozen=True)
class Reply:
    text: str                     # completion text (think block included when the model thinks)
    correct: bool | None          # None when the prompt is not in the answer key
    answer: Any                   # the answer given


def _content(m: Mapping[str, Any]) -> str:
    c = m.get("content")
    return c if isinstance(c, str) else ("" if c is None else json.dumps(c, sort_keys=True))


def messages_key(messages: MessageList) -> str:
    """Digest of the (role, content) pairs of a message list — the answer key's lookup key."""
    return digest_json([{"role": str(m.get("role", "")), "content": _content(m)} for m in messages])


def prompt_chars(messages: MessageList) -> int:
    return sum(len(_content(m)) for m in messages)


def last_user_text(messages: MessageList) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return _content(m)
    return ""


def unit_hash(*parts: Any) -> float:
    """A deterministic number in [0, 1) from the canonical JSON of `parts`."""
    h = blake3.blake3(canonical_json(list(parts))).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def answer_key_from_cases(cases: Iterable[Any]) -> WireJSON:
    """{messages_key(case.messages): case.answer} for dicts or pydantic cases."""
    key: WireJSON = {}
    for case in cases:
        c = case.model_dump() if hasattr(case, "model_dump") else case
        key[messages_key(c["messages"])] = c.get("answer")
    return key


def load_answer_key(path: str | Path) -> WireJSON:
    """Answer key of a frozen dataset JSONL (one case per line)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return answer_key_from_cases(json.loads(line) for line in lines if line.strip())


def lookup_answer(answer_key: Mapping[str, Any], messages: MessageList) -> tuple[bool, Any]:
    """(found, answer): by messages digest first, then by the last user message text."""
    k = messages_key(messages)
    if k in answer_key:
        return True, answer_key[k]
    text = last_user_text(messages)
    if text in answer_key:
        return True, answer_key[text]
    return False, None


def _is_letter(answer: Any) -> bool:
    return isinstance(answer, str) and len(answer) == 1 and answer in string.ascii_uppercase


def wrong_answer(answer: Any, salt: float) -> Any:
    """A deterministic answer different from `answer` (`salt` ∈ [0, 1) picks among the options)."""
    if _is_letter(answer):
        top = max(4, string.ascii_uppercase.index(answer) + 1)
        options = [c for c in string.ascii_uppercase[:top] if c != answer]
        return options[int(salt * len(options))]
    if isinstance(answer, list) and answer and isinstance(answer[0], list):
        grids = json.loads(json.dumps(answer))
        first = grids[0]
        if first and isinstance(first[0], list) and first[0] and isinstance(first[0][0], int):
            first[0][0] = (first[0][0] + 1) % 10          # a list of grids
            return grids
        if first and isinstance(first[0], int):
            first[0] = (first[0] + 1) % 10                # a single grid
            return grids
    return "I am not sure."


MCQ_STYLES = {
    "answer_colon": "Reasoning done.\nAnswer: {x}",
    "answer_is": "Let me work through it. The answer is ({x})",
    "option": "The correct option is {x}.",
    "second_thought": "I first thought the answer is {y}, but checking again, the answer is ({x}).",
}


def render_answer(answer: Any, style: str | None = None, other: str = "A") -> str:
    """The reply text for `answer`; a letter in one of `MCQ_STYLES` (`other` is the letter a
    'second_thought' reply first names), by default ``Answer: X``."""
    if _is_letter(answer):
        return MCQ_STYLES[style].format(x=answer, y=other) if style else f"Answer: {answer}"
    if isinstance(answer, list | dict):
        return json.dumps(answer, separators=(",", ":"))
    return str(answer)


def judge_reply(messages: MessageList) -> Reply | None:
    """A reference-judge prompt (user message = JSON {question, reference_answer, candidate_answer})
    gets a JSON verdict: correct when the reference text occurs in the candidate (case-insensitive),
    not_attempted when the candidate says it is not sure, else incorrect."""
    official = official_judge_reply(last_user_text(messages))
    if official is not None:
        return official
    try:
        body = json.loads(last_user_text(messages))
    except ValueError:
        return None
    if not isinstance(body, dict) or not {"reference_answer", "candidate_answer"} <= set(body):
        return None
    ref, cand = str(body["reference_answer"]).strip().lower(), str(body["candidate_answer"]).lower()
    verdict = "correct" if ref and ref in cand else "not_attempted" if "not sure" in cand else "incorrect"
    text = json.dumps({"verdict": verdict, "explanation": "simulated reference judge"})
    return Reply(text=text, correct=None, answer=verdict)


def _between(text: str, start: str, end: str) -> str | None:
    i = text.rfind(start)
    j = text.find(end, i + len(start)) if i >= 0 else -1
    return text[i + len(start):j] if j >= 0 else None


def _verdict(reference: str, candidate: str) -> str:
    ref, cand = reference.strip().lower(), candidate.lower()
    return "correct" if ref and ref in cand else "not_attempted" if "not sure" in cand else "incorrect"


def official_judge_reply(prompt: str) -> Reply | None:
    """The official SimpleQA autorater prompt gets a letter (A/B/C), the official HLE judge prompt
    the fields it asks for as JSON; same verdict rule as the reference judge."""
    gold = _between(prompt, "\nGold target: ", "\nPredicted answer: ")
    predicted = _between(prompt, "\nPredicted answer: ", "\n```\n\nGrade the predicted answer")
    if gold is not None and predicted is not None:
        v = _verdict(gold, predicted)
        return Reply(text={"correct": "A", "incorrect": "B"}.get(v, "C"), correct=None, answer=v)
    response = _between(prompt, "[response]: ", "\n\nYour judgement must be")
    reference = _between(prompt, "[correct_answer]: ", "\n\nreasoning:")
    if response is not None and reference is not None:
        v = _verdict(reference, response)
        text = json.dumps({"extracted_final_answer": response.strip()[:80], "reasoning": "simulated official judge",
                           "correct": "yes" if v == "correct" else "no", "confidence": 100})
        return Reply(text=text, correct=None, answer=v)
    return None


def reply_for(model: SimModel, messages: MessageList, answer_key: Mapping[str, Any]) -> Reply:
    """The model's deterministic reply to `messages` (a reference-judge prompt gets a verdict)."""
    judged = judge_reply(messages)
    if judged is not None:
        return judged
    pkey = messages_key(messages)
    found, answer = lookup_answer(answer_key, messages)
    if not found:
        given: str | None = "ABCD"[int(unit_hash("unknown", model.name, pkey) * 4)]
        correct = None
    else:
        correct = unit_hash("skill", model.name, pkey) < model.skill
        given = answer if correct else wrong_answer(answer, unit_hash("wrong", model.name, pkey))
    if found and code_answers.is_code_answer(answer):
        loops = unit_hash("loop", model.name, pkey) < model.fail_loop_share
        text = code_answers.lcb_program(answer, bool(correct), "loop" if loops else "slow", model.fail_busy_s)
        given = None
    elif found and code_answers.is_scicode_step(answer):
        text = code_answers.scicode_reply(answer, bool(correct))
        given = None
    else:
        style = None
        if model.mcq_styles and _is_letter(given):
            style = model.mcq_styles[int(unit_hash("style", model.name, pkey) * len(model.mcq_styles))]
        text = render_answer(given, style, wrong_answer(given, 0.5) if _is_letter(given) else "A")
    if model.think:
        text = f"<think>\nThe question asks for one answer. I consider the options.\n</think>\n\n{text}"
    return Reply(text=text, correct=correct, answer=given)


def usage_for(model: SimModel, messages: MessageList, completion_text: str) -> WireJSON:
    """The OpenAI-shaped usage object the simulator bills (formulas in the module docstring)."""
    prompt = max(1, math.ceil(prompt_chars(messages) / 4))
    completion = max(1, math.ceil(len(completion_text) / 4))
    cached = math.floor(model.cached_fraction * prompt)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}}
