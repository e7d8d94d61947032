"""τ³'s own shapes inside the adapter: a task's evaluation criteria, the conversation's messages, the
environment's evaluation, the conversation's outputs and the reward — passed by attribute.

Each is dumped where JSON leaves the adapter (``stored()``, unset fields absent, so the bytes are the
dict literals' of before): the trajectory object, the conversation record's ``outputs`` and the grade's
``details``; the criteria go to tau2's own protocol (``wire()``, tau2_child.py) as the case holds them.
Dicts remain only for JSON that crosses an edge: the chat messages and tool schemas sent to the model
endpoint, a tool call's arguments, a task's initial state (tau2's ``InitialState``) and the toy domain's
database. Read back from a stored record, the outputs tolerate a missing field (its default).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.call import CallStatus
from srbench.schemas.wire import WireJSON

RewardType = Literal["DB", "ENV_ASSERTION", "COMMUNICATE", "NL_ASSERTION", "ACTION"]
Termination = Literal["user_stop", "agent_stop", "max_steps", "too_many_errors", "agent_error", "user_error"]
Requestor = Literal["assistant", "user"]
TauRole = Literal["subject", "user_simulator", "judge"]
RewardStatus = Literal["correct", "incorrect", "judge_error"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    def stored(self) -> dict[str, JsonValue]:
        """The JSON object as stored: the fields that were set (an unset optional field is absent)."""
        return self.model_dump(mode="json", exclude_unset=True)


class _Native(_Model):
    """Read from tau2's task data: keys sr-bench does not use are kept as they are."""

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


# -- a task's evaluation criteria (the case's answer) ------------------------------------------------
class GoldAction(_Native):
    """One gold action of a task (tau2's ``Action``)."""

    action_id: str | None = None
    """Its id in the task."""
    name: str
    """The tool it calls."""
    arguments: WireJSON
    """The tool call's arguments (JSON, as the task gives them)."""
    compare_args: list[str] | None = None
    """The argument names a matching call must equal (None: every argument of the call)."""


class EnvAssertion(_Native):
    """One assertion function run on the final environment (tau2's ``EnvAssertion``)."""

    func_name: str | None = None
    """The assertion function."""
    arguments: WireJSON | None = None
    """Its arguments (JSON)."""
    assert_value: JsonValue = True
    """What it must return."""


class Criteria(_Native):
    """A task's ``evaluation_criteria`` with its reward basis checked (tasks.criteria)."""

    reward_basis: list[RewardType] = []
    """The reward components whose product is the reward."""
    reward_basis_default: bool = False
    """The task had no basis: tau2's default was filled in."""
    actions: list[GoldAction] | None = None
    """The gold actions (ACTION; replayed for DB's gold database)."""
    env_assertions: list[EnvAssertion] | None = None
    """The env assertions (ENV_ASSERTION)."""
    communicate_info: list[str] | None = None
    """Strings some assistant message must contain (COMMUNICATE)."""
    nl_assertions: list[str] | None = None
    """Natural-language assertions the judge checks (NL_ASSERTION)."""

    def wire(self) -> WireJSON:
        """As the case holds them: what tau2's own protocol receives."""
        return self.model_dump(mode="json", exclude_unset=True)


# -- the conversation -----------------------------------------------------------------------------
class ToolFunction(_Model):
    """The function a tool call names."""

    name: str | None
    """The tool's name, as the model sent it."""
    arguments: JsonValue
    """Its arguments as the model sent them (JSON text, normally)."""


class ToolCall(_Model):
    """One tool call of a message, in the OpenAI shape."""

    id: str
    """Its id (the model's, else ``call_<step>_<i>``)."""
    type: Literal["function"]
    """Always a function call."""
    function: ToolFunction
    """What it calls."""


class Turn(_Model):
    """A message of the agent (``assistant``) or of the user simulator (``user``)."""

    role: Requestor
    """Who spoke."""
    content: str | None
    """Its text (None: none, or only blanks)."""
    call: int | None
    """The index of the model call that produced it (None: the fixed greeting)."""
    tool_calls: list[ToolCall] | None = None
    """Its tool calls (absent: none)."""
    selected_model: str | None = None
    """The model a router target says answered this agent turn (absent: not said)."""


class ToolResult(_Model):
    """The environment's answer to one tool call."""

    role: Literal["tool"]
    """Always ``tool``."""
    requestor: Requestor
    """Who called the tool (its result goes back to them)."""
    tool_call_id: str
    """The call it answers."""
    name: str | None
    """The tool called."""
    content: str
    """The result as the caller sees it (``Error: …`` on an error)."""
    error: bool
    """The call was a tool error."""


Message = Turn | ToolResult


class CallCounts(_Model):
    """Model calls made so far, per role (counted as they are made)."""

    subject: int = 0
    """The agent under test."""
    user_simulator: int = 0
    """The pinned user simulator."""
    judge: int = 0
    """The pinned judge."""

    def plus(self, role: TauRole) -> CallCounts:
        """The counts with one more call of `role`."""
        return CallCounts(subject=self.subject + (role == "subject"),
                          user_simulator=self.user_simulator + (role == "user_simulator"),
                          judge=self.judge + (role == "judge"))


class CallFact(_Model):
    """One tool call as the reward reads it."""

    requestor: Requestor | None = None
    """Who called."""
    name: str | None = None
    """The tool."""
    arguments: JsonValue = None
    """Its arguments as an object (None: not a JSON object)."""


# -- the environment ---------------------------------------------------------------------------------
class EnvInfo(_Model):
    """What a started environment is: its engine, its tools and what it was built from."""

    engine: str
    """``tau2==<version> (python X)`` or ``sr-bench-mini-v1``."""
    tools: list[WireJSON]
    """The agent's tool schemas (the OpenAI shape the model endpoint receives)."""
    user_tools: list[WireJSON] = []
    """The user simulator's tool schemas (telecom's dual control)."""
    policy_sha256: str | None = None
    """The policy's sha256 (None: the toy)."""
    env_sha256: dict[str, str | None] = {}
    """Each database file's sha256 (None: the file was not found)."""


class DbHashes(_Model):
    """The environment's database hashes."""

    agent: str | None = None
    """The agent-side database."""
    user: str | None = None
    """The user-side database (None: the domain has none)."""


class AssertionCheck(_Model):
    """One env assertion on the final environment."""

    func_name: str | None = None
    """The assertion function."""
    met: bool = False
    """It returned the expected value."""


class EnvEvaluation(_Model):
    """What the environment says at the end of a stopped conversation."""

    predicted: DbHashes | None = None
    """The conversation's final databases."""
    gold: DbHashes | None = None
    """A fresh environment's after the task's gold actions."""
    env_assertions: list[AssertionCheck] = []
    """The env assertions on the final environment."""
    gold_action_errors: list[str] = []
    """Gold actions that failed to replay (the task does not fit the environment)."""


class JudgeReply(_Model):
    """The pinned judge's call on the NL assertions."""

    call: int | None = None
    """Its index in the conversation."""
    status: CallStatus | None = None
    """How the call ended."""
    text: str | None = None
    """Its visible reply."""
    error: str | None = None
    """Why it failed."""


class TauOutputs(_Model):
    """The conversation record's ``outputs``: the facts the reward is computed from."""

    termination: Termination | None = None
    """How the conversation ended (None: it did not)."""
    steps: int = 0
    """Steps taken (agent turns, user turns, environment steps)."""
    tool_errors: int = 0
    """Tool calls that were errors."""
    assistant_texts: list[str] = []
    """The agent's non-empty messages."""
    tool_calls: list[CallFact] = []
    """Every tool call of the agent and the user."""
    calls: CallCounts = Field(default_factory=CallCounts)
    """Model calls per role."""
    selected_models: list[str | None] = []
    """A router target's choice per agent turn."""
    env: EnvEvaluation | None = None
    """The environment's evaluation (absent: not evaluated)."""
    nl: JudgeReply | None = None
    """The judge's reply (absent: not asked)."""
    domain: str | None = None
    """The task's domain."""
    engine: str | None = None
    """The environment engine (tau2 and its version, or the toy)."""
    max_steps: int | None = None
    """The step limit in force."""
    max_errors: int | None = None
    """The tool-error limit in force."""


# -- the reward ------------------------------------------------------------------------------------
class DbCheck(_Model):
    """The DB component's facts."""

    predicted: DbHashes | None
    """The conversation's final databases."""
    gold: DbHashes | None
    """The gold databases."""
    gold_action_errors: list[str]
    """Gold actions that failed to replay."""


class CommunicateCheck(_Model):
    """One ``communicate_info`` string."""

    info: str
    """The string."""
    met: bool
    """Some assistant message contains it."""


class ActionCheck(_Model):
    """One gold action."""

    action_id: str | None
    """Its id."""
    name: str
    """Its tool."""
    met: bool
    """A tool call matches it."""


class NlCheck(_Model):
    """One NL assertion, as the judge marked it."""

    assertion: str
    """The assertion."""
    met: bool
    """The judge says it is met."""
    reasoning: str
    """The judge's reasoning (cut at 2000 characters)."""


class TauReward(_Model):
    """The reward of one conversation (the grade's details)."""

    reward_basis: list[RewardType]
    """The components it is the product of."""
    termination: Termination | None
    """How the conversation ended."""
    components: dict[RewardType, float]
    """Each component's value."""
    reward: float
    """The product (0 unless the conversation ended by a stop)."""
    success: bool
    """The reward is 1 (within 1e-6) and the judge answered."""
    status: RewardStatus
    """correct, incorrect or judge_error."""
    note: str | None = None
    """Why the reward is 0 without components (absent: it has them)."""
    db: DbCheck | None = None
    """DB's facts (absent: not in the basis)."""
    env_assertions: list[AssertionCheck] | None = None
    """ENV_ASSERTION's checks (absent: not in the basis)."""
    communicate: list[CommunicateCheck] | None = None
    """COMMUNICATE's checks (absent: not in the basis)."""
    actions: list[ActionCheck] | None = None
    """ACTION's checks (absent: not in the basis)."""
    nl_assertions: list[NlCheck] | None = None
    """NL_ASSERTION's checks (absent: not judged)."""
    nl_note: str | None = None
    """Why the judge was not asked (absent: it was, or had nothing to check)."""
    judge_error: str | None = None
    """Why the judge's reply is unusable (absent: it is usable)."""


class TauFigures(_Model):
    """τ³'s figures over one target's planned cells (a benchmark row's extra fields)."""

    pass_hat_1: float | None
    """Cells whose one trial succeeded over the planned cells (sr-bench's denominator; None: none planned)."""
    pass_hat_1_graded_only: float | None
    """The same over the graded conversations (tau2's, which leaves infrastructure errors out)."""
    mean_reward: float | None
    """Mean reward of the graded conversations (None: none)."""
    pass_hat_1_by_domain: dict[str, float]
    """pass^1 per domain, over the cells graded with a domain."""
    terminations: dict[str, int]
    """How many graded conversations ended each way."""
    trials: int
    """Trials per task (one)."""


class TauTrajectory(_Model):
    """A τ³ cell's stored trajectory object (kind ``tau3_trajectory``): every message of the conversation,
    its counters, how it ended and its reward; the conversation record names it by digest."""

    kind: Literal["tau3_trajectory"]
    """What this object is."""
    schema_: Literal[1] = Field(alias="schema")
    """The layout of this object."""
    case_id: str
    """The cell's case."""
    domain: str | None
    """The τ³ domain."""
    task_id: str | None
    """The task's id in its domain."""
    engine: str | None
    """The environment that ran the tools (None: none started)."""
    termination: Termination | None
    """How the conversation ended (None: it did not end on its own)."""
    steps: int
    """Steps taken."""
    tool_errors: int
    """Tool calls that were errors."""
    messages: list[Message]
    """Every message, in order (each with only the fields it set)."""
    reward: TauReward | None
    """The reward (None: none was computed)."""
    calls: CallCounts
    """Model calls made, per role."""

    def stored(self) -> dict[str, JsonValue]:
        """The object as stored (``schema`` by its name; each message with only the fields it set)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
