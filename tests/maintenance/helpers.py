"""Helpers for the store maintenance tests."""

from __future__ import annotations

import time
from typing import Any


def settled(svc: Any, timeout: float = 10) -> None:
    """Wait until no run task is left: a run is terminal a moment before its task has recorded the final report."""
    deadline = time.monotonic() + timeout
    while svc.service.runs.tasks:
        assert time.monotonic() < deadline, f"run tasks still active: {sorted(svc.service.runs.tasks)}"
        time.sleep(0.02)
