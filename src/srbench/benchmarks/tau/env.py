"""The environment of one τ³ cell: tools, databases and assertion functions, never a model.

Two implementations of one small protocol (`TauEnvironment`):
- `Tau2Environment`, for the real domains (airline, retail, telecom): tau2's own domain code, run in
  its own pinned interpreter (``SR_BENCH_TAU3_PYTHON``, DEP-2) as a child process speaking JSON lines
  (``tau2_child.py``). The child imports only tau2's domain environments and refuses any model call:
  every model call of a cell is sr-bench's, through the cell's session.
- `LocalEnvironment`, for sr-bench's toy domain ``mini`` (mini.py), in process.

Per cell: `start` (the tool schemas, and the hashes of the policy and database files the environment
was built from, which must equal the case's), `reset` (the task's initial state), `tool` (one call by
the assistant or the user), `evaluate` (the predicted databases' hashes, the gold databases' hashes
after replaying the task's gold actions on a fresh environment, and the env assertions), `close`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from srbench.benchmarks.tau.mini import MiniShop, ToolError
from srbench.benchmarks.tau.models import (
    AssertionCheck,
    Criteria,
    DbHashes,
    EnvEvaluation,
    EnvInfo,
    Requestor,
)
from srbench.benchmarks.tau.tasks import LOCAL_DOMAINS, TEXT_DOMAINS
from srbench.schemas.wire import WireJSON

PYTHON_ENV = "SR_BENCH_TAU3_PYTHON"
CHILD = Path(__file__).with_name("tau2_child.py")
OP_TIMEOUT_S = 120.0
START_TIMEOUT_S = 180.0


class EnvironmentError_(Exception):
    """The environment could not be started or broke (not the model's doing): the cell is an error."""

    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message


class TauEnvironment:
    """The protocol (see the module docstring)."""

    async def start(self, domain: str) -> EnvInfo:
        raise NotImplementedError

    async def reset(self, initial_state: WireJSON | None) -> None:
        raise NotImplementedError

    async def tool(self, requestor: Requestor, name: str | None, arguments: WireJSON) -> tuple[str, bool]:
        raise NotImplementedError

    async def evaluate(self, criteria: Criteria, initial_state: WireJSON | None) -> EnvEvaluation:
        raise NotImplementedError

    async def close(self) -> None:
        return None


def interpreter() -> str | None:
    """The pinned tau2 interpreter named by SR_BENCH_TAU3_PYTHON, if it is an executable file."""
    value = os.environ.get(PYTHON_ENV)
    if not value:
        return None
    path = shutil.which(value) if os.sep not in value else value
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def interpreter_problems() -> list[str]:
    """`setup`'s check of the tau2 interpreter: set, and able to import every text domain's environment."""
    reason = unavailable_reason(TEXT_DOMAINS[0])
    if reason is not None:
        return [reason]
    python = interpreter()
    assert python is not None
    probe = "; ".join(f"import tau2.domains.{d}.environment" for d in TEXT_DOMAINS)
    try:
        done = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"{PYTHON_ENV}={python} cannot be run: {type(exc).__name__}"]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return [f"{PYTHON_ENV}={python} cannot import tau2's domain environments: {last}"]
    return []


def unavailable_reason(domain: str) -> str | None:
    """Why a cell of `domain` cannot run on this host (None: it can)."""
    if domain in LOCAL_DOMAINS:
        return None
    if domain not in TEXT_DOMAINS:
        return f"τ³ domain {domain!r} has no environment in sr-bench"
    if interpreter() is None:
        return (f"τ³ domain {domain} runs tau2's environment in its own pinned interpreter: set {PYTHON_ENV} "
                "to a Python that has tau2 installed from the pinned tau2-bench checkout (DEP-2)")
    return None


def probe(domain: str, timeout_s: float = START_TIMEOUT_S) -> EnvInfo:
    """What the pinned interpreter's environment of a real domain is built from (its policy and database
    digests), asked before a plan is frozen; EnvironmentError_ when it cannot say."""
    reason = unavailable_reason(domain)
    python = interpreter()
    if reason is not None or python is None:
        raise EnvironmentError_("environment_unavailable", reason or f"{PYTHON_ENV} is not set")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and k != "HF_TOKEN"}
    ops = json.dumps({"op": "start", "domain": domain}) + "\n" + json.dumps({"op": "close"}) + "\n"
    try:
        done = subprocess.run([python, "-I", str(CHILD)], input=ops, capture_output=True, text=True,
                              timeout=timeout_s, env={**env, "PYTHONNOUSERSITE": "1"})
        got = json.loads((done.stdout.strip().splitlines() or ["{}"])[0])
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        raise EnvironmentError_("environment_error", f"{PYTHON_ENV}={python} cannot start the {domain} environment "
                                f"({type(exc).__name__})") from None
    if not isinstance(got, dict) or not got.get("ok"):
        why = got.get("error") if isinstance(got, dict) and got.get("error") else \
            (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise EnvironmentError_("environment_error", f"{PYTHON_ENV}={python} cannot start the {domain} environment: "
                                f"{why}")
    return EnvInfo(engine=f"tau2=={got.get('tau2_version')} (python {got.get('python')})", tools=got.get("tools") or [],
                   policy_sha256=got.get("policy_sha256"), env_sha256=got.get("env_sha256") or {})


def open_environment(domain: str, local_db: Any = None) -> TauEnvironment:
    if domain in LOCAL_DOMAINS:
        return LocalEnvironment(local_db)
    reason = unavailable_reason(domain)
    if reason is not None:
        raise EnvironmentError_("environment_unavailable", reason)
    python = interpreter()
    assert python is not None
    return Tau2Environment(python)


# -- sr-bench's toy domain, in process ---------------------------------------------------------
class LocalEnvironment(TauEnvironment):
    def __init__(self, db: Any) -> None:
        if not isinstance(db, dict):
            raise EnvironmentError_("environment_error", "the mini domain's case carries no database")
        self.base = db
        self.env: MiniShop | None = None

    async def start(self, domain: str) -> EnvInfo:
        try:
            self.env = MiniShop(self.base)
        except ToolError as exc:
            raise EnvironmentError_("environment_error", str(exc)) from None
        return EnvInfo(engine="sr-bench-mini-v1", tools=self.env.tool_schemas())

    def _fresh(self, initial_state: WireJSON | None) -> MiniShop:
        env = MiniShop(self.base)
        data = ((initial_state or {}).get("initialization_data") or {}).get("agent_data")
        if data:
            env.db = _merge(env.db, data)
        for action in (initial_state or {}).get("initialization_actions") or []:
            env.run_function(action["func_name"], action.get("arguments") or {})
        return env

    async def reset(self, initial_state: WireJSON | None) -> None:
        try:
            self.env = self._fresh(initial_state)
        except (ToolError, KeyError, TypeError) as exc:
            raise EnvironmentError_("environment_error", f"initial state: {exc}") from None

    async def tool(self, requestor: Requestor, name: str | None, arguments: WireJSON) -> tuple[str, bool]:
        assert self.env is not None
        if requestor != "assistant":
            return "Error: the mini domain has no user tools", True
        return self.env.call(name, arguments)

    async def evaluate(self, criteria: Criteria, initial_state: WireJSON | None) -> EnvEvaluation:
        assert self.env is not None
        gold = self._fresh(initial_state)
        gold_errors = []
        for action in criteria.actions or []:
            _content, error = gold.call(action.name, action.arguments or {})
            if error:
                gold_errors.append(action.action_id or action.name)
        checks = []
        for a in criteria.env_assertions or []:
            try:
                met = a.func_name is not None and \
                    self.env.run_function(a.func_name, a.arguments or {}) == a.assert_value
            except (ToolError, TypeError, KeyError):
                met = False
            checks.append(AssertionCheck(func_name=a.func_name, met=bool(met)))
        return EnvEvaluation(predicted=DbHashes(agent=self.env.db_hash(), user=None),
                             gold=DbHashes(agent=gold.db_hash(), user=None),
                             env_assertions=checks, gold_action_errors=gold_errors)


def _merge(base: Any, update: Any) -> Any:
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for k, v in update.items():
            out[k] = _merge(base.get(k), v)
        return out
    return update


# -- tau2 in its own interpreter -----------------------------------------------------------------
class Tau2Environment(TauEnvironment):
    """A child process of the pinned interpreter running tau2_child.py; one per cell."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.proc: asyncio.subprocess.Process | None = None
        self._log: Any = None

    async def _request(self, op: WireJSON, timeout: float = OP_TIMEOUT_S) -> WireJSON:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise EnvironmentError_("environment_error", "the tau2 child is not running")
        try:
            proc.stdin.write(json.dumps(op).encode() + b"\n")
            await proc.stdin.drain()
            line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        except TimeoutError:
            raise EnvironmentError_("environment_timeout", f"tau2 child: no answer to {op['op']} in {timeout:.0f}s"
                                    ) from None
        except (BrokenPipeError, ConnectionResetError):
            line = b""
        if not line:
            raise EnvironmentError_("environment_error", f"the tau2 child exited during {op['op']}: {self._tail()}")
        try:
            reply = json.loads(line)
        except ValueError:
            raise EnvironmentError_("environment_error", f"tau2 child: unreadable reply to {op['op']}") from None
        if not isinstance(reply, dict) or not reply.get("ok"):
            why = reply.get("error") if isinstance(reply, dict) else "not an object"
            raise EnvironmentError_("environment_error", f"tau2 child, {op['op']}: {why}")
        return reply

    def _tail(self) -> str:
        try:
            self._log.seek(0)
            lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
            return " | ".join(lines[-3:])[-400:] or "no output"
        except (OSError, ValueError, AttributeError):
            return "no output"

    async def start(self, domain: str) -> EnvInfo:
        self._log = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and k != "HF_TOKEN"}
        env["PYTHONNOUSERSITE"] = "1"
        try:
            self.proc = await asyncio.create_subprocess_exec(
                self.python, "-I", str(CHILD), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=self._log, env=env, limit=64 * 1024 * 1024, start_new_session=True)
        except OSError as exc:
            raise EnvironmentError_("environment_unavailable", f"cannot start {self.python}: {exc}") from None
        got = await self._request({"op": "start", "domain": domain}, START_TIMEOUT_S)
        return EnvInfo(engine=f"tau2=={got.get('tau2_version')} (python {got.get('python')})",
                       tools=got["tools"], user_tools=got.get("user_tools") or [],
                       policy_sha256=got.get("policy_sha256"), env_sha256=got.get("env_sha256") or {})

    async def reset(self, initial_state: WireJSON | None) -> None:
        await self._request({"op": "reset", "initial_state": initial_state})

    async def tool(self, requestor: Requestor, name: str | None, arguments: WireJSON) -> tuple[str, bool]:
        got = await self._request({"op": "tool", "requestor": requestor, "name": name, "arguments": arguments})
        return str(got.get("content")), bool(got.get("error"))

    async def evaluate(self, criteria: Criteria, initial_state: WireJSON | None) -> EnvEvaluation:
        got = await self._request({"op": "evaluate", "criteria": criteria.wire(), "initial_state": initial_state})
        return EnvEvaluation(**{k: got[k] for k in ("predicted", "gold", "env_assertions", "gold_action_errors")})

    async def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.write(b'{"op": "close"}\n')
                    await proc.stdin.drain()
                    proc.stdin.close()
                await asyncio.wait_for(proc.wait(), 5)
            except (TimeoutError, OSError):      # no clean exit: killed below
                pass
            finally:                              # also on the cell's cancellation
                _kill(proc)
        if self._log is not None:
            self._log.close()
            self._log = None


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            proc.kill()            # its own session: the child has nothing of its own running
        except ProcessLookupError:
            pass
