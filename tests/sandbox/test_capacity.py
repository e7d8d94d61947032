"""Issue 31 (item 3): the grading budget is the cores this process may use, cgroup quota included."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from srbench.sandbox import capacity


def _cgroup_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu_max: str | None) -> Path:
    root = tmp_path / "cg"
    leaf = root / "a" / "b"
    leaf.mkdir(parents=True)
    if cpu_max is not None:
        (root / "a" / "cpu.max").write_text(cpu_max)
    (leaf / "cpu.max").write_text("max 100000\n")
    proc = tmp_path / "proc-cgroup"
    proc.write_text("0::/a/b\n")
    real = Path.read_text

    def read_text(self: Path, *a, **kw) -> str:  # type: ignore[no-untyped-def]
        return real(proc if str(self) == "/proc/self/cgroup" else self, *a, **kw)
    monkeypatch.setattr(Path, "read_text", read_text)
    monkeypatch.delenv(capacity.ENV, raising=False)
    return root


def test_a_cgroup_quota_above_the_leaf_limits_the_cores(tmp_path, monkeypatch) -> None:
    root = _cgroup_v2(tmp_path, monkeypatch, "150000 100000\n")
    monkeypatch.setattr(capacity.os, "sched_getaffinity", lambda _: set(range(8)))
    assert capacity.available_cores(root) == 2            # 1.5 CPUs of quota: 2 jobs at once


def test_no_quota_means_the_affinity_mask(tmp_path, monkeypatch) -> None:
    root = _cgroup_v2(tmp_path, monkeypatch, None)
    monkeypatch.setattr(capacity.os, "sched_getaffinity", lambda _: {0, 3, 5})
    assert capacity.available_cores(root) == 3


def test_the_environment_overrides(monkeypatch) -> None:
    monkeypatch.setenv(capacity.ENV, "7")
    assert capacity.available_cores() == 7


def test_the_budget_never_runs_more_than_its_units() -> None:
    budget = capacity.Budget(2)
    running, peak = [0], [0]
    lock = threading.Lock()

    def job(units: float) -> None:
        with budget.hold(units):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1
    threads = [threading.Thread(target=job, args=(1,)) for _ in range(6)] + [threading.Thread(target=job, args=(9,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert budget.peak <= 2 and peak[0] <= 2 and budget.used == 0      # the 9-unit job ran alone, capped at 2
