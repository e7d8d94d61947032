"""Scripted τ roles for the toy ``mini`` domain (tau_mini.py): agent, user simulator and NL judge.

Stateless and deterministic: each reply is decided from the messages of the request alone, so the
simulator can play every role of a τ³ cell through the real service (the demo and the tests). Which
role a request is comes from its messages: the agent's system prompt holds ``<policy>``, the user
simulator's ``<scenario>``, the judge's user message ``expectedOutcomes``.

- Agent (`agent_reply`): identifies the customer by email, looks the order up, cancels it only when it
  is pending, then tells the outcome. A `careful` agent states the refund amount ("30.00"); a careless
  one (a weak simulated model) does not, so COMMUNICATE fails for it — the scores differ by model.
- User (`user_reply`): opens with the scenario's reason for calling and its known info, asks the
  agent to go on while it only acts, and ends with ``###STOP###`` once the agent has said something
  conclusive (or after 8 turns).
- Judge (`judge_reply`): one result per expected outcome; met when the outcome's last word occurs in an
  assistant line of the conversation.
Replies are ``(text, tool_calls)``; ``tool_calls`` in the OpenAI shape (``arguments`` a JSON string).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from srbench.schemas.wire import WireJSON
from srbench.simulate.scripted import Scripted, tool_call

Message = Mapping[str, Any]
ToolCalls = list[WireJSON]
ORDER = re.compile(r"\bo\d+\b")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def role_of(messages: Sequence[Message]) -> str | None:
    """"agent", "user", "judge" or None (not a τ request)."""
    system = str(messages[0].get("content") or "") if messages and messages[0].get("role") == "system" else ""
    last = str(messages[-1].get("content") or "") if messages else ""
    if "expectedOutcomes:" in last and "conversation:" in last:
        return "judge"
    if "<scenario>" in system:
        return "user"
    if "<policy>" in system and "customer service agent" in system:
        return "agent"
    return None


def _call(n: int, name: str, **args: Any) -> ToolCalls:
    return [{"id": f"call_{n}_{name}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}]


def _results(messages: Sequence[Message]) -> dict[str, str]:
    """{tool name: its latest result} from the agent's view."""
    names = {tc["id"]: tc["function"]["name"] for m in messages for tc in m.get("tool_calls") or []}
    return {names.get(m.get("tool_call_id"), "?"): str(m.get("content")) for m in messages if m.get("role") == "tool"}


def agent_reply(messages: Sequence[Message], careful: bool = True) -> tuple[str | None, ToolCalls]:
    said = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    done = _results(messages)
    turn = len(messages)
    email, order = EMAIL.search(said), ORDER.search(said)
    if order is None:
        return "Which order is it about, and what is your email address?", []
    oid = order.group(0)
    if email and "find_user_by_email" not in done:
        return None, _call(turn, "find_user_by_email", email=email.group(0))
    if "get_order_details" not in done:
        return None, _call(turn, "get_order_details", order_id=oid)
    try:
        details = json.loads(done["get_order_details"])
    except ValueError:
        return "I could not find that order.", []
    status = details.get("status")
    if "cancel" in said.lower():
        if "cancel_pending_order" in done:
            total = float(details.get("total") or 0)
            refund = f" and {total:.2f} will be refunded" if careful else ""
            return f"Order {oid} is cancelled{refund}.", []
        if status == "pending":
            return None, _call(turn, "cancel_pending_order", order_id=oid, reason="customer request")
        return f"Order {oid} was {status} and cannot be cancelled.", []
    return f"Order {oid} was {status}." if status == "delivered" else f"Order {oid} is {status}.", []


def _scenario_line(system: str, label: str) -> str:
    m = re.search(rf"{label}:\n((?:\t\t+.*\n?)+)", system)      # its lines are indented one tab deeper
    return " ".join(x.strip() for x in m.group(1).splitlines()) if m else ""


def user_reply(messages: Sequence[Message]) -> tuple[str | None, ToolCalls]:
    system = str(messages[0].get("content") or "")
    mine = [m for m in messages if m.get("role") == "assistant"]
    if not mine:
        return f"Hi! {_scenario_line(system, 'Reason for call')} {_scenario_line(system, 'Known info')}".strip(), []
    last = str(messages[-1].get("content") or "") if messages[-1].get("role") == "user" else ""
    if len(mine) >= 8 or re.search(r"\b(cancelled|cannot|was delivered|is pending)\b", last):
        return "Thank you, that is all. ###STOP###", []
    return "Please go ahead.", []


def judge_reply(messages: Sequence[Message]) -> tuple[str | None, ToolCalls]:
    body = str(messages[-1].get("content") or "")
    conversation, _, rest = body.partition("\n\nexpectedOutcomes:\n")
    try:
        outcomes = json.loads(rest)
    except ValueError:
        outcomes = []
    said = " ".join(line.lower() for line in conversation.splitlines() if line.startswith("assistant: "))
    results = []
    for o in outcomes if isinstance(outcomes, list) else []:
        words = re.findall(r"[a-z]+", str(o).lower())
        met = bool(words) and words[-1] in said
        results.append({"expectedOutcome": o, "reasoning": "simulated judge: keyword check", "metExpectation": met})
    return json.dumps({"results": results}), []


def tau_reply(messages: Sequence[Message], careful: bool = True) -> tuple[str | None, ToolCalls] | None:
    """The scripted reply of whichever τ role `messages` is (None: not a τ request)."""
    role = role_of(messages)
    if role == "agent":
        return agent_reply(messages, careful)
    if role == "user":
        return user_reply(messages)
    if role == "judge":
        return judge_reply(messages)
    return None


def script_hook(careful_models: frozenset[str] | set[str], router: Any = None) -> Any:
    """The simulator's ``script`` hook (simulate/scripted.py) playing every τ role; the agent is careful
    when the request's model is one of `careful_models` — for the simulated router (`router`, a
    RouterRule), when the model its rule picks for these messages is."""
    def hook(body: WireJSON) -> Scripted | None:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return None
        model = str(body.get("model"))
        if router is not None and model == router.name:
            model = router.route(messages)[0]
        got = tau_reply(messages, careful=model in careful_models)
        if got is None:
            return None
        text, calls = got
        return Scripted(content=text or "", tool_calls=tuple(
            tool_call(c["function"]["name"], c["function"]["arguments"], c["id"]) for c in calls))
    return hook
