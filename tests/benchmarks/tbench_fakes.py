"""A fake CellSession (scripted replies, an in-memory store) and a fake task environment, for
driving the Terminal-Bench agent loop without the service (and, for the environment, without Docker)."""

from __future__ import annotations

import copy
from typing import Any

from srbench.benchmarks.conversation import CellStopped, Reply
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.sandbox.task_container import CommandResult
from srbench.schemas.plan import BenchmarkOptions
from srbench.simulate.terminal_tasks import tool_call


def reply(index: int, *commands: str, text: str | None = None, status: str = "completed",
          error_class: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> Reply:
    calls = tool_calls if tool_calls is not None else [tool_call(f"call-{index}-{i}", c) for i, c in enumerate(commands)]
    return Reply(index=index, role="subject", target_id="agent", status=status, text=text, tool_calls=calls,
                 finish_reason="tool_calls" if calls else "stop", error_class=error_class,
                 error=None if status == "completed" else f"{error_class}: scripted failure")


def scripted(commands: list[str], final: str = "Done.") -> list[Reply]:
    """One tool call per turn, then a final answer without tool calls."""
    return [reply(i, c) for i, c in enumerate(commands)] + [reply(len(commands), text=final)]


class FakeSession:
    def __init__(self, replies: list[Reply | Exception], *, remaining: float = 10_000.0, cell_id: str = "cell-fake",
                 options: dict[str, Any] | None = None) -> None:
        self.replies = list(replies)
        self.cell_id, self.target_id, self.seed, self.case = cell_id, "agent", 1, None
        self.sent: list[dict[str, Any]] = []
        self.objects: dict[str, Any] = {}
        self.remaining = remaining
        self.options = None if options is None else BenchmarkOptions.model_validate(options)

    async def call(self, messages: list[dict[str, Any]], *, role: str = "subject",
                   tools: list[dict[str, Any]] | None = None, tool_choice: Any = None,
                   max_tokens: int | None = None) -> Reply:
        self.sent.append({"messages": copy.deepcopy(messages), "tools": tools, "role": role})
        if not self.replies:
            raise CellStopped("cancelled", "the script has no more replies")
        nxt = self.replies.pop(0)
        if isinstance(nxt, Exception):
            raise nxt
        return nxt

    def store(self, value: bytes | dict[str, Any]) -> str:
        data = value if isinstance(value, bytes) else canonical_json(value)
        d = digest_bytes(data)
        self.objects[d] = value
        return d

    def remaining_s(self) -> float:
        return self.remaining


class FakeEnvironment:
    """Records commands; `outputs` maps a command to (exit, stdout, stderr, timed_out); the verifier
    command writes `reward_files` ({path: bytes}) into its little file table."""

    def __init__(self, reward_files: dict[str, bytes] | None = None,
                 outputs: dict[str, tuple[int | None, bytes, bytes, bool]] | None = None) -> None:
        self.reward_files = reward_files or {}
        self.outputs = outputs or {}
        self.commands: list[tuple[str, float, dict[str, str] | None]] = []
        self.files: dict[str, bytes] = {}
        self.closed = False
        self.receipt = {"kind": "terminal-bench-receipt", "backend": "fake", "image_id": "sha256:" + "0" * 64}
        self.facts = {"image_built": False}

    async def run(self, command: str, timeout_s: float, *, env: dict[str, str] | None = None,
                  keep: tuple[int, int] = (96_000, 32_000)) -> CommandResult:
        self.commands.append((command, timeout_s, env))
        if command == "bash /tests/test.sh":
            self.files.update(self.reward_files)
        code, out, err, timed_out = self.outputs.get(command, (0, f"ran: {command}\n".encode(), b"", False))
        return CommandResult(code, out[-keep[0]:], err[-keep[1]:], len(out), len(err), timed_out, 0.01)

    async def put_files(self, dest: str, files: dict[str, bytes]) -> None:
        for rel, data in files.items():
            self.files[f"{dest}/{rel}"] = data

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        return self.files.get(path)

    async def close(self) -> None:
        self.closed = True
