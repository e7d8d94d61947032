"""A Terminal-Bench trial's stored trajectory (kind ``trajectory``, format
``terminal-bench-trajectory-v1``): what the agent was told and did, what the verifier said, and the
task container's receipt. The conversation record's outputs name it by digest (agent.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Trajectory(BaseModel):
    """One trial, as stored."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["trajectory"] = "trajectory"
    """What this object is."""
    format: str
    """The trajectory format (``terminal-bench-trajectory-v1``)."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    agent: str
    """sr-bench's agent scaffold and its version."""
    task: str
    """The task directory's name."""
    tree_sha256: str
    """The task tree's digest."""
    options: dict[str, Any]
    """The benchmark options the trial ran under."""
    messages: list[dict[str, Any]]
    """The conversation with the model, as sent (tool calls and results included)."""
    steps: list[dict[str, Any]]
    """Every command the agent ran, with its exit code, output and duration."""
    turns: int
    """Model calls made."""
    stop_reason: str | None
    """Why the agent phase ended."""
    verifier: dict[str, Any] | None
    """What the verifier ran and left (reward files, output)."""
    reward: int | float | None
    """The verifier's reward (None: none)."""
    rewards: dict[str, int | float]
    """Named rewards of a reward.json."""
    error_class: str | None
    """Why the trial failed."""
    error: str | None
    """One line, with error_class."""
    receipt: dict[str, Any] | None
    """The task container's receipt (engine, image, limits)."""
    environment: dict[str, Any]
    """Facts about the environment (image built, build time, time sharing)."""
