"""Per-execution cgroups for the bubblewrap backend: memory (swap included), pids and CPU quota.

cgroup v1 (one hierarchy per controller under ``/sys/fs/cgroup/<controller>``) and v2 (one unified
hierarchy with ``cgroup.controllers``) are both handled; where neither is writable (no root, a
read-only cgroupfs) `create` returns None and the caller says the limits are rlimits only. A process
joins by writing its pid to every ``cgroup.procs`` path before it execs the sandbox.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT = "sr-bench"


@dataclass
class Cgroup:
    version: int
    dirs: list[Path]
    procs: list[Path] = field(default_factory=list)

    def oom_killed(self) -> bool:
        """True when the kernel's OOM killer fired inside this group."""
        for d in self.dirs:
            for name in ("memory.oom_control", "memory.events"):
                p = d / name
                if p.is_file():
                    for line in _read(p).splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                            return True
        return False

    def remove(self) -> None:
        """Kill what is left and remove the directories (bounded retries; leftovers are harmless)."""
        for d in self.dirs:
            kill = d / "cgroup.kill"
            if kill.exists():
                _write(kill, "1")
            for pid in _read(d / "cgroup.procs").split():
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError, PermissionError):
                    pass
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


def _write(p: Path, value: str) -> bool:
    try:
        p.write_text(value)
        return True
    except OSError:
        return False


def _v1_dir(controller: str) -> Path | None:
    base = ROOT / controller
    if not (base / "cgroup.procs").is_file():
        return None
    parent = base / PARENT
    try:
        parent.mkdir(exist_ok=True)
    except OSError:
        return None
    return parent


def create(memory_mb: int, pids: int, cpus: float) -> Cgroup | None:
    """A fresh group with these limits, or None when cgroups cannot be written here."""
    name = "x" + secrets.token_hex(6)
    if (ROOT / "cgroup.controllers").is_file():
        return _create_v2(name, memory_mb, pids, cpus)
    made: list[Path] = []
    wanted = {"memory": [("memory.limit_in_bytes", str(memory_mb << 20)),
                         ("memory.memsw.limit_in_bytes", str(memory_mb << 20))],
              "pids": [("pids.max", str(pids))],
              "cpu": [("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", str(int(cpus * 100000)))]}
    for controller, settings in wanted.items():
        parent = _v1_dir(controller)
        if parent is None:
            continue
        d = parent / name
        try:
            d.mkdir()
        except OSError:
            continue
        ok = True
        for key, value in settings:
            if (d / key).exists() and not _write(d / key, value) and key != "memory.memsw.limit_in_bytes":
                ok = False
        if not ok:
            d.rmdir()
            continue
        made.append(d)
    if not any(d.parent.parent.name == "memory" for d in made):
        for d in made:
            d.rmdir()
        return None
    return Cgroup(1, made, [d / "cgroup.procs" for d in made])


def _create_v2(name: str, memory_mb: int, pids: int, cpus: float) -> Cgroup | None:
    parent = ROOT / PARENT
    try:
        parent.mkdir(exist_ok=True)
        _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
        d = parent / name
        d.mkdir()
    except OSError:
        return None
    if not _write(d / "memory.max", str(memory_mb << 20)):
        d.rmdir()
        return None
    _write(d / "memory.swap.max", "0")
    _write(d / "pids.max", str(pids))
    _write(d / "cpu.max", f"{int(cpus * 100000)} 100000")
    return Cgroup(2, [d], [d / "cgroup.procs"])
