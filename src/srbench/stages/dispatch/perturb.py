"""Deterministic prompt perturbations for robustness previews (issue 43, item 4): a preview plan with
`perturbation: KIND` sends each case's messages with its last user message's text changed by KIND, seeded by
(plan seed, case id, KIND) — never a model-written paraphrase. The router's preview endpoint is asked only (no
inference); comparing its decisions with an unperturbed preview's gives the decision flip rate.

- ``whitespace``: every run of spaces after a seeded fifth of the words is doubled, and the text gains a
  leading and a trailing newline.
- ``case``: the text in lower case.
- ``punctuation``: every ``?`` and ``!`` removed, and every ``.`` that ends a sentence (before whitespace or
  the end) removed.
- ``typo``: two adjacent, different letters swapped inside a word of four or more letters (neither its first
  nor its last letter), at one seeded place (no such place: unchanged).
- ``preamble``: an irrelevant first line, ``PREAMBLE``, then a blank line, before the text.

A message whose content is not a string (content parts) is left as it is.
"""

from __future__ import annotations

import random
import re
from typing import get_args

from pydantic import JsonValue

from srbench.schemas.plan import Perturbation

PREAMBLE = "Note: this question comes from a routine review of archived material."
KINDS: tuple[str, ...] = get_args(Perturbation)
_WORD = re.compile(r"[A-Za-z]{4,}")
_SENTENCE_DOT = re.compile(r"\.(?=\s|$)")


def _rng(seed: int, case_id: str, kind: str) -> random.Random:
    return random.Random(f"{seed}:{case_id}:{kind}")


def _whitespace(text: str, rng: random.Random) -> str:
    parts = text.split(" ")
    out = [p + (" " if i < len(parts) - 1 and rng.random() < 0.2 else "") for i, p in enumerate(parts)]
    return "\n" + " ".join(out) + "\n"


def _typo(text: str, rng: random.Random) -> str:
    spots = [w.start() + i for w in _WORD.finditer(text)          # never a word's first or last letter
             for i in range(1, len(w.group()) - 2) if w.group()[i] != w.group()[i + 1]]
    if not spots:
        return text
    i = spots[rng.randrange(len(spots))]
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def perturb_text(text: str, kind: Perturbation, seed: int, case_id: str) -> str:
    """`text` perturbed by `kind` (the module docstring says how), the same for the same seed and case."""
    rng = _rng(seed, case_id, kind)
    if kind == "whitespace":
        return _whitespace(text, rng)
    if kind == "case":
        return text.lower()
    if kind == "punctuation":
        return _SENTENCE_DOT.sub("", text.replace("?", "").replace("!", ""))
    if kind == "typo":
        return _typo(text, rng)
    return PREAMBLE + "\n\n" + text


def perturb_messages(messages: list[dict[str, JsonValue]], kind: Perturbation | None, seed: int,
                     case_id: str) -> list[dict[str, JsonValue]]:
    """The messages with the last user message's text perturbed (`kind` None: as they are)."""
    if kind is None:
        return messages
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    content = messages[last].get("content") if last is not None else None
    if last is None or not isinstance(content, str):
        return messages
    out = list(messages)
    out[last] = {**messages[last], "content": perturb_text(content, kind, seed, case_id)}
    return out
