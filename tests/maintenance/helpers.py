"""Helpers for the store maintenance tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


def settled(svc: Any, timeout: float = 10) -> None:
    """Wait until no run task is left: a run is terminal a moment before its task has recorded the final report."""
    deadline = time.monotonic() + timeout
    while svc.service.runs.tasks:
        assert time.monotonic() < deadline, f"run tasks still active: {sorted(svc.service.runs.tasks)}"
        time.sleep(0.02)


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """`fn()` run on a thread that must finish within `seconds`: a read that blocks (a FIFO opened as a file)
    fails the test instead of hanging the run. The thread's exception is raised here."""
    out: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 (re-raised on the test's thread)
            failed.append(exc)
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{fn} blocked for {seconds} s"
    if failed:
        raise failed[0]
    return out[0]
