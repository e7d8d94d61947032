"""Terminal-Bench task containers on a Ray cluster's worker hosts (issue 31, item 4).

With ``SR_BENCH_SANDBOX=ray`` (and ``SR_BENCH_RAY_ADDRESS``) a trial's environment is a Ray actor on
a worker host: it builds the task image and runs the container on that host's own Docker engine
(its ``DOCKER_HOST``), exactly as `DockerTaskEnvironment` does locally, and its receipt names that
engine. The agent loop stays in the service — every model call is journaled before it is sent, as
for a local trial — and only the container's commands, files and removal travel to the actor. An
actor (or its node) lost mid-trial fails the trial with a sandbox fault (``trial_error``, never a
reward): a trial is not pure — its model calls were made and billed — so it is not run again by itself.
"""

from __future__ import annotations

import json
import os
from typing import Any

from srbench.benchmarks.terminal_bench.environment import DockerTaskEnvironment, TaskSpec
from srbench.benchmarks.terminal_bench.options import TerminalOptions
from srbench.benchmarks.terminal_bench.tasks import executable
from srbench.benchmarks.terminal_bench.trajectory import TaskReceipt, TrialFacts
from srbench.sandbox import task_container as tc
from srbench.sandbox.base import SandboxFault
from srbench.sandbox.task_container import CommandResult


class TaskActor:
    """On a worker host: one trial's container (made a Ray actor by `open_ray`)."""

    def __init__(self, task: TaskSpec, cell_id: str, options: TerminalOptions, scope: str) -> None:
        tc.set_scope(scope)              # the service's scope: its sweeps find what this made
        self.env = DockerTaskEnvironment._open(task, cell_id, options)

    def opened(self) -> tuple[TaskReceipt, TrialFacts]:
        return self.env.receipt, self.env.facts

    def run(self, command: str, timeout_s: float, env: dict[str, str] | None, keep: tuple[int, int]) -> CommandResult:
        result: CommandResult = self.env.container.exec(command, timeout_s, env=env, keep=keep)
        return result

    def put_files(self, dest: str, files: dict[str, bytes]) -> None:
        self.env.container.put_files(dest, files, executable)

    def read_file(self, path: str, max_bytes: int) -> bytes | None:
        return self.env.container.read_file(path, max_bytes)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.env.container.remove()


async def _call(ref: Any) -> Any:
    """An actor call's result; a lost actor or node, or the engine failing there, is a sandbox fault."""
    try:
        return await ref
    except SandboxFault:
        raise
    except Exception as exc:  # noqa: BLE001 - RayActorError, RayTaskError(...): not the model's doing
        cause = getattr(exc, "cause", None)
        if isinstance(cause, SandboxFault):
            raise cause from None
        raise SandboxFault(f"the Ray worker running this trial's container failed: {type(exc).__name__}") from None


class RayTaskEnvironment:
    """`TerminalEnvironment` over a `TaskActor`."""

    def __init__(self, actor: Any, receipt: TaskReceipt, facts: TrialFacts) -> None:
        self.actor, self.receipt, self.facts = actor, receipt, facts.model_copy(update={"host": "ray"})

    async def run(self, command: str, timeout_s: float, *, env: dict[str, str] | None = None,
                  keep: tuple[int, int] = (96_000, 32_000)) -> CommandResult:
        return await _call(self.actor.run.remote(command, timeout_s, env, keep))  # type: ignore[no-any-return]

    async def put_files(self, dest: str, files: dict[str, bytes]) -> None:
        await _call(self.actor.put_files.remote(dest, files))

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        return await _call(self.actor.read_file.remote(path, max_bytes))  # type: ignore[no-any-return]

    async def close(self) -> None:
        # deferred: ray is an optional extra: imported only on the Ray backend
        import ray

        try:
            await _call(self.actor.close.remote())
        except SandboxFault:
            pass                          # the host is gone: so is its container, or its engine sweeps it
        finally:
            ray.kill(self.actor, no_restart=True)


async def open_ray(task: TaskSpec, cell_id: str, options: TerminalOptions) -> RayTaskEnvironment:
    """The trial's container on a worker host (the Ray backend's `environment` factory)."""
    # deferred: the Ray backend's module loads only when a trial runs on Ray
    from srbench.sandbox.ray_backend import connect

    ray = connect()
    resources = json.loads(os.environ.get("SR_BENCH_RAY_RESOURCES") or "{}") or None
    actor = ray.remote(num_cpus=0, resources=resources, max_restarts=0)(TaskActor).remote(
        task, cell_id, options, tc.current_scope())
    try:
        receipt, facts = await _call(actor.opened.remote())
    except BaseException:
        ray.kill(actor, no_restart=True)
        raise
    return RayTaskEnvironment(actor, receipt, facts)
