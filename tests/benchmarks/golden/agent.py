"""Golden corpora for the agent benchmarks' pure verdict logic, verdicts written by reading the upstream
rules (research notes §6 and §9), not by running sr-bench.

``TB_REWARD`` — Harbor's verifier reward: ``/logs/verifier/reward.txt`` holds one number (surrounding
whitespace ignored) and wins when both files exist; else ``reward.json`` is a number or an object of
named numbers, whose ``reward`` entry is the reward, or its only entry; every entry must be a finite
number (``true`` is no number). No file → ``RewardFileNotFoundError``; an empty (or blank) file →
``RewardFileEmptyError``; anything else unreadable → ``VerifierOutputParseError`` (a trial error, never
a zero). The task is resolved iff the reward is 1; the published figure is the reward itself.
Rows: (reward.txt bytes or None, reward.json bytes or None, (reward, file) or the error's name).

``TAU3_REWARD`` — tau2-bench's reward of one simulation: 0 unless it ended by the user's or the agent's
stop; else the product of the ``reward_basis`` components: ``DB`` (agent and user database hashes equal
the gold ones), ``ENV_ASSERTION`` (all met), ``COMMUNICATE`` (every info, lower-cased, is a substring of
some non-blank assistant message lower-cased with its commas removed — the info keeps its commas),
``ACTION`` (every gold action has a call with its name whose arguments, restricted to ``compare_args``
or, when that is null, to the call's own argument names, equal the gold ones restricted the same way;
no names to compare matches), ``NL_ASSERTION`` (the judge marks every assertion met; no assertions →
1; judge not asked → 0; a reply that is not ``{"results": [...]}`` with one boolean
``metExpectation`` per assertion is a judge error). An empty basis is the empty product, 1. Success ⇔
reward within 1e-6 of 1 and no judge error; pass^1 counts successes.
Rows: (criteria, outputs, reward, status).
"""

from __future__ import annotations

import json
from typing import Any

TB_REWARD = [
    (b"1", None, (1.0, "reward.txt")),
    (b"0", None, (0.0, "reward.txt")),
    (b"1\n", None, (1.0, "reward.txt")),
    (b"  1.0  \n", None, (1.0, "reward.txt")),
    (b"0.5", None, (0.5, "reward.txt")),
    (b"1e0", None, (1.0, "reward.txt")),
    (b"-1", None, (-1.0, "reward.txt")),
    (b"0.999999", None, (0.999999, "reward.txt")),
    (b"", None, "RewardFileEmptyError"),
    (b"  \n\t", None, "RewardFileEmptyError"),
    (b"pass", None, "VerifierOutputParseError"),
    (b"true", None, "VerifierOutputParseError"),
    (b"1\n0", None, "VerifierOutputParseError"),          # two numbers are no number
    (b"1 0", None, "VerifierOutputParseError"),
    (b"nan", None, "VerifierOutputParseError"),           # not finite
    (b"inf", None, "VerifierOutputParseError"),
    (b"\xff", None, "VerifierOutputParseError"),
    (b"1/1", None, "VerifierOutputParseError"),
    (b"100%", None, "VerifierOutputParseError"),
    (b"0", b'{"reward": 1}', (0.0, "reward.txt")),        # reward.txt wins
    (b"", b'{"reward": 1}', "RewardFileEmptyError"),     # an empty reward.txt is not skipped
    (b"oops", b'{"reward": 1}', "VerifierOutputParseError"),
    (None, b'{"reward": 1}', (1.0, "reward.json")),
    (None, b'{"reward": 0}', (0.0, "reward.json")),
    (None, b'{"reward": 0.25, "style": 1}', (0.25, "reward.json")),   # the 'reward' entry
    (None, b'{"score": 0.7}', (0.7, "reward.json")),                  # the only entry
    (None, b'{"a": 1, "b": 0}', "VerifierOutputParseError"),          # several, none named reward
    (None, b"{}", "VerifierOutputParseError"),
    (None, b"1", (1.0, "reward.json")),                               # a bare number
    (None, b"0.5", (0.5, "reward.json")),
    (None, b"true", "VerifierOutputParseError"),
    (None, b"[1]", "VerifierOutputParseError"),
    (None, b'"1"', "VerifierOutputParseError"),
    (None, b'{"reward": true}', "VerifierOutputParseError"),
    (None, b'{"reward": "1"}', "VerifierOutputParseError"),
    (None, b'{"reward": null}', "VerifierOutputParseError"),
    (None, b'{"reward": 1, "note": "fine"}', "VerifierOutputParseError"),   # every entry must be a number
    (None, b"NaN", "VerifierOutputParseError"),
    (None, b'{"reward": Infinity}', "VerifierOutputParseError"),
    (None, b"not json", "VerifierOutputParseError"),
    (None, b"", "RewardFileEmptyError"),
    (None, b" \n", "RewardFileEmptyError"),
    (None, None, "RewardFileNotFoundError"),
    (None, b'{"reward": 1.0}', (1.0, "reward.json")),
]


def crit(basis: list[str], **kw: Any) -> dict[str, Any]:
    return {"reward_basis": basis, **kw}


def out(term: str | None = "user_stop", db: bool = True, user_db: bool = True, texts: tuple[str, ...] = (),
        calls: tuple[dict[str, Any], ...] = (), asserts: list[bool] | None = None,
        nl: dict[str, Any] | None = None) -> dict[str, Any]:
    env = {"predicted": {"agent": "a1", "user": "u1"},
           "gold": {"agent": "a1" if db else "a2", "user": "u1" if user_db else "u2"},
           "env_assertions": [{"met": m} for m in asserts or []]}
    o: dict[str, Any] = {"termination": term, "env": env, "assistant_texts": list(texts), "tool_calls": list(calls)}
    if nl is not None:
        o["nl"] = nl
    return o


def judged(results: Any, status: str = "completed", wrap: str = "{}") -> dict[str, Any]:
    text = results if isinstance(results, str) else json.dumps({"results": results})
    return {"call": 3, "status": status, "text": wrap.format(text) if wrap != "{}" else text, "error": None}


def met(flag: Any) -> dict[str, Any]:
    return {"expectedOutcome": "agent apologised", "reasoning": "r", "metExpectation": flag}


def act(args: dict[str, Any], name: str = "cancel", compare: list[str] | None = None) -> dict[str, Any]:
    return {"action_id": "g1", "name": name, "arguments": args, "compare_args": compare}


def call(args: Any, name: str = "cancel") -> dict[str, Any]:
    return {"name": name, "arguments": args}


DB = ["DB"]
DBC = ["DB", "COMMUNICATE"]
NL = ["DB", "NL_ASSERTION"]
APOLOGY = ["agent apologised"]

TAU3_REWARD = [
    (crit(DB), out(), 1.0, "correct"),
    (crit(DB), out(db=False), 0.0, "incorrect"),
    (crit(DB), out(term="agent_stop"), 1.0, "correct"),
    (crit(DB), out(term="max_steps"), 0.0, "incorrect"),            # not a stop: 0 whatever the DB
    (crit(DB), out(term="too_many_errors"), 0.0, "incorrect"),
    (crit(DB), out(term=None), 0.0, "incorrect"),
    (crit(DB), out(user_db=False), 0.0, "incorrect"),               # the user's database counts too
    (crit(DBC, communicate_info=["$120"]), out(texts=("The refund is $120.",)), 1.0, "correct"),
    (crit(DBC, communicate_info=["$120"]), out(texts=("The refund is $12O.",)), 0.0, "incorrect"),
    (crit(DBC, communicate_info=["1,000"]), out(texts=("We charge 1,000 dollars",)), 0.0, "incorrect"),
    (crit(DBC, communicate_info=["1000"]), out(texts=("We charge 1,000 dollars",)), 1.0, "correct"),
    (crit(DBC, communicate_info=["Paris"]), out(texts=("You fly to PARIS",)), 1.0, "correct"),
    (crit(DBC, communicate_info=["refund", "voucher"]), out(texts=("Your refund is done", "No voucher")), 1.0,
     "correct"),                                                    # each info in some message
    (crit(DBC, communicate_info=["refund", "voucher"]), out(texts=("Your refund is done",)), 0.0, "incorrect"),
    (crit(DBC, communicate_info=[]), out(), 1.0, "correct"),
    (crit(DBC, communicate_info=["x1"]), out(texts=("   ", "")), 0.0, "incorrect"),
    (crit(DBC, communicate_info=["$120"]), out(db=False, texts=("$120",)), 0.0, "incorrect"),
    (crit(["ENV_ASSERTION"]), out(asserts=[True, True]), 1.0, "correct"),
    (crit(["ENV_ASSERTION"]), out(asserts=[True, False]), 0.0, "incorrect"),
    (crit(["ENV_ASSERTION"]), out(asserts=[]), 1.0, "correct"),
    (crit(["ENV_ASSERTION"]), out(term="agent_stop", db=False, asserts=[True]), 1.0, "correct"),   # DB not listed
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call({"id": "R1"}),)), 1.0, "correct"),
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call({"id": "R2"}),)), 0.0, "incorrect"),
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call({"id": "R1"}, "refund"),)), 0.0, "incorrect"),
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(), 0.0, "incorrect"),
    (crit(["ACTION"], actions=[act({"id": "R1"}, compare=["id"])]), out(calls=(call({"id": "R1", "why": "x"}),)),
     1.0, "correct"),
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call({"id": "R1", "why": "x"}),)), 0.0,
     "incorrect"),                                                  # null compare_args: the call's own names
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call({}),)), 1.0, "correct"),   # nothing to compare
    (crit(["ACTION"], actions=[act({"id": "R1"}, compare=[])]), out(calls=(call({"id": "R9"}),)), 1.0, "correct"),
    (crit(["ACTION"], actions=[act({"id": "R1"}), act({"id": "R2"}, "refund")]),
     out(calls=(call({"id": "R2"}, "refund"), call({"id": "R1"}))), 1.0, "correct"),
    (crit(["ACTION"], actions=[act({"id": "R1"}), act({"id": "R2"}, "refund")]), out(calls=(call({"id": "R1"}),)),
     0.0, "incorrect"),
    (crit(["ACTION"], actions=[act({"id": "R1"})]), out(calls=(call('{"id": "R1"}'),)), 0.0, "incorrect"),
    (crit(["ACTION"], actions=[act({"id": "1"}, compare=["id"])]), out(calls=(call({"id": 1}),)), 0.0, "incorrect"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True)])), 1.0, "correct"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(False)])), 0.0, "incorrect"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True)], wrap="```json\n{}\n```")), 1.0, "correct"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True), met(True)])), 0.0, "judge_error"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged("yes")), 0.0, "judge_error"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True)], status="failed")), 0.0, "judge_error"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met("true")])), 0.0, "judge_error"),
    (crit(NL, nl_assertions=APOLOGY), out(db=False), 0.0, "incorrect"),      # judge not asked: 0, no error
    (crit(NL, nl_assertions=[]), out(), 1.0, "correct"),
    (crit([]), out(), 1.0, "correct"),                               # the empty product
    (crit([]), out(term="max_steps"), 0.0, "incorrect"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True)], wrap="Here: {}")), 0.0, "judge_error"),
    (crit(NL, nl_assertions=APOLOGY), out(nl=judged([met(True)], wrap="<think>hmm</think>{}")), 1.0, "correct"),
]
