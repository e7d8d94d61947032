"""Agent task resources the service owns on a Docker engine: the restart sweep and the run preflight.

At start the service names its store (`scope_for`) as the scope of every task container it makes
(``sandbox.task_container.set_scope``) and, in a background thread, removes the containers a
previous process of this store left behind (a kill -9 in the middle of an agent trial); other
stores' containers on the same engine are never touched. Before a live run is created, every
benchmark that can check its host (`Benchmark.preflight`, e.g. Terminal-Bench's engine and base
images) is asked; any problem refuses the run with one line per problem. Nothing here calls a model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import socket
import threading
from pathlib import Path
from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.sandbox import task_container
from srbench.schemas.dataset import Case

log = logging.getLogger("srbench.service")


def scope_for(store_dir: Path) -> str:
    """The label scope of a store's task containers: the id in its ``store.json`` (made once, when the
    store is created) and this host, so neither another store nor a copy of this one elsewhere shares it."""
    store_id = json.loads((Path(store_dir) / "store.json").read_text())["store_id"]
    return f"{store_id}@{hashlib.sha256(socket.gethostname().encode()).hexdigest()[:12]}"


def sweep_leftovers(store_id: str, *, wait: bool = False) -> threading.Thread | None:
    """Set the scope (`store_id`, see `scope_for`) and remove the scope's leftover task containers (in
    a thread; `wait` joins it). Without the docker package nothing happens."""
    task_container.set_scope(store_id)
    if importlib.util.find_spec("docker") is None:      # no docker package: no container can exist
        return None

    def work() -> None:
        try:
            removed = task_container.sweep(scope=store_id)
        except Exception as exc:  # noqa: BLE001 - no engine now: nothing of ours can be running there
            log.info("task container sweep skipped: %s", getattr(exc, "message", exc))
            return
        if removed:
            log.warning("removed %d task container(s) a previous service process of this store left behind",
                        len(removed))

    thread = threading.Thread(target=work, name="sr-bench-task-sweep", daemon=True)
    thread.start()
    if wait:
        thread.join()
    return thread


def benchmark_preflight(cases: list[Case]) -> list[str]:
    """Every problem the cases' benchmarks see on this host (empty: ready)."""
    by: dict[str, list[Case]] = {}
    for case in cases:
        by.setdefault(case.benchmark, []).append(case)
    problems: list[str] = []
    for bid in sorted(by):
        check: Any = getattr(get_benchmark(bid), "preflight", None)
        if callable(check):
            problems += check(by[bid])
    return problems
