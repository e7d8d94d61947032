"""The task environment an agent trial runs in: the interface the agent loop uses, and its Docker form.

`TerminalEnvironment` is what `agent.py` needs (run a command with a timeout, copy files in, read a
file, close). `DockerTaskEnvironment` implements it with `srbench.sandbox.task_container` (image
from the task's ``environment/`` with local bases only, a network-free limited container), every
blocking engine call in a thread. Its `receipt` (DEP-6) names the engine, the image id, every base
image id and repo digest, and the limits in force. `preflight` checks a set of tasks before a run:
an engine answers and every base image is on it. Tests replace the factory with `use_factory`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from srbench.benchmarks.terminal_bench.options import TerminalOptions
from srbench.benchmarks.terminal_bench.tasks import TaskConfig, executable, under
from srbench.benchmarks.terminal_bench.trajectory import TaskReceipt, TrialFacts
from srbench.sandbox import task_container as tc
from srbench.sandbox.base import SandboxFault
from srbench.sandbox.task_container import CommandResult


@dataclass(frozen=True)
class TaskSpec:
    """One task as a case carries it."""

    name: str                       # the task directory name
    tree_sha256: str
    config: TaskConfig
    files: dict[str, bytes]         # every file of the task directory, by relative path


class TerminalEnvironment(Protocol):
    receipt: TaskReceipt
    facts: TrialFacts               # per-trial facts kept beside the receipt (image built or reused, build time)

    async def run(self, command: str, timeout_s: float, *, env: dict[str, str] | None = None,
                  keep: tuple[int, int] = (96_000, 32_000)) -> CommandResult: ...

    async def put_files(self, dest: str, files: dict[str, bytes]) -> None: ...

    async def read_file(self, path: str, max_bytes: int) -> bytes | None: ...

    async def close(self) -> None: ...


Factory = Callable[[TaskSpec, str, TerminalOptions], Awaitable[TerminalEnvironment]]


class TrialLimits(BaseModel):
    """The task.toml limits capped by sr-bench's, as the receipt records them."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    cpus: float
    """CPUs of the container."""
    memory_mb: int
    """Its memory."""
    pids: int
    """Its process limit."""
    agent_timeout_s: float
    """The agent phase's time."""
    verifier_timeout_s: float
    """The verifier's time."""
    build_timeout_s: float
    """The image build's time."""
    command_timeout_s: float
    """One command's time."""
    max_steps: int
    """Model turns at most."""
    storage_mb_requested: int | None
    """The storage the task asks for (not enforced)."""
    storage_enforced: Literal[False]
    """Storage is not limited."""
    network: Literal["none"]
    """Containers have no network."""
    task_allow_internet: bool
    """What the task's allow_internet said."""


def effective_limits(task: TaskSpec, options: TerminalOptions) -> TrialLimits:
    """The task.toml limits capped by sr-bench's (what the receipt records)."""
    c = task.config
    return TrialLimits(cpus=min(c.cpus, options.cpus_cap), memory_mb=min(c.memory_mb, options.memory_mb_cap),
                       pids=options.pids, agent_timeout_s=min(c.agent_timeout_s, options.agent_timeout_cap_s),
                       verifier_timeout_s=min(c.verifier_timeout_s, options.verifier_timeout_cap_s),
                       build_timeout_s=min(c.build_timeout_s, options.build_timeout_cap_s),
                       command_timeout_s=options.command_timeout_s, max_steps=options.max_steps,
                       storage_mb_requested=c.storage_mb, storage_enforced=False, network="none",
                       task_allow_internet=c.allow_internet)


class DockerTaskEnvironment:
    """One trial's container on the engine DOCKER_HOST names."""

    def __init__(self, container: Any, receipt: TaskReceipt, facts: TrialFacts) -> None:
        self.container, self.receipt, self.facts = container, receipt, facts

    @classmethod
    async def open(cls, task: TaskSpec, cell_id: str, options: TerminalOptions) -> DockerTaskEnvironment:
        return await asyncio.to_thread(cls._open, task, cell_id, options)

    @classmethod
    def _open(cls, task: TaskSpec, cell_id: str, options: TerminalOptions) -> DockerTaskEnvironment:
        if task.config.gpus > 0:
            raise tc.TaskEnvironmentUnavailable(f"task {task.name} needs {task.config.gpus} GPU(s); sr-bench runs "
                                                "Terminal-Bench without GPUs")
        limits = effective_limits(task, options)
        api = tc.engine()
        image = tc.ensure_image(api, under(task.files, "environment"), where=f"task {task.name}",
                                executable=executable, build_timeout_s=limits.build_timeout_s,
                                network=options.build_network)
        caps = tc.ContainerLimits(cpus=limits.cpus, memory_mb=limits.memory_mb, pids=limits.pids)
        container = tc.TaskContainer(api, image, caps, cell=cell_id, env=task.config.environment_env)
        receipt = TaskReceipt.model_validate({
            "kind": "terminal-bench-receipt", "schema": 1, "backend": "docker", "engine": tc.engine_facts(api),
            "image": image.tag, "image_id": image.image_id, "image_key": image.key, "base_images": image.bases,
            "build_network": image.build_network, "tree_sha256": task.tree_sha256, "workdir": container.workdir,
            "limits": {**limits.model_dump(), **caps.as_dict()}, "upstream_image": task.config.docker_image})
        return cls(container, receipt, TrialFacts(image_built=image.built, build_s=image.build_s))

    async def run(self, command: str, timeout_s: float, *, env: dict[str, str] | None = None,
                  keep: tuple[int, int] = (96_000, 32_000)) -> CommandResult:
        return await asyncio.to_thread(self.container.exec, command, timeout_s, env=env, keep=keep)

    async def put_files(self, dest: str, files: dict[str, bytes]) -> None:
        await asyncio.to_thread(self.container.put_files, dest, files, executable)

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        return await asyncio.to_thread(self.container.read_file, path, max_bytes)

    async def close(self) -> None:
        # in a thread, shielded; when the cell's task is cancelled meanwhile, removed right here (idempotent)
        try:
            await asyncio.shield(asyncio.to_thread(self.container.remove))
        except asyncio.CancelledError:
            self.container.remove()
            raise


_factory: Factory = DockerTaskEnvironment.open


def use_factory(factory: Factory | None) -> None:
    """Replace (None: restore) how trials get their environment (tests)."""
    global _factory
    _factory = factory or DockerTaskEnvironment.open


async def open_environment(task: TaskSpec, cell_id: str, options: TerminalOptions) -> TerminalEnvironment:
    if _factory == DockerTaskEnvironment.open and os.environ.get("SR_BENCH_SANDBOX", "").strip().lower() == "ray":
        from srbench.benchmarks.terminal_bench.ray_env import open_ray  # on a worker host (ray_env.py)

        return await open_ray(task, cell_id, options)
    return await _factory(task, cell_id, options)


def preflight(tasks: list[TaskSpec]) -> list[str]:
    """One line per problem that would stop these tasks from running here (empty: ready)."""
    try:
        api = tc.engine(timeout_s=20)
    except SandboxFault as exc:
        return [f"terminal-bench: {exc.message}"]
    problems: list[str] = []
    for task in sorted(tasks, key=lambda t: t.name):
        if task.config.gpus > 0:
            problems.append(f"terminal-bench task {task.name} needs {task.config.gpus} GPU(s); none are given")
            continue
        try:
            tc.base_images(api, under(task.files, "environment").get("Dockerfile", b""), f"task {task.name}")
        except SandboxFault as exc:
            problems.append(exc.message)
    return problems
