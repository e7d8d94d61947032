"""The pinned agent `sr-bench-terminal-v1` and sr-bench's caps on what a task may ask for.

The agent: at most ``max_steps`` (100) model turns, one ``terminal(command)`` tool, each command
limited to ``command_timeout_s`` (30 s), the model sees the last 24,000 characters of stdout and
8,000 of stderr. A task's own ``[agent]``/``[verifier]`` timeouts, CPUs and memory are used up to
the caps here. Images are built with no network unless ``build_network`` says otherwise.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.errors import InvalidInput

AGENT = "sr-bench-terminal-v1"


class TerminalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_steps: int = Field(default=100, ge=1, le=1000)
    command_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    stdout_tail_chars: int = Field(default=24_000, ge=256)
    stderr_tail_chars: int = Field(default=8_000, ge=256)
    agent_timeout_cap_s: float = Field(default=3600.0, gt=0)
    verifier_timeout_cap_s: float = Field(default=1800.0, gt=0)
    build_timeout_cap_s: float = Field(default=1800.0, gt=0)
    cpus_cap: float = Field(default=4.0, gt=0)
    memory_mb_cap: int = Field(default=8192, ge=64)
    pids: int = Field(default=4096, ge=64)
    build_network: Literal["none", "default", "bridge", "host"] = "none"
    verifier_log_chars: int = Field(default=64_000, ge=1024)


def options_from(given: Any) -> TerminalOptions:
    """The effective options from a (possibly absent) mapping; unknown keys or bad values refused."""
    if given is None:
        return TerminalOptions()
    if isinstance(given, TerminalOptions):
        return given
    if not isinstance(given, dict):
        raise InvalidInput("terminal-bench options must be an object")
    try:
        return TerminalOptions(**{k: v for k, v in given.items() if k != "grader_version"})
    except ValueError as exc:
        first = str(exc).splitlines()
        raise InvalidInput(f"terminal-bench options: {' '.join(first[:3])}") from None
