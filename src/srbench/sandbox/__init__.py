"""Offline code grading: one small interface (`Sandbox`), two backends (Docker, bubblewrap).

``open_sandbox()`` picks the backend: ``SR_BENCH_SANDBOX`` = ``docker`` | ``bwrap`` | ``auto``
(default: Docker when an engine answers at ``DOCKER_HOST`` and the build has an image, else
bubblewrap; ``ray``, never picked by ``auto``: each execution a task on a Ray cluster's worker
hosts, `ray_backend`). Every execution has no network, a read-only root, a writable tmpfs scratch only, uid
10001, memory / pids / CPU / wall limits and capped output; one fresh sandbox per problem. Verdicts
(`verdicts`) are passed / failed / wrong_answer / time_limit / runtime_error / memory_limit /
sandbox_error, and a sandbox fault (`SandboxFault`) is never the program's failure. The `Receipt`
(backend, rootfs and image digests, package versions, limits) goes with every grade.
"""

from __future__ import annotations

import os
from pathlib import Path

from srbench.sandbox.base import Limits, Receipt, Sandbox, SandboxFault, SandboxUnavailable
from srbench.sandbox.paths import sandbox_dir

BACKENDS = ("docker", "bwrap")


def open_sandbox(backend: str | None = None, directory: Path | None = None) -> Sandbox:
    """The sandbox to grade with; SandboxUnavailable saying what is missing otherwise."""
    choice = (backend or os.environ.get("SR_BENCH_SANDBOX") or "auto").strip().lower()
    where = Path(directory) if directory is not None else sandbox_dir()
    if choice not in (*BACKENDS, "auto", "ray"):
        raise SandboxUnavailable(f"SR_BENCH_SANDBOX must be docker, bwrap or auto (or ray, with "
                                 f"SR_BENCH_RAY_ADDRESS), not {choice!r}")
    if choice == "ray":
        # deferred: a backend's module (and its packages) loads only when that backend is opened
        from srbench.sandbox.ray_backend import RaySandbox

        return RaySandbox()
    if choice == "docker":
        # deferred: a backend's module (and its packages) loads only when that backend is opened
        from srbench.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(where)
    if choice == "bwrap":
        # deferred: a backend's module (and its packages) loads only when that backend is opened
        from srbench.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(where)
    problems = []
    for name in BACKENDS:
        try:
            return open_sandbox(name, where)
        except SandboxUnavailable as exc:
            problems.append(f"{name}: {exc.message}")
    raise SandboxUnavailable("no grading sandbox on this host — " + "; ".join(problems))


__all__ = ["BACKENDS", "Limits", "Receipt", "Sandbox", "SandboxFault", "SandboxUnavailable", "open_sandbox",
           "sandbox_dir"]
