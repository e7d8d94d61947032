"""The pinned agent loop ``sr-bench-terminal-v1`` and the verifier phase: one Terminal-Bench trial.

1. The task's environment starts (image from its Dockerfile, local bases only; no model call is
   made when it cannot start: the cell fails with the environment's error class).
2. Agent phase: system prompt + the task's instruction, one ``terminal(command)`` tool by function
   calling. Each turn is one journaled ``session.call``; every tool call of a reply runs in the
   container (a fresh bash, the image's working directory) under the per-command timeout, and its
   exit code and stdout/stderr tails go back as the tool result. The phase ends when a reply has
   no tool call (``agent_done``), after ``max_steps`` turns, when the agent time is up (the task's
   ``[agent] timeout_sec`` capped; when the cell's time left cannot hold both the agent and the
   verifier timeouts it is shared between them in proportion), or when a call fails
   or the session stops (the cell then fails with that error class; no verifier run).
3. Verifier phase: ``/tests`` and ``/logs/verifier`` are emptied, ``tests/`` is copied to ``/tests``,
   ``bash /tests/test.sh`` runs under the verifier timeout with ``[verifier.env]``; the reward is
   read from ``reward.txt`` / ``reward.json`` (verifier.py). No reward, or a verifier timeout, is a
   trial error (``error_class = "trial_error"``), never a zero.
The trajectory (messages, commands, outputs, verifier log, receipt) is stored with
``session.store`` and named in the outcome; the container is removed whatever happened.
"""

from __future__ import annotations

import json
import time

from srbench.benchmarks.conversation import CellSession, CellStopped, ConversationOutcome
from srbench.benchmarks.terminal_bench.environment import (
    TaskSpec,
    TerminalEnvironment,
    effective_limits,
    open_environment,
)
from srbench.benchmarks.terminal_bench.options import AGENT, TerminalOptions
from srbench.benchmarks.terminal_bench.tasks import under
from srbench.benchmarks.terminal_bench.trajectory import (
    RewardFiles,
    TaskReceipt,
    TimeShared,
    Trajectory,
    TrialFacts,
    TrialOutputs,
    TrialStep,
    VerifierRun,
)
from srbench.benchmarks.terminal_bench.verifier import (
    MAX_REWARD_BYTES,
    REWARD_JSON,
    REWARD_TXT,
    VERIFIER_DIR,
    RewardError,
    parse_reward,
)
from srbench.sandbox import capacity
from srbench.sandbox.base import SandboxFault
from srbench.sandbox.task_container import CommandResult
from srbench.schemas.wire import WireJSON

SYSTEM = (
    "You are an autonomous agent solving a task in a Linux terminal. Your one tool, `terminal`, runs a "
    "bash command inside the task's container and returns its exit code and the end of its stdout and "
    "stderr. Each command runs in a fresh shell in the task's working directory with a limit of {timeout} "
    "seconds, so keep state in files (a `cd` or a variable does not carry over to the next command) and "
    "never start an interactive program. There is no network access. Work step by step: look around, "
    "act, and check your work. When the task is complete, answer with a short summary and no tool call: "
    "that ends your work, and the task is then checked by its tests."
)
TOOL: WireJSON = {
    "type": "function",
    "function": {
        "name": "terminal",
        "description": "Run one bash command in the task container; returns its exit code, stdout and stderr.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string",
                                                                    "description": "the bash command to run"}},
                       "required": ["command"], "additionalProperties": False},
    },
}
TRAJECTORY_FORMAT = "terminal-bench-trajectory-v1"
RESET_VERIFIER = f"rm -rf /tests {VERIFIER_DIR} && mkdir -p /tests {VERIFIER_DIR}"


def first_messages(instruction: str, options: TerminalOptions) -> list[WireJSON]:
    """The opening of every trial (also the case's messages)."""
    return [{"role": "system", "content": SYSTEM.format(timeout=f"{options.command_timeout_s:g}")},
            {"role": "user", "content": instruction}]


def tail_text(data: bytes, chars: int) -> tuple[str, bool]:
    text = data.decode("utf-8", "replace")
    return (text[-chars:], True) if len(text) > chars else (text, False)


def format_result(res: CommandResult, timeout_s: float, options: TerminalOptions) -> str:
    """The tool result the model sees: exit code, stdout tail, stderr tail, and what was cut or killed."""
    out, out_cut = tail_text(res.stdout, options.stdout_tail_chars)
    err, err_cut = tail_text(res.stderr, options.stderr_tail_chars)
    lines = []
    if res.timed_out:
        lines.append(f"[the command did not finish within {timeout_s:g} s and was killed]")
    lines.append(f"exit_code: {res.exit_code if res.exit_code is not None else 'unknown'}")
    lines.append("stdout:" + (f" [only the last {len(out)} characters of {res.stdout_bytes} bytes]" if out_cut
                              or res.stdout_bytes > len(res.stdout) else ""))
    lines.append(out)
    lines.append("stderr:" + (f" [only the last {len(err)} characters of {res.stderr_bytes} bytes]" if err_cut
                              or res.stderr_bytes > len(res.stderr) else ""))
    lines.append(err)
    return "\n".join(lines)


def parse_tool_call(call: WireJSON) -> tuple[str | None, str | None]:
    """(command, None) or (None, the problem told to the model)."""
    fn = call.get("function") if isinstance(call, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    name = fn.get("name")
    if name != "terminal":
        return None, f"unknown tool {name!r}; the only tool is terminal"
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        return None, "the arguments are not valid JSON; call terminal with {\"command\": \"...\"}"
    command = args.get("command") if isinstance(args, dict) else None
    if not isinstance(command, str) or not command.strip():
        return None, "terminal needs a non-empty string argument 'command'"
    return command, None


class Trial:
    """The state of one trial, turned into the stored trajectory and the outcome."""

    def __init__(self, task: TaskSpec, session: CellSession, options: TerminalOptions) -> None:
        self.task, self.session, self.options = task, session, options
        self.limits = effective_limits(task, options)
        self.messages = first_messages(task.files["instruction.md"].decode("utf-8", "replace"), options)
        self.steps: list[TrialStep] = []
        self.turns = 0
        self.stop_reason: str | None = None
        self.error_class: str | None = None
        self.error: str | None = None
        self.verifier: VerifierRun | None = None
        self.reward: float | None = None
        self.rewards: dict[str, float] = {}
        self.reward_source: str | None = None
        self.receipt: TaskReceipt | None = None
        self.facts = TrialFacts()

    def fail(self, error_class: str, error: str, stop_reason: str) -> None:
        self.error_class, self.error, self.stop_reason = error_class, " ".join(error.split())[:500], stop_reason

    async def agent_phase(self, env: TerminalEnvironment) -> None:
        agent_s, verifier_s = self.limits.agent_timeout_s, self.limits.verifier_timeout_s
        remaining = max(0.0, self.session.remaining_s())
        budget = agent_s
        if remaining < agent_s + verifier_s:     # the cell's time cannot hold both: share it in proportion
            budget = remaining * agent_s / (agent_s + verifier_s)
            self.facts = self.facts.model_copy(update={"time_shared": TimeShared(
                cell_remaining_s=round(remaining, 3), agent_s=round(budget, 3))})
        deadline = time.monotonic() + budget
        while True:
            if self.turns >= self.options.max_steps:
                self.stop_reason = "max_steps"
                return
            if time.monotonic() >= deadline:
                self.stop_reason = "agent_timeout"
                return
            try:
                reply = await self.session.call(self.messages, tools=[TOOL])
            except CellStopped as exc:
                self.fail(exc.error_class, exc.reason, "stopped")
                return
            self.turns += 1
            if reply.status != "completed":
                self.fail(reply.error_class or "call_failed", reply.error or f"turn {self.turns} failed", "call_failed")
                return
            assistant: WireJSON = {"role": "assistant", "content": reply.text}
            if reply.tool_calls:
                assistant["tool_calls"] = reply.tool_calls
            self.messages.append(assistant)
            if not reply.tool_calls:
                self.stop_reason = "agent_done"
                return
            for call in reply.tool_calls:
                content = await self.tool(env, call, deadline)
                self.messages.append({"role": "tool", "tool_call_id": str(call.get("id") or ""), "content": content})

    async def tool(self, env: TerminalEnvironment, call: WireJSON, deadline: float) -> str:
        command, problem = parse_tool_call(call)
        step = TrialStep(turn=self.turns, tool_call_id=call.get("id"), command=command, message=len(self.messages))
        self.steps.append(step)                  # kept as it is should the command's run fail
        if problem is not None:
            self.steps[-1] = step.model_copy(update={"error": problem})
            return f"error: {problem}"
        left = deadline - time.monotonic()
        if left <= 0:
            self.steps[-1] = step.model_copy(update={"error": "agent time is up"})
            return "error: the agent's time is up; the command was not run"
        timeout = min(self.options.command_timeout_s, left)
        keep = (self.options.stdout_tail_chars * 4, self.options.stderr_tail_chars * 4)
        assert command is not None
        res = await env.run(command, timeout, keep=keep)
        self.steps[-1] = step.model_copy(update={"exit_code": res.exit_code, "timed_out": res.timed_out,
                                                 "wall_s": res.wall_s, "stdout_bytes": res.stdout_bytes,
                                                 "stderr_bytes": res.stderr_bytes})
        return format_result(res, timeout, self.options)

    async def verifier_phase(self, env: TerminalEnvironment) -> None:
        await env.run(RESET_VERIFIER, 30)
        await env.put_files("/tests", under(self.task.files, "tests"))
        timeout = max(1.0, min(self.limits.verifier_timeout_s, self.session.remaining_s()))
        n = self.options.verifier_log_chars
        res = await env.run("bash /tests/test.sh", timeout, env=self.task.config.verifier_env, keep=(n * 4, n * 4))
        out, _ = tail_text(res.stdout, n)
        err, _ = tail_text(res.stderr, n)
        self.verifier = VerifierRun(exit_code=res.exit_code, timed_out=res.timed_out, wall_s=res.wall_s,
                                    timeout_s=timeout, stdout=out, stderr=err,
                                    stdout_bytes=res.stdout_bytes, stderr_bytes=res.stderr_bytes)
        if res.timed_out:
            self.fail("trial_error", f"VerifierTimeoutError: tests/test.sh did not finish within {timeout:g} s",
                      self.stop_reason or "verifier_timeout")
            return
        try:
            try:
                txt = await env.read_file(REWARD_TXT, MAX_REWARD_BYTES)
                js = None if txt is not None else await env.read_file(REWARD_JSON, MAX_REWARD_BYTES)
            except SandboxFault as exc:
                raise RewardError("VerifierOutputParseError", exc.message) from None
            self.verifier = self.verifier.model_copy(update={
                "reward_files": RewardFiles(reward_txt=_text(txt), reward_json=_text(js))})
            self.reward, self.reward_source, self.rewards = parse_reward(txt, js)
        except RewardError as exc:
            self.fail("trial_error", f"{exc.kind}: {exc.message}", self.stop_reason or "no_reward")

    def trajectory(self) -> Trajectory:
        """The trajectory object to store."""
        return Trajectory(format=TRAJECTORY_FORMAT, agent=AGENT, task=self.task.name, tree_sha256=self.task.tree_sha256,
                          options=self.options, messages=self.messages, steps=self.steps,
                          turns=self.turns, stop_reason=self.stop_reason, verifier=self.verifier, reward=self.reward,
                          rewards=self.rewards, error_class=self.error_class, error=self.error, receipt=self.receipt,
                          environment=self.facts)

    def outcome(self) -> ConversationOutcome:
        digest = self.session.store(self.trajectory().model_dump(mode="json", by_alias=True))
        final = next((m.get("content") for m in reversed(self.messages) if m["role"] == "assistant"), None)
        outputs = TrialOutputs(agent=AGENT, task=self.task.name, tree_sha256=self.task.tree_sha256,
                               reward=self.reward, rewards=self.rewards, reward_source=self.reward_source,
                               stop_reason=self.stop_reason, turns=self.turns, commands=len(self.steps),
                               receipt=self.receipt, environment=self.facts, trajectory=digest,
                               verifier=self.verifier.summary() if self.verifier is not None else None)
        return ConversationOutcome(final_text=final, outputs=outputs.model_dump(mode="json", by_alias=True),
                                   trajectory=digest,
                                   error_class=self.error_class, error=self.error)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")[:4096]


async def run_trial(task: TaskSpec, session: CellSession, options: TerminalOptions) -> ConversationOutcome:
    """One trial of `task` for the session's target; see the module docstring."""
    # the trial's CPU cap counts against the host's grading budget (sandbox/capacity.py), with code grading
    async with capacity.GRADING.held(effective_limits(task, options).cpus):
        return await _trial(task, session, options)


async def _trial(task: TaskSpec, session: CellSession, options: TerminalOptions) -> ConversationOutcome:
    trial = Trial(task, session, options)
    try:
        env = await open_environment(task, session.cell_id, options)
    except SandboxFault as exc:
        trial.fail(exc.code, exc.message, "environment")
        return trial.outcome()
    # validated here: the environment is an edge (Docker, a Ray worker, a test's fake)
    trial.receipt, trial.facts = TaskReceipt.model_validate(env.receipt), TrialFacts.model_validate(env.facts)
    try:
        try:
            await trial.agent_phase(env)
            if trial.error_class is None:
                await trial.verifier_phase(env)
        except SandboxFault as exc:
            trial.fail(exc.code, exc.message, trial.stop_reason or "environment")
    finally:
        await env.close()
    return trial.outcome()
