"""A counting grading sandbox for tests that count sandbox runs: every execution is recorded (thread,
time). Alone, every job passes after `delay_s` (nothing is isolated, nothing runs); around a real
backend (`inner`), that backend runs it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from srbench.sandbox.base import Execution, Limits, Receipt, Sandbox


class CountingSandbox(Sandbox):
    name = "counting"

    def __init__(self, delay_s: float = 0.05, inner: Sandbox | None = None,
                 on_start: Callable[[int], None] | None = None) -> None:
        self.delay_s, self.inner, self.on_start = delay_s, inner, on_start
        self.runs: list[dict[str, Any]] = []
        self.running = 0
        self.started = 0          # executions begun so far (`on_start` gets each one's ordinal, from 1)
        self.peak = 0
        self._lock = threading.Lock()

    def receipt(self, limits: Limits | None = None) -> Receipt:
        if self.inner is not None:
            return self.inner.receipt(limits)  # type: ignore[call-arg]
        return Receipt(backend="counting", rootfs_digest="0" * 64, limits=(limits or Limits()).model_dump())

    def execute(self, stdin: bytes, limits: Limits, *, mounts: dict[str, str] | None = None) -> Execution:
        payload = json.loads(stdin)
        with self._lock:
            self.running += 1
            self.started += 1
            self.peak = max(self.peak, self.running)
            ordinal = self.started
        started = time.time()
        try:
            if self.on_start is not None:
                self.on_start(ordinal)
            if self.inner is not None:
                return self.inner.execute(stdin, limits, mounts=mounts)
            time.sleep(self.delay_s)
        finally:
            with self._lock:
                self.running -= 1
                self.runs.append({"thread": threading.current_thread().name, "started": started,
                                  "ended": time.time()})
        jobs = [{"exit": 0, "results": [{"final": True, "passed": True, "results": [True]}]} for _ in payload["jobs"]]
        out = f"{payload['marker']} {json.dumps({'jobs': jobs})}\n".encode()
        return Execution(0, out, b"", self.delay_s)
