"""One τ³ conversation: the agent under test, the pinned user simulator and the environment.

It follows tau2's orchestrator. The agent opens with the fixed greeting ("Hi! How can I help you
today?"), then messages pass AGENT → USER → AGENT …; a message with tool calls goes to the
environment, whose results go back to whoever called (the user's tools: telecom's dual control).
Every step counts (agent turn, user turn, environment step); after a step that is not addressed to
the environment the run ends with ``max_steps`` when ``steps >= max_steps`` and with
``too_many_errors`` when ``tool errors >= max_errors`` (checked even after a stop, as tau2 does). The
user ends it with ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` (``user_stop``). An
empty message (no text, no tool call) ends it with ``agent_error`` / ``user_error`` (reward 0).

Views: the agent sees its system prompt, its own messages (text and tool calls), the user's text
messages and its own tools' results; the user simulator sees its system prompt, the agent's text
messages as ``user`` turns, its own messages as ``assistant`` turns and its own tools' results.
Tool-call arguments that are not a JSON object are a tool error (tau2 would crash the simulation).

Every model call goes through ``session.call`` (journaled by dispatch). A failed call ends the cell
as an error (`ConversationFailed`), not as a zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from srbench.benchmarks.conversation import CellSession, Reply
from srbench.benchmarks.tau.env import TauEnvironment
from srbench.benchmarks.tau.models import (
    CallCounts,
    CallFact,
    EnvInfo,
    Message,
    Requestor,
    TauOutputs,
    TauRole,
    Termination,
    ToolCall,
    ToolFunction,
    ToolResult,
    Turn,
)
from srbench.benchmarks.tau.reward import is_stop
from srbench.schemas.wire import WireJSON

GREETING = "Hi! How can I help you today?"


class ConversationFailed(Exception):
    """A model call of the conversation failed: the cell is an error (error_class, one line)."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message


@dataclass
class Conversation:
    """The trajectory so far and the counters of one cell."""

    agent_system: str
    user_system: str
    trajectory: list[Message] = field(default_factory=list)
    steps: int = 0
    errors: int = 0
    termination: Termination | None = None
    calls: CallCounts = field(default_factory=lambda: CallCounts(subject=0, user_simulator=0, judge=0))
    selected_models: list[str | None] = field(default_factory=list)

    def agent_view(self) -> list[WireJSON]:
        """The chat messages the agent is sent (the model endpoint's wire JSON)."""
        out: list[WireJSON] = [{"role": "system", "content": self.agent_system}]
        for m in self.trajectory:
            if isinstance(m, ToolResult):
                if m.requestor == "assistant":
                    out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            elif m.role == "assistant":
                out.append(_chat("assistant", m))
            elif not m.tool_calls:
                out.append({"role": "user", "content": m.content})
        return out

    def user_view(self) -> list[WireJSON]:
        """The chat messages the user simulator is sent (roles swapped; the model endpoint's wire JSON)."""
        out: list[WireJSON] = [{"role": "system", "content": self.user_system}]
        for m in self.trajectory:
            if isinstance(m, ToolResult):
                if m.requestor == "user":
                    out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            elif m.role == "user":
                out.append(_chat("assistant", m))
            elif not m.tool_calls:
                out.append({"role": "user", "content": m.content})
        return out

    def outputs(self) -> TauOutputs:
        """The facts the reward is computed from (stored in the conversation record)."""
        turns = [m for m in self.trajectory if isinstance(m, Turn)]
        texts = [m.content for m in turns if m.role == "assistant" and m.content]
        calls = [CallFact(requestor=m.role, name=tc.function.name, arguments=_arguments(tc)[0])
                 for m in turns for tc in m.tool_calls or []]
        return TauOutputs(termination=self.termination, steps=self.steps, tool_errors=self.errors,
                          assistant_texts=texts, tool_calls=calls, calls=self.calls,
                          selected_models=list(self.selected_models))


def _chat(role: str, m: Turn) -> WireJSON:
    msg: WireJSON = {"role": role, "content": m.content}
    if m.tool_calls:
        msg["tool_calls"] = [tc.stored() for tc in m.tool_calls]
    elif msg["content"] is None:
        msg["content"] = ""
    return msg


def _arguments(tc: ToolCall) -> tuple[WireJSON | None, str | None]:
    raw = tc.function.arguments
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except (ValueError, RecursionError):
        return None, "arguments are not valid JSON"
    if not isinstance(value, dict):
        return None, "arguments are not a JSON object"
    return value, None


def _tool_calls(reply: Reply, step: int) -> list[ToolCall]:
    out = []
    for i, tc in enumerate(reply.tool_calls or []):
        fn = tc.get("function") or {}
        out.append(ToolCall(id=tc.get("id") or f"call_{step}_{i}", type="function",
                            function=ToolFunction(name=fn.get("name"), arguments=fn.get("arguments") or "{}")))
    return out


def _message(role: Requestor, reply: Reply, step: int) -> Turn:
    text = reply.text if reply.text and reply.text.strip() else None
    turn = Turn(role=role, content=text, call=reply.index)
    calls = _tool_calls(reply, step)
    if calls:                               # set only when there are some: absent from the stored message
        turn = turn.model_copy(update={"tool_calls": calls})
    if role == "assistant" and reply.selected_model:
        turn = turn.model_copy(update={"selected_model": reply.selected_model})
    return turn


async def _call(session: CellSession, conv: Conversation, role: TauRole, messages: list[WireJSON],
                tools: list[WireJSON] | None) -> Reply:
    reply = await session.call(messages, role=role, tools=tools or None)
    conv.calls = conv.calls.plus(role)
    if reply.status != "completed":
        who = "agent" if role == "subject" else role.replace("_", " ")
        cls = reply.error_class or "call_failed"
        raise ConversationFailed(cls if role == "subject" else f"{role}_{cls}",
                                 f"{who} call {reply.index} {reply.status}: {reply.error or cls}")
    return reply


async def run(session: CellSession, env: TauEnvironment, info: EnvInfo, conv: Conversation, *,
              max_steps: int, max_errors: int) -> None:
    """Drive the conversation until it terminates; `conv` holds everything on return or raise."""
    conv.trajectory.append(Turn(role="assistant", content=GREETING, call=None))
    to_role, from_role = "user", "agent"
    while conv.termination is None:
        last = conv.trajectory[-1]
        if to_role == "user":
            reply = await _call(session, conv, "user_simulator", conv.user_view(), info.user_tools)
            msg = _message("user", reply, conv.steps)
            conv.trajectory.append(msg)
            if not msg.tool_calls and not msg.content:
                conv.termination = "user_error"
            elif not msg.tool_calls and is_stop(msg.content):
                conv.termination = "user_stop"
            from_role, to_role = "user", ("env" if msg.tool_calls else "agent")
        elif to_role == "agent":
            reply = await _call(session, conv, "subject", conv.agent_view(), info.tools)
            msg = _message("assistant", reply, conv.steps)
            conv.trajectory.append(msg)
            conv.selected_models.append(reply.selected_model)
            if not msg.tool_calls and not msg.content:
                conv.termination = "agent_error"
            from_role, to_role = "agent", ("env" if msg.tool_calls else "user")
        else:
            requestor: Requestor = "assistant" if from_role == "agent" else "user"
            assert isinstance(last, Turn) and last.tool_calls       # only a message with tool calls goes to env
            for tc in last.tool_calls:
                args, problem = _arguments(tc)
                if problem is not None or args is None:
                    content, error = f"Error: {problem}", True
                else:
                    content, error = await env.tool(requestor, tc.function.name, args)
                conv.errors += bool(error)
                conv.trajectory.append(ToolResult(role="tool", requestor=requestor, tool_call_id=tc.id,
                                                  name=tc.function.name, content=content, error=error))
            from_role, to_role = "env", from_role
        conv.steps += 1
        if to_role == "env":
            continue
        if conv.steps >= max_steps:
            conv.termination = "max_steps"
        if conv.errors >= max_errors:
            conv.termination = "too_many_errors"
