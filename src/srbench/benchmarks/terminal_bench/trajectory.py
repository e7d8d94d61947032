"""A Terminal-Bench trial's stored trajectory (kind ``trajectory``, format
``terminal-bench-trajectory-v1``): what the agent was told and did, what the verifier said, and the
task container's receipt. The conversation record's outputs (`TrialOutputs`) name it by digest (agent.py).

The trial's parts (a command step, the verifier's run, the environment's facts) are built as models
and passed by attribute; an optional field that was never set is absent from the stored JSON (as in
the dict literals these replaced), so the bytes are unchanged. Dicts remain only for the chat messages
sent to the model endpoint (JSON that crosses that edge).
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from srbench.benchmarks.terminal_bench.options import TerminalOptions
from srbench.schemas.wire import WireJSON


class _Sparse(BaseModel):
    """A stored part whose optional fields are absent unless they were set."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)

    @model_serializer(mode="wrap")
    def _set_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        fields = type(self).model_fields
        keep = {n for n in self.model_fields_set} | {fields[n].alias for n in self.model_fields_set if fields[n].alias}
        return {k: v for k, v in data.items() if k in keep}


class TrialStep(_Sparse):
    """One tool call of the agent: the command it ran (or why none ran) and how it ended."""

    turn: int
    """The model turn that asked for it."""
    tool_call_id: str | None
    """The tool call's id."""
    command: str | None
    """The bash command (None: the call named none)."""
    message: int
    """The index of its tool result in the messages."""
    error: str | None = None
    """Why nothing ran (absent: it ran)."""
    exit_code: int | None = None
    """Its exit code (None: unknown or killed)."""
    timed_out: bool = False
    """It was killed at its timeout."""
    wall_s: float = 0.0
    """Its wall time."""
    stdout_bytes: int = 0
    """Bytes it wrote to stdout."""
    stderr_bytes: int = 0
    """Bytes it wrote to stderr."""


class RewardFiles(_Sparse):
    """The verifier's reward files as read (the first 4096 characters)."""

    reward_txt: str | None = Field(alias="reward.txt")
    """``reward.txt`` (None: absent)."""
    reward_json: str | None = Field(alias="reward.json")
    """``reward.json`` (None: absent or not read)."""


class VerifierRun(_Sparse):
    """The verifier's run of ``tests/test.sh``."""

    exit_code: int | None
    """Its exit code."""
    timed_out: bool
    """It was killed at its timeout."""
    wall_s: float
    """Its wall time."""
    timeout_s: float
    """Its timeout."""
    stdout: str | None = None
    """Its stdout tail (in the trajectory only)."""
    stderr: str | None = None
    """Its stderr tail (in the trajectory only)."""
    stdout_bytes: int
    """Bytes it wrote to stdout."""
    stderr_bytes: int
    """Bytes it wrote to stderr."""
    reward_files: RewardFiles | None = None
    """The reward files it left (absent: it timed out, nothing was read)."""

    def summary(self) -> VerifierRun:
        """The run without its output tails (the conversation record's copy)."""
        return VerifierRun.model_validate(self.model_dump(exclude={"stdout", "stderr"}))


class TimeShared(_Sparse):
    """The cell's time could not hold both phases: the agent's share."""

    cell_remaining_s: float
    """Seconds the cell had left."""
    agent_s: float
    """Seconds the agent phase was given."""


class TrialFacts(_Sparse):
    """Facts about the trial's environment, kept beside the receipt."""

    image_built: bool | None = None
    """The task image was built for this trial (False: reused)."""
    build_s: float | None = None
    """Seconds the build took."""
    host: str | None = None
    """Where the container ran (``ray``: a worker host)."""
    time_shared: TimeShared | None = None
    """The agent's share of the cell's time (absent: it had its own timeout)."""


class EngineFacts(_Sparse):
    """The Docker engine the container ran on."""

    version: str | None = None
    """Its version."""
    api_version: str | None = None
    """Its API version."""
    os: str | None = None
    """Its OS."""
    arch: str | None = None
    """Its architecture."""
    local: bool | None = None
    """It answers on a local socket."""


class BaseImage(_Sparse):
    """One base image the task's Dockerfile names, as found on the engine."""

    id: str | None = None
    """Its image id."""
    repo_digests: list[str] = []
    """Its repository digests."""


class ReceiptLimits(_Sparse):
    """The limits in force (environment.TrialLimits) and the container's own caps."""

    cpus: float | None = None
    """CPUs of the container."""
    memory_mb: int | None = None
    """Its memory."""
    memory_swap_mb: int | None = None
    """Its memory with swap (= memory: no swap)."""
    pids: int | None = None
    """Its process limit."""
    no_new_privileges: bool | None = None
    """Its processes cannot gain privileges."""
    agent_timeout_s: float | None = None
    """The agent phase's time."""
    verifier_timeout_s: float | None = None
    """The verifier's time."""
    build_timeout_s: float | None = None
    """The image build's time."""
    command_timeout_s: float | None = None
    """One command's time."""
    max_steps: int | None = None
    """Model turns at most."""
    storage_mb_requested: int | None = None
    """The storage the task asks for (not enforced)."""
    storage_enforced: bool | None = None
    """Storage is limited."""
    network: str | None = None
    """The container's network (``none``)."""
    task_allow_internet: bool | None = None
    """What the task's allow_internet said."""


class TaskReceipt(_Sparse):
    """The task container's receipt (DEP-6): the engine, the image and its bases, the limits in force."""

    kind: Literal["terminal-bench-receipt"]
    """What this object is."""
    schema_: Literal[1] | None = Field(default=None, alias="schema")
    """The layout of this object."""
    backend: str | None = None
    """Where the container ran (``docker``)."""
    engine: EngineFacts | None = None
    """The engine."""
    image: str | None = None
    """The task image's tag."""
    image_id: str | None = None
    """The task image's id."""
    image_key: str | None = None
    """The key the image is cached under (its build inputs)."""
    base_images: dict[str, BaseImage] | None = None
    """Every base image by name."""
    build_network: str | None = None
    """The network the build had."""
    tree_sha256: str | None = None
    """The task tree's digest."""
    workdir: str | None = None
    """The image's working directory."""
    limits: ReceiptLimits | None = None
    """The limits in force."""
    upstream_image: str | None = None
    """The prebuilt image the task names (recorded; sr-bench builds its own)."""


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
    options: TerminalOptions
    """The benchmark options the trial ran under."""
    messages: list[WireJSON]
    """The conversation with the model, as sent (tool calls and results included)."""
    steps: list[TrialStep]
    """Every command the agent ran, with its exit code, output and duration."""
    turns: int
    """Model calls made."""
    stop_reason: str | None
    """Why the agent phase ended."""
    verifier: VerifierRun | None
    """What the verifier ran and left (reward files, output)."""
    reward: int | float | None
    """The verifier's reward (None: none)."""
    rewards: dict[str, int | float]
    """Named rewards of a reward.json."""
    error_class: str | None
    """Why the trial failed."""
    error: str | None
    """One line, with error_class."""
    receipt: TaskReceipt | None
    """The task container's receipt (engine, image, limits)."""
    environment: TrialFacts
    """Facts about the environment (image built, build time, time sharing)."""


class TrialOutputs(BaseModel):
    """The conversation record's ``outputs`` of one trial (what grading reads)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    agent: str
    """sr-bench's agent scaffold and its version."""
    task: str
    """The task directory's name."""
    tree_sha256: str
    """The task tree's digest."""
    reward: int | float | None
    """The verifier's reward (None: none)."""
    rewards: dict[str, int | float]
    """Named rewards of a reward.json."""
    reward_source: str | None
    """The file the reward was read from."""
    stop_reason: str | None
    """Why the agent phase ended."""
    turns: int
    """Model calls made."""
    commands: int
    """Tool calls made."""
    receipt: TaskReceipt | None
    """The task container's receipt."""
    environment: TrialFacts
    """Facts about the environment."""
    trajectory: str
    """Digest of the stored trajectory."""
    verifier: VerifierRun | None
    """The verifier's run without its output tails (None: it did not run)."""


class TrialFigures(BaseModel):
    """Terminal-Bench's figures over one target's planned trials (a benchmark row's extra fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    mean_reward: float | None
    """Mean verifier reward of the trials that have one (rounded to 6 places; None: none)."""
    trials_with_reward: int
    """Trials graded from a reward."""
    trial_errors: int
    """Trials that ended without a reward (graded so, or failed before a grade)."""
    ungraded: int
    """Planned trials without a grade that did not fail as a trial error."""
    stop_reasons: dict[str, int]
    """How many graded trials' agent phases ended for each reason."""


class TrialResult(BaseModel):
    """What grading reads of one trial from its conversation record's outputs (a `TrialOutputs` as stored; a
    field a partial record lacks reads as None), and what the grade keeps of it (its details)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    reward: JsonValue = None
    """The verifier's reward as stored (only a number that is not a bool is one)."""
    rewards: dict[str, JsonValue] = {}
    """Named rewards of a reward.json (none: empty)."""
    reward_source: str | None = None
    """The file the reward was read from."""
    stop_reason: str | None = None
    """Why the agent phase ended."""
    turns: int | None = None
    """Model calls made."""
    commands: int | None = None
    """Tool calls made."""
    trajectory: str | None = None
    """Digest of the stored trajectory."""
    receipt: dict[str, JsonValue] | None = None
    """The task container's receipt, as stored."""
    tree_sha256: str | None = None
    """The task tree's digest."""

    @field_validator("rewards", mode="before")
    @classmethod
    def _no_rewards(cls, value: object) -> object:
        return value or {}
