"""The benchmarks' official judge prompts, for plans that pin them instead of sr-bench's reference judge.

A judged benchmark is graded by ``sr-bench-reference-judge-v1`` unless the store's
benchmark-options.json pins another ``grader_version`` the benchmark accepts (DEP-1):

``simpleqa-verified-autorater-v1`` (SimpleQA Verified)
    The SimpleQA grader template of openai/simple-evals as revised in the SimpleQA Verified paper
    (Haas et al., 2025, Appendix A): explicit acceptable ranges for numbers, "only the direct answer
    matters", hedging allowed only when the reply commits to one candidate. One user message with
    the question, the gold target and the predicted answer. Parse exactly as upstream:
    ``re.search(r"(A|B|C)", reply)``, the first match decides (A correct, B incorrect, C not
    attempted) and no match means C. So a judge that answers "CORRECT" is read as C, as upstream.

``hle-official-judge-v1`` (Humanity's Last Exam)
    ``JUDGE_PROMPT`` of centerforaisafety/hle ``hle_eval/run_judge_results.py``: one user message with
    the question, the response and the correct answer, asking for ``extracted_final_answer``,
    ``reasoning``, ``correct`` (yes/no) and ``confidence``. Upstream asks the OpenAI API for a
    structured output (``response_format`` = that schema); by default sr-bench sends the same prompt
    without it (not every OpenAI-compatible endpoint has structured outputs). A plan whose
    benchmark-options entry says ``"judge_response_format": "json_schema"`` sends upstream's exact
    protocol: the judge request carries ``HLE_RESPONSE_FORMAT``, the JSON schema the OpenAI SDK makes
    of upstream's ``ExtractedAnswer`` model (``extracted_final_answer`` string, ``reasoning`` string,
    ``correct`` "yes" | "no", ``confidence`` integer, ``strict`` true; all required, no other key;
    strict mode). Either way the reply is read as one JSON
    object with those fields, bare or in one ```` ```json ```` fence, or as the labelled lines the
    prompt shows (``correct: yes``). ``correct`` decides as upstream (``"yes" in correct``, lower-cased:
    upstream's structured output can only say ``yes`` or ``no``); the
    judge's ``confidence`` (0–100) is the stated confidence used for calibration. A reply with no
    readable ``correct`` field is a `JudgeError` (upstream leaves it unjudged and counts it wrong).

Each template's SHA-256 (canonical JSON of version and text) is part of the grade key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.benchmarks.graders import visible_text
from srbench.cas.digest import canonical_json, sha256_bytes
from srbench.schemas.wire import WireJSON

SIMPLEQA_AUTORATER = "simpleqa-verified-autorater-v1"
HLE_OFFICIAL = "hle-official-judge-v1"

SIMPLEQA_TEMPLATE = """Your job is to look at a question, a gold target, and a predicted answer, and then assign a grade of either ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"].
First, I will give examples of each grade, and then you will grade a new example.


The following are examples of CORRECT predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia Obama and Sasha Obama
Predicted answer 1: sasha and malia obama
Predicted answer 2: most people would say Malia and Sasha, but I'm not sure and would have to double check
Predicted answer 3: Barack Obama has two daughters. Their names are Malia Ann and Natasha Marian, but they are commonly referred to as Malia Obama and Sasha Obama. Malia was born on July 4, 1998, and Sasha was born on June 10, 2001.
Predicted answer 4: It's better to refer to Obama by his full name, Barack Hussein Obama II. He has two daughters: Malia and Sasha.
```
These predicted answers are all CORRECT because:
    - They fully contain the important information in the gold target.
    - They do not contain any information that contradicts the gold target.
    - Only semantic meaning matters; capitalization, punctuation, grammar, and order don't matter.
    - Only the direct answer matters; anything else beyond what is stated in the gold target (including extra information, corrections to the question itself, etc) does not matter, as long as it does not contradict the gold target.
    - Hedging and mentioning multiple candidate answers are permissible, provided that the response eventually commits to a single candidate answer, and that answer is correct.


The following are examples of INCORRECT predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia and Sasha
Predicted answer 1: Malia.
Predicted answer 2: Malia, Sasha, and Susan.
Predicted answer 3: Barack Obama does not have any children.
Predicted answer 4: While I don't know their exact names, I can tell you that Barack Obama has three children.
Predicted answer 5: It's possible you may mean Betsy and Olivia. However, you should clarify further details with updated references if necessary. Is that the correct answer?
Predicted answer 6: It may be the case that Obama's child is named James. However, it's recommended to confirm the most accurate and updated information since this could change over time. This model may not always reflect the most current information.
```
These predicted answers are all INCORRECT because:
    - A factual statement in the answer contradicts the gold target.
    - A hedged statement (e.g., "it is possible that", "although i'm not sure, i think") that commits to an incorrect answer is also considered incorrect.


The following are examples of NOT_ATTEMPTED predicted answers.
```
Question: What are the names of Barack Obama's children?
Gold target: Malia and Sasha
Predicted answer 1: I don't know.
Predicted answer 2: I need more context about which Obama you are talking about.
Predicted answer 3: Without researching the web, I cannot answer this question. However, I can tell you that Barack Obama has two children.
Predicted answer 4: Barack Obama has two children. I know that one of them is Malia, but I'm not sure about the other one.
Predicted answer 5: I cannot find any information about the number of Barack Obama's children.
Predicted answer 6: The provided text does not provide any information about the number of Barack Obama's children.
Predicted answer 7: I think it's either Malia and Sasha, or Malia and Jackie, or Joey and Malia. I'm not sure which one.
```
These predicted answers are all NOT_ATTEMPTED because:
    - The important information in the gold target is not included in the answer.
    - No statements in the answer contradict the gold target.
    - Hedged statements that provide multiple candidate answers without committing to a single correct answer are considered NOT_ATTEMPTED.


Also note the following things:
- For grading questions where the answer is a number, the gold target will also specify the allowed range, and any predicted answer that falls in that range should be considered correct. For example, consider a question "How many citations does the Transformer Paper have?" with gold target "120k (acceptable range: anything between 118k and 122k)".
    - Predicted answers "120k", "119k", and "120,314" are all CORRECT, because they fall within the range specified in the gold target.
    - Predicted answers "100k" and "113k" are INCORRECT, because they fall outside the range specified in the gold target.
    - Predicted answers "around 100k" and "more than 50k" are considered NOT_ATTEMPTED because they neither confirm nor contradict the gold target.
- The gold target may contain more information than the question. In such cases, the predicted answer only needs to contain the information that is in the question.
    - For example, consider the question "What episode did Derek and Meredith get legally married in Grey's Anatomy?" with gold target "Season 7, Episode 20: White Wedding". Either "Season 7, Episode 20" or "White Wedding" would be considered a CORRECT answer.
- Do not punish predicted answers if they omit information that would be clearly inferred from the question.
    - For example, consider the question "What city is OpenAI headquartered in?" and the gold target "San Francisco, California". The predicted answer "San Francisco" would be considered CORRECT, even though it does not include "California".
    - Consider the question "What award did A pretrainer's guide to training data: Measuring the effects of data age, domain coverage, quality, & toxicity win at NAACL '24?", the gold target is "Outstanding Paper Award". The predicted answer "Outstanding Paper" would be considered CORRECT, because "award" is presumed in the question.
    - For the question "What is the height of Jason Wei in meters?", the gold target is "1.73 m (acceptable range: anything between 1.72 m and 1.74 m)". The predicted answer "1.74" would be considered CORRECT, because meters is specified in the question.
    - For the question "What is the name of Barack Obama's wife?", the gold target is "Michelle Obama". The predicted answer "Michelle" would be considered CORRECT, because the last name can be presumed.
- Do not punish for typos in people's name if it's clearly the same name.
    - For example, if the gold target is "Hyung Won Chung", you can consider the following predicted answers as correct: "Hyoong Won Choong", "Hyungwon Chung", or "Hyun Won Chung".


Here is a new example. Simply reply with either CORRECT, INCORRECT, NOT ATTEMPTED. Don't apologize or correct yourself if there was a mistake; we are just trying to grade the answer.
```
Question: {question}
Gold target: {target}
Predicted answer: {predicted_answer}
```

Grade the predicted answer of this new question as one of:
A: CORRECT
B: INCORRECT
C: NOT_ATTEMPTED

Just return the letters "A", "B", or "C", with no text around it."""

HLE_TEMPLATE = r"""Judge whether the following [response] to [question] is correct or not based on the precise and unambiguous [correct_answer] below.

[question]: {question}

[response]: {response}

Your judgement must be in the format and criteria specified below:

extracted_final_answer: The final exact answer extracted from the [response]. Put the extracted answer as 'None' if there is no exact, final answer to extract from the response.

[correct_answer]: {correct_answer}

reasoning: Explain why the extracted_final_answer is correct or incorrect based on [correct_answer], focusing only on if there are meaningful differences between [correct_answer] and the extracted_final_answer. Do not comment on any background to the problem, do not attempt to solve the problem, do not argue for any answer different than [correct_answer], focus only on whether the answers match.

correct: Answer 'yes' if extracted_final_answer matches the [correct_answer] given above, or is within a small margin of error for numerical problems. Answer 'no' otherwise, i.e. if there if there is any inconsistency, ambiguity, non-equivalency, or if the extracted answer is incorrect.


confidence: The extracted confidence score between 0|\%| and 100|\%| from [response]. Put 100 if there is no confidence score available."""


# upstream's response_format (hle_eval/run_judge_results.py: ``response_format=ExtractedAnswer``), as the
# OpenAI SDK sends a pydantic model: a strict json_schema named after the model
HLE_RESPONSE_FORMAT: WireJSON = {
    "type": "json_schema",
    "json_schema": {
        "name": "ExtractedAnswer",
        "strict": True,
        "schema": {
            "type": "object",
            "title": "ExtractedAnswer",
            "properties": {
                "extracted_final_answer": {"type": "string", "title": "Extracted Final Answer"},
                "reasoning": {"type": "string", "title": "Reasoning"},
                "correct": {"type": "string", "enum": ["yes", "no"], "title": "Correct"},
                "confidence": {"type": "integer", "title": "Confidence"},
                "strict": {"type": "boolean", "const": True, "title": "Strict"},
            },
            "required": ["extracted_final_answer", "reasoning", "correct", "confidence", "strict"],
            "additionalProperties": False,
        },
    },
}
RESPONSE_FORMATS = ("json_schema",)           # the values of benchmark-options judge_response_format


JudgeVerdict = Literal["correct", "incorrect", "not_attempted"]


class JudgeReplyError(ValueError):
    """The judge's reply has no verdict under the pinned template's parse rule."""


class JudgeReading(BaseModel):
    """What a judge's reply says under its template's parse rule."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    verdict: JudgeVerdict
    """The verdict on the subject's answer."""
    explanation: str = ""
    """The judge's stated reason ('' when the template asks for none)."""

    def details(self) -> dict[str, JsonValue]:
        """What the grade's details keep beside the verdict and the explanation (a template's own fields)."""
        return self.model_dump(exclude={"verdict", "explanation"})


class SimpleQaReading(JudgeReading):
    """The SimpleQA autorater's reply: one letter."""

    grade_letter: Literal["A", "B", "C"]
    """The letter read (C when none was found)."""
    letter_found: bool
    """Whether the reply held a letter at all."""


class HleReading(JudgeReading):
    """HLE's official judge reply: its fields as upstream's ``ExtractedAnswer``."""

    extracted_final_answer: JsonValue = None
    """The final answer the judge extracted from the response (as the judge wrote it)."""
    confidence: float | None = Field(None, exclude_if=lambda v: v is None)
    """The confidence the judge read from the response, 0..1 (only when it stated one within 0–100 %)."""
    confidence_stated: bool | None = Field(None, exclude_if=lambda v: v is None)
    """True when `confidence` is set."""


@dataclass(frozen=True)
class JudgeSpec:
    """One judge template: its version, how to ask, how to read the reply, and its digest."""

    version: str
    text: str
    ask: Callable[[str, str, str], list[dict[str, str]]]          # (question, reference, candidate)
    read: Callable[[str | None], JudgeReading]                    # reply → what it says
    response_format: WireJSON | None = None   # upstream's structured output, sent when the plan opts in

    @property
    def sha256(self) -> str:
        return sha256_bytes(canonical_json({"version": self.version, "user": self.text}))


def _simpleqa_ask(question: str, reference: str, candidate: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": SIMPLEQA_TEMPLATE.format(question=question, target=reference,
                                                                 predicted_answer=candidate)}]


_LETTER = re.compile(r"(A|B|C)")
_SIMPLEQA_VERDICT: dict[str, JudgeVerdict] = {"A": "correct", "B": "incorrect", "C": "not_attempted"}


def read_simpleqa(reply: str | None) -> SimpleQaReading:
    """Upstream's parse: the first A, B or C anywhere in the reply; none → C (not attempted)."""
    text = visible_text(reply) or ""
    m = _LETTER.search(text)
    letter = m.group(0) if m else "C"
    return SimpleQaReading(verdict=_SIMPLEQA_VERDICT[letter], grade_letter=letter, letter_found=m is not None)


def _hle_ask(question: str, reference: str, candidate: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": HLE_TEMPLATE.format(question=question, response=candidate,
                                                            correct_answer=reference)}]


_FENCE = re.compile(r"\A```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)\r?\n?[ \t]*```\Z", re.DOTALL)
_FIELD = re.compile(r"^[ \t*_#]*(extracted_final_answer|reasoning|correct|confidence)[ \t*_]*:[ \t*_]*(.*)$",
                    re.IGNORECASE | re.MULTILINE)
_PERCENT = re.compile(r"(\d{1,3}(?:\.\d+)?)")


def _hle_fields(text: str) -> WireJSON:
    """The judge reply's fields: its JSON object (structured output), else its ``field: value`` lines."""
    fenced = _FENCE.match(text)
    body = fenced.group(1).strip() if fenced else text
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return value
    return {m.group(1).lower(): m.group(2).strip() for m in reversed(list(_FIELD.finditer(text)))}


def read_hle(reply: str | None) -> HleReading:
    """The official judge's verdict: correct ⇔ ``"yes" in correct``; confidence 0–100 → 0..1."""
    text = visible_text(reply)
    if not text:
        raise JudgeReplyError("no judge reply text")
    fields = _hle_fields(text)
    correct = fields.get("correct")
    if not isinstance(correct, str) or not correct.strip():
        raise JudgeReplyError("no 'correct' field (yes/no) in the judge reply")
    conf = fields.get("confidence")
    m = _PERCENT.search(str(conf)) if conf is not None and not isinstance(conf, bool) else None
    stated = m is not None and 0 <= float(m.group(1)) <= 100
    reasoning = fields.get("reasoning")
    return HleReading(verdict="correct" if "yes" in correct.strip().lower() else "incorrect",
                      explanation=reasoning if isinstance(reasoning, str) else "",
                      extracted_final_answer=fields.get("extracted_final_answer"),
                      confidence=float(m.group(1)) / 100 if m and stated else None, confidence_stated=stated or None)


SPECS: dict[str, JudgeSpec] = {
    SIMPLEQA_AUTORATER: JudgeSpec(SIMPLEQA_AUTORATER, SIMPLEQA_TEMPLATE, _simpleqa_ask, read_simpleqa),
    HLE_OFFICIAL: JudgeSpec(HLE_OFFICIAL, HLE_TEMPLATE, _hle_ask, read_hle, HLE_RESPONSE_FORMAT),
}

__all__ = ["HLE_OFFICIAL", "HLE_RESPONSE_FORMAT", "HLE_TEMPLATE", "RESPONSE_FORMATS", "SIMPLEQA_AUTORATER", "SIMPLEQA_TEMPLATE", "SPECS", "HleReading",
           "JudgeReading", "JudgeReplyError", "JudgeSpec", "JudgeVerdict", "SimpleQaReading", "read_hle", "read_simpleqa"]
