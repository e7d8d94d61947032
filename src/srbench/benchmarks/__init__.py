"""The benchmark registry: the one place that names the nine benchmarks of sr-bench 1.0.

To add a benchmark, write one module with a `Benchmark` subclass and add one line to `_BENCHMARKS`
(plus its module to the import).
Everything else (catalog, totals, preparation, grading) reads the registry, never a list of ids.
"""

from __future__ import annotations

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
from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.errors import InvalidInput
from srbench.schemas.dataset import PROFILES

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


def get(benchmark_id: str) -> Benchmark:
    """The registered benchmark `benchmark_id`; InvalidInput naming the known ids otherwise."""
    try:
        return REGISTRY[benchmark_id]
    except (KeyError, TypeError):
        raise InvalidInput(f"unknown benchmark {benchmark_id!r}; known: {', '.join(REGISTRY)}") from None


def all_benchmarks() -> list[Benchmark]:
    """Every registered benchmark in catalog order."""
    return list(REGISTRY.values())


def _totals(benchmarks: list[Benchmark]) -> dict[str, int]:
    return {p: sum(b.profiles[p] for b in benchmarks) for p in PROFILES}


def catalog() -> dict[str, JsonValue]:
    """The CAT-1 catalog: suite version, the nine entries and per-profile task totals."""
    entries = all_benchmarks()
    totals: dict[str, JsonValue] = {**_totals(entries), "available": {**_totals([b for b in entries if b.available])}}
    return {
        "version": VERSION,
        "benchmarks": [b.catalog_entry().model_dump(exclude_unset=True) for b in entries],
        "totals": totals,
        "weights_note": WEIGHTS_NOTE,
    }


__all__ = ["REGISTRY", "Benchmark", "Grade", "SourcePin", "all_benchmarks", "catalog", "get"]
