"""The contract of a multi-call cell: one cell (case × target) that is a conversation of model calls.

A benchmark whose ``multi_call`` is True (SciCode's steps, ARC-AGI-2's second attempt, an agent's
turns, a user simulator's turns) does not hand dispatch one request: dispatch gives its
``converse(case, session)`` a :class:`CellSession`, and every model call goes through
``session.call``, which journals the call ``dispatching`` (its request object stored) before any
byte is sent and stores the call record before it is marked done — exactly as a single call is
journaled. The session also holds the budget reservation, the run's deadline and stop flags: when no
further call may be sent, ``call`` raises :class:`CellStopped` and the benchmark returns what it has
(or lets the exception end the cell). A restart turns a cell whose conversation did not finish
ambiguous; a conversation is never resumed or resent by itself.

When ``converse`` returns, its :class:`ConversationOutcome` and the list of the cell's calls are
stored as one *conversation record* (``kind: conversation``, schemas/conversation.py ``ConversationRecord``),
and the cell's ``call`` names it. Grading reads that record back as its model
(``Benchmark.grade_conversation``), so a grade stays a pure function of
stored objects. Costs are per call and per role: the role's cost goes to the row's principal cost
(``subject``) or to an auxiliary cost apart (``user_simulator``, ``judge``, ``scaffolding``).
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.call import CallStatus
from srbench.schemas.dataset import Case
from srbench.schemas.plan import BenchmarkOptions
from srbench.schemas.wire import WireJSON

Role = Literal["subject", "user_simulator", "judge", "scaffolding"]
"""Who a call of a conversation is for (a subset of the call record's `CallRole`)."""
ROLES: tuple[Role, ...] = ("subject", "user_simulator", "judge", "scaffolding")
# the report's per-row cost field of each role; subject is the principal cost
ROLE_COST_FIELDS: dict[str, str] = {"subject": "cost_usd", "user_simulator": "simulator_cost_usd",
                                    "judge": "judge_cost_usd", "scaffolding": "scaffolding_cost_usd"}


class CellStopped(Exception):
    """No further call of this cell may be sent (run cancelled or stopped, deadline, budget, the
    target's systematic stop). `reason` is one line; `error_class` names the kind."""

    def __init__(self, error_class: str, reason: str) -> None:
        super().__init__(reason)
        self.error_class = error_class
        self.reason = reason


class Reply(BaseModel):
    """One journaled call of a conversation, as the benchmark sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    index: int
    """Its 0-based order within the cell."""
    role: Role
    """Who it was for."""
    target_id: str
    """The target that answered (the cell's target for ``subject``)."""
    status: CallStatus
    """How the call ended."""
    text: str | None
    """The visible final text (reasoning stripped; None: none)."""
    tool_calls: list[WireJSON] = Field(default_factory=list)
    """The tool calls as the endpoint answered them, each ``{"id", "type": "function", "function": {"name",
    "arguments"}}``."""
    finish_reason: str | None = None
    """Why the reply ended (``length``: cut by the output limit)."""
    error_class: str | None = None
    """Why the call failed, if it did."""
    error: str | None = None
    """One line, with error_class."""
    record: str | None = None
    """Digest of the stored call record."""
    selected_model: str | None = None
    """A router's choice for this turn (MoM targets)."""


class ConversationOutcome(BaseModel):
    """What `converse` returns; stored with the list of calls as the cell's conversation record."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    final_text: str | None
    """The answer a plain grader would see (e.g. the joined code)."""
    outputs: dict[str, JsonValue] = Field(default_factory=dict)
    """The benchmark's own results (step codes, a reward …), as its own model dumps them."""
    trajectory: str | None = None
    """Digest of a stored trajectory object, if any."""
    error_class: str | None = None
    """Set: the cell failed for this reason (e.g. trial_error)."""
    error: str | None = None
    """One line, with error_class."""


class CellSession(Protocol):
    """What a conversation benchmark may do inside one cell (implemented by dispatch)."""

    cell_id: str
    case: Case
    target_id: str
    seed: int
    options: BenchmarkOptions | None  # the plan's frozen benchmark_options[<benchmark>] entry (None when none)

    async def call(self, messages: list[WireJSON], *, role: Role = "subject",
                   tools: list[WireJSON] | None = None, tool_choice: str | WireJSON | None = None,
                   max_tokens: int | None = None) -> Reply:
        """Send one journaled call to the cell's target (role "subject") or to the auxiliary target the
        plan pins for `role`; returns its reply (a failed call is a Reply with status "failed", not an
        exception). Raises CellStopped when no further call may be sent."""

    def store(self, value: bytes | dict[str, JsonValue]) -> str:
        """Put a JSON object or bytes (a trajectory, a verifier log) in the object store; returns its
        digest. It is durable before the cell's end is committed."""

    def remaining_s(self) -> float:
        """Seconds left before the cell's own deadline (case timeout, run deadline)."""
