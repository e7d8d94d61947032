"""Golden corpus for ARC-AGI-2 with two attempts (the plan's ``attempts: 2``), verdicts written by reading
the rules, not by running sr-bench:

- sr-bench's rule (``sr-bench-arc-exact-v1`` on the *first* attempt, arc_agi_2.py docstring): the first
  attempt's grid list must equal every expected output (all-or-nothing); a failed first call has no
  text (``unparsed``); a first attempt cut by the output limit (``finish_reason: length``) is never
  credited (``output_limit``), a wrong one stays what it is; the second attempt never counts.
- the published rule (ARC Prize scoring, ``arc-agi-2-pass-at-2-v1``): test input i is solved iff grid i
  of attempt 1 *or* of attempt 2 is exactly right (each attempt read as in the one-attempt rule: grids
  by position, a bare grid answers a one-input puzzle, only integers 0–9); the finish reason does not
  matter; a failed call solves nothing; the puzzle's score is solved inputs / test inputs.

An attempt is ``OK(text)`` (completed), ``CUT(text)`` (completed, finish_reason length) or ``FAIL`` (the
call failed); ``None`` as the second attempt: it was never made (the first call failed, so the cell
ended). Rows: (attempt 1, attempt 2, expected outputs, sr-bench status, solved flags per test input).
"""

from __future__ import annotations

from typing import Any

from srbench.schemas.conversation import ConversationRecord

from ..fixtures import conversation_record


def OK(text: str) -> dict[str, Any]:  # noqa: N802 - reads as a constructor in the table
    return {"status": "completed", "text": text, "finish_reason": "stop", "error_class": None}


def CUT(text: str) -> dict[str, Any]:  # noqa: N802
    return {"status": "completed", "text": text, "finish_reason": "length", "error_class": None}


FAIL: dict[str, Any] = {"status": "failed", "text": None, "finish_reason": None, "error_class": "http_error"}

E1 = [[[1, 2], [3, 4]]]                 # one test input
E2 = [[[1]], [[2, 2]]]                  # two test inputs
E3 = [[[0]], [[1]], [[2]]]              # three test inputs

R1, W1 = "[[[1,2],[3,4]]]", "[[[1,2],[3,5]]]"
R2, A2, B2, N2 = "[[[1]], [[2,2]]]", "[[[1]], [[2,3]]]", "[[[9]], [[2,2]]]", "[[[9]], [[9,9]]]"
R3 = "[[[0]], [[1]], [[2]]]"
T, F = True, False

PASS2 = [
    # one test input
    (OK(R1), OK(R1), E1, "correct", [T]),
    (OK(R1), OK(W1), E1, "correct", [T]),
    (OK(W1), OK(R1), E1, "incorrect", [T]),                  # the second attempt only helps pass@2
    (OK(W1), OK(W1), E1, "incorrect", [F]),
    (OK("no idea"), OK(R1), E1, "unparsed", [T]),
    (OK("[[1,2],[3,4]]"), OK(W1), E1, "invalid", [T]),       # a bare grid: fine for the published rule
    (FAIL, None, E1, "unparsed", [F]),                       # first call failed: no second attempt
    (OK(W1), FAIL, E1, "incorrect", [F]),
    (OK(R1), FAIL, E1, "correct", [T]),
    (CUT(R1), OK(W1), E1, "output_limit", [T]),              # truncated: sr-bench never credits it
    (CUT(W1), OK(R1), E1, "incorrect", [T]),
    (OK("<think>[[[1,2],[3,4]]]"), OK(W1), E1, "unparsed", [F]),   # unclosed think: no final text
    (OK("<think>[[[9]]]</think>[[[1,2],[3,4]]]"), OK(W1), E1, "correct", [T]),
    (OK(R1), OK("[[1,2],[3,4]]"), E1, "correct", [T]),
    (OK(""), OK(""), E1, "unparsed", [F]),
    (OK("[[[true, 2], [3, 4]]]"), OK(R1), E1, "invalid", [T]),     # true is no colour
    (OK("[[[1.0, 2], [3, 4]]]"), OK("[[[1.0, 2], [3, 4]]]"), E1, "invalid", [F]),
    (OK(W1), CUT(R1), E1, "incorrect", [T]),                 # a cut second attempt still counts for pass@2
    # two test inputs
    (OK(R2), OK(R2), E2, "correct", [T, T]),
    (OK(A2), OK(B2), E2, "incorrect", [T, T]),               # each input solved by a different attempt
    (OK(B2), OK(A2), E2, "incorrect", [T, T]),
    (OK(A2), OK(A2), E2, "incorrect", [T, F]),
    (OK(N2), OK(B2), E2, "incorrect", [F, T]),
    (OK(N2), OK(N2), E2, "incorrect", [F, F]),
    (OK(R2), OK(N2), E2, "correct", [T, T]),
    (OK(N2), OK(R2), E2, "incorrect", [T, T]),
    (OK("[[[1]]]"), OK(B2), E2, "incorrect", [T, T]),        # one grid for two inputs, then the other one
    (FAIL, None, E2, "unparsed", [F, F]),
    (OK(A2), FAIL, E2, "incorrect", [T, F]),
    (CUT(R2), OK(N2), E2, "output_limit", [T, T]),
    (OK("[[[1]], [[2,10]]]"), OK(B2), E2, "invalid", [T, T]),      # 10 is no colour: only grid 2 fails
    (OK("[[[2,2]], [[1]]]"), OK("[[[2,2]], [[1]]]"), E2, "incorrect", [F, F]),   # swapped order
    (OK("[[1]]"), OK("[[[1]]]"), E2, "invalid", [T, F]),     # no bare-grid reading for two inputs
    (OK("[[[1]], [[2,2]], [[3]]]"), OK(N2), E2, "incorrect", [T, T]),   # an extra grid is ignored
    (OK('[[[1]], "x"]'), OK(B2), E2, "invalid", [T, T]),
    (OK("[[[1]], [[2,2]]]\n\nor [[[9]], [[9,9]]]"), OK(N2), E2, "incorrect", [F, F]),   # the last span
    (CUT(A2), CUT(B2), E2, "incorrect", [T, T]),
    # three test inputs
    (OK(R3), OK(R3), E3, "correct", [T, T, T]),
    (OK("[[[0]], [[9]], [[9]]]"), OK("[[[9]], [[1]], [[2]]]"), E3, "incorrect", [T, T, T]),
    (OK("[[[0]], [[9]], [[9]]]"), OK("[[[9]], [[9]], [[2]]]"), E3, "incorrect", [T, F, T]),
    (OK("[[[9]], [[1]], [[9]]]"), OK("[[[9]], [[1]], [[9]]]"), E3, "incorrect", [F, T, F]),
    (OK("[[[9]], [[9]], [[9]]]"), OK("[[[5]], [[5]], [[5]]]"), E3, "incorrect", [F, F, F]),
    (OK("[[[0]], [[1]]]"), OK("[[[9]], [[9]], [[2]]]"), E3, "incorrect", [T, T, T]),
    (FAIL, None, E3, "unparsed", [F, F, F]),
    (OK(R3), FAIL, E3, "correct", [T, T, T]),
    (OK("```json\n[[[0]], [[1]], [[9]]]\n```"), OK("```\n[[[9]], [[9]], [[2]]]\n```"), E3, "incorrect",
     [T, T, T]),
    (CUT(R3), FAIL, E3, "output_limit", [T, T, T]),
    (OK("First guess [[[9]], [[9]], [[9]]], final [[[0]], [[9]], [[2]]]"), OK("no grid"), E3, "incorrect",
     [T, F, T]),
]


def conversation(first: dict[str, Any], second: dict[str, Any] | None) -> ConversationRecord:
    """The stored conversation record of one pass@2 cell (arc_agi_2.ArcAgi2.converse's shape)."""
    attempts = [{"attempt": 1, **first}] + ([{"attempt": 2, **second}] if second is not None else [])
    return conversation_record(final_text=first["text"], outputs={"attempts": attempts})
