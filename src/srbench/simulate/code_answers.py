"""Simulated answers to code benchmarks (clearly not real solutions).

LiveCodeBench (answer = {mode, fn_name, tests}): a right answer is a program that looks each test's
input up in a table of the expected outputs; a wrong one prints (or returns) something else, at once
or, from a coder whose programs fail slowly (`Failing`), after computing for `busy_s` seconds of CPU,
or never (a loop that the test's time limit ends). Both are fenced like a model's reply, so the real
extraction and the sandboxed grading run on them.

SciCode (an answer-key entry per step's user turn, {scicode_step, right, wrong}, from
``scicode_samples.answer_key``): the right or the wrong fenced solution of that step.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from srbench.schemas.wire import WireJSON


def is_code_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and isinstance(answer.get("tests"), list) and "mode" in answer


def is_scicode_step(answer: Any) -> bool:
    return isinstance(answer, dict) and "scicode_step" in answer and "right" in answer


def scicode_reply(answer: WireJSON, correct: bool) -> str:
    return str(answer["right" if correct else "wrong"])


Failing = Literal["fast", "slow", "loop"]
"""How a wrong program fails: at once, after `busy_s` of CPU, or by looping until the time limit."""


def _spin(failing: Failing, busy_s: float, indent: str) -> str:
    """The wrong program's work before it answers (CPU-bound, as a slow algorithm is)."""
    if failing == "loop":
        return f"{indent}while True:\n{indent}    pass\n"
    if failing == "slow" and busy_s > 0:
        return (f"{indent}import time\n{indent}_end = time.process_time() + {busy_s!r}\n"
                f"{indent}while time.process_time() < _end:\n{indent}    pass\n")
    return ""


def lcb_program(answer: WireJSON, correct: bool, failing: Failing = "fast", busy_s: float = 0.0) -> str:
    tests = answer["tests"]
    if answer["mode"] == "functional":
        table = {json.dumps([json.loads(x) for x in t["input"].split("\n")]): json.loads(t["output"]) for t in tests}
        body = (f"import json\nTABLE = {json.dumps(table)!r}\n"
                "class Solution:\n"
                f"    def {answer['fn_name']}(self, *args):\n"
                + ("        return json.loads(TABLE)[json.dumps(list(args))]\n" if correct else
                   _spin(failing, busy_s, "        ") + "        return None\n"))
    else:
        table = {t["input"].strip(): t["output"] for t in tests}
        body = (f"import sys, json\nTABLE = json.loads({json.dumps(json.dumps(table))})\n"
                "data = sys.stdin.read().strip()\n"
                + ("print(TABLE[data], end='')\n" if correct else
                   _spin(failing, busy_s, "") + "print('simulated wrong answer')\n"))
    return f"A simulated solution.\n```python\n{body}```\n"
