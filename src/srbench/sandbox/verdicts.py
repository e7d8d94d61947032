"""From the supervisor's report of one child to a verdict.

Verdicts: ``passed``, ``failed`` (nothing to run, or the program ended its test process before any
verdict), ``wrong_answer``, ``time_limit`` (per-test alarm, the child's wall or CPU limit, or the
whole sandbox's wall limit), ``runtime_error``, ``memory_limit`` (a SIGKILL that was not the
supervisor's wall-limit kill, i.e. the memory group's OOM killer, or ``MemoryError``), ``sandbox_error`` (the sandbox itself failed: never the
program's fault, never counted as an answer, and never memoised).
"""

from __future__ import annotations

import signal
from typing import Literal, get_args

from srbench.sandbox.base import SandboxFault
from srbench.schemas.wire import WireJSON

SandboxVerdict = Literal["passed", "failed", "wrong_answer", "time_limit", "runtime_error", "memory_limit",
                         "sandbox_error"]
VERDICTS: tuple[SandboxVerdict, ...] = get_args(SandboxVerdict)
_LCB_CODES: dict[object, SandboxVerdict] = {-2: "wrong_answer", -3: "time_limit", -4: "runtime_error"}


def _killed(job: WireJSON, oom: bool) -> SandboxVerdict | None:
    if job.get("timed_out"):
        return "time_limit"
    sig = job.get("signal")
    if sig == signal.SIGXCPU:
        return "time_limit"
    if sig == signal.SIGKILL:       # only the OOM killer sends it: the supervisor's own kill sets timed_out
        return "memory_limit"
    if sig is not None:
        return "runtime_error"
    return None


def lcb_verdict(job: WireJSON, oom: bool = False) -> tuple[SandboxVerdict, WireJSON]:
    """(verdict, details) of one LiveCodeBench child (lcb_child.py)."""
    if job.get("spawn_error"):
        raise SandboxFault(f"the sandbox could not start the test process: {job['spawn_error']}")
    finals = [r for r in job.get("results", []) if r.get("final")]
    if finals:
        final = finals[-1]
        if final.get("passed") is True:
            return "passed", {"results": final.get("results")}
        verdict = _LCB_CODES.get(final.get("error_code"), "runtime_error")
        if verdict == "runtime_error" and "MemoryError" in str(final.get("error", "")):
            verdict = "memory_limit"
        keep = {k: final[k] for k in ("error_code", "error", "error_message", "test", "during") if k in final}
        return verdict, {"results": final.get("results"), **keep}
    killed = _killed(job, oom)
    done = sum(1 for r in job.get("results", []) if r.get("result") is True)
    if killed:
        return killed, {"tests_passed_before": done}
    return "failed", {"reason": f"the program ended the test process (exit {job.get('exit')}) before a verdict",
                      "tests_passed_before": done}


def script_verdict(job: WireJSON, oom: bool = False) -> tuple[SandboxVerdict, WireJSON]:
    """(verdict, details) of one test script (script_child.py): passed iff it exited with code 0."""
    if job.get("spawn_error"):
        raise SandboxFault(f"the sandbox could not start the test process: {job['spawn_error']}")
    tail = job.get("stderr_tail", "")
    details = {"exit": job.get("exit"), "stderr_tail": tail[-1500:]}
    if job.get("exit") == 0 and not job.get("timed_out"):
        return "passed", details
    killed = _killed(job, oom)
    if killed:
        return killed, details
    if "MemoryError" in tail:
        return "memory_limit", details
    if "AssertionError" in tail:
        return "wrong_answer", details
    return "runtime_error", details
