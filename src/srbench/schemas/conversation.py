"""A multi-call cell's conversation record (kind ``conversation``, stages/dispatch/conversations.py):
every model call the benchmark's conversation made, in order, and its outcome. Stored in the CAS and
named by the cell's ``call``; each call's own record is a call record (schemas/call.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.call import CallRole, CallStatus


class ConversationCall(BaseModel):
    """One call of the conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    index: int
    """Its position in the conversation."""
    role: CallRole
    """Who it was for: subject, judge, user_simulator or scaffolding."""
    target_id: str
    """The target called."""
    request: str
    """Digest of its request object."""
    record: str
    """Digest of its call record."""
    cost_usd: int | float | None
    """Its cost (0 when nothing was sent; None: unknown)."""
    status: CallStatus
    """How the call ended."""
    error_class: str | None
    """Why it failed."""
    selected_model: str | None
    """The model a router target's adapter says served it."""


class ConversationRecord(BaseModel):
    """The stored conversation of one cell."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["conversation"] = "conversation"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    benchmark: str
    """The cell's benchmark."""
    case_id: str
    """Its case."""
    cell_id: str
    """The cell."""
    target_id: str
    """Its subject target."""
    calls: list[ConversationCall]
    """Every call, in order."""
    final_text: str | None
    """The answer a plain grader would see."""
    outputs: dict[str, JsonValue]
    """The benchmark's own results (step codes, a reward …)."""
    trajectory: str | None
    """Digest of a stored trajectory object, if any."""
    stored: list[str]
    """Digests of the other objects the conversation stored."""
    error_class: str | None
    """Why the cell failed or stopped (None: it completed)."""
    error: str | None
    """One line, with error_class."""
