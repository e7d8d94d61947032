"""The benchmark registry: the one place that names the nine benchmarks of sr-bench 1.0, and the plugins.

To add a benchmark, write one module with a `Benchmark` subclass and add one line to `_BENCHMARKS`
(plus its module to the import). A third party's benchmark is a plugin instead: an installed package
exposing a `Benchmark` through the ``srbench.benchmarks`` entry-point group (`plugins.py`), found by `get`,
listed by the catalog with its package and version, never one of the nine (`all_benchmarks`, the full score
and the catalog's totals are the nine's).
Everything else (catalog, totals, preparation, grading) reads the registry, never a list of ids.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from pydantic import JsonValue

from srbench import VERSION
from srbench.benchmarks import (
    arc_agi_2,
    gpqa_diamond,
    hle,
    livecodebench,
    mmlu_pro,
    scicode,
    simpleqa_verified,
    tau3,
    terminal_bench,
)
from srbench.benchmarks import plugins as plugin_loader
from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.errors import InvalidInput
from srbench.schemas.dataset import PROFILES

if TYPE_CHECKING:
    from srbench.schemas.plan import Plan

# CAT-1 order.
_BENCHMARKS: tuple[Benchmark, ...] = (
    mmlu_pro.MmluPro(),
    gpqa_diamond.GpqaDiamond(),
    hle.Hle(),
    livecodebench.LiveCodeBench(),
    scicode.SciCode(),
    terminal_bench.TerminalBench21(),
    simpleqa_verified.SimpleQaVerified(),
    arc_agi_2.ArcAgi2(),
    tau3.Tau3(),
)

REGISTRY: dict[str, Benchmark] = {b.id: b for b in _BENCHMARKS}
if len(REGISTRY) != len(_BENCHMARKS):
    raise RuntimeError("two registered benchmarks share an id")

WEIGHTS_NOTE = (
    "Weights are percent of the full sr-bench score and sum to 100; a full score needs all nine "
    "benchmarks. A capability slice reports per-benchmark results only and is never presented as an "
    "upstream full-set result (CAT-2)."
)


_plugins: plugin_loader.Loaded | None = None
_plugins_lock = threading.Lock()


def plugins() -> plugin_loader.Loaded:
    """The installed plugin benchmarks (loaded once, on first use)."""
    global _plugins
    with _plugins_lock:
        if _plugins is None:
            _plugins = plugin_loader.load(set(REGISTRY))
        return _plugins


def reload_plugins() -> plugin_loader.Loaded:
    """Look for plugins again (after a package was installed in this process, e.g. a test's)."""
    global _plugins
    with _plugins_lock:
        _plugins = None
    return plugins()


def get(benchmark_id: str) -> Benchmark:
    """The registered benchmark or plugin `benchmark_id`; InvalidInput naming the known ids otherwise."""
    try:
        return REGISTRY[benchmark_id]
    except (KeyError, TypeError):
        pass
    found = plugins().benchmarks
    if isinstance(benchmark_id, str) and benchmark_id in found:
        return found[benchmark_id]
    known = ", ".join([*REGISTRY, *(f"{b} (plugin)" for b in found)])
    raise InvalidInput(f"unknown benchmark {benchmark_id!r}; known: {known}") from None


def multi_call_benchmarks(plan: Plan) -> set[str]:
    """The plan's benchmarks whose cells are conversations under its frozen options (here, not in dispatch:
    the report reads it too, and the report-rows worker process need not load the HTTP transport)."""
    return {b for b in plan.dataset.benchmarks if get(b).is_multi_call(plan.options_for(b))}


def is_plugin(benchmark_id: str) -> bool:
    """Whether `benchmark_id` is an installed plugin's (not one of the nine)."""
    return benchmark_id not in REGISTRY and benchmark_id in plugins().benchmarks


def all_benchmarks() -> list[Benchmark]:
    """The nine benchmarks of the suite in catalog order (plugins: `every_benchmark`)."""
    return list(REGISTRY.values())


def every_benchmark() -> list[Benchmark]:
    """The nine, then every installed plugin benchmark."""
    return [*REGISTRY.values(), *plugins().benchmarks.values()]


def _totals(benchmarks: list[Benchmark]) -> dict[str, int]:
    return {p: sum(b.profiles[p] for b in benchmarks) for p in PROFILES}


def catalog() -> dict[str, JsonValue]:
    """The CAT-1 catalog: suite version, the nine entries and per-profile task totals."""
    entries = all_benchmarks()
    totals: dict[str, JsonValue] = {**_totals(entries), "available": {**_totals([b for b in entries if b.available])}}
    found = plugins()
    listed: list[JsonValue] = [b.catalog_entry().model_dump(exclude_unset=True) for b in entries]
    listed += [b.catalog_entry().model_copy(update={"plugin": found.origins[b.id]}).model_dump(exclude_unset=True)
               for b in found.benchmarks.values()]
    note = WEIGHTS_NOTE + (" A plugin benchmark's weight counts only within a selected subset: it is never part "
                           "of the full score." if found.benchmarks else "")
    out: dict[str, JsonValue] = {"version": VERSION, "benchmarks": listed, "totals": totals, "weights_note": note}
    if found.problems:
        out["plugin_problems"] = list(found.problems)
    return out


__all__ = ["REGISTRY", "Benchmark", "Grade", "SourcePin", "all_benchmarks", "catalog", "every_benchmark", "get",
           "is_plugin", "plugins", "reload_plugins"]
