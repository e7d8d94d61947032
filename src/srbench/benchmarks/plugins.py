"""Benchmark plugins (issue 39, item 7): a third-party benchmark is an installed package exposing sr-bench's own
adapter contract (`benchmarks.base.Benchmark`) through an entry point in the ``srbench.benchmarks`` group.

An entry point names a `Benchmark` subclass, an instance of one, or a zero-argument factory returning one; only
the packages installed in the service's Python environment supply them, so a manifest selects a plugin by its
benchmark id, never by code. A plugin is never one of the nine: it is never counted in the full sr-bench score
(`stages.report.full_score`) nor in the catalog's totals, and its id may not be one of theirs. A plugin that
cannot be loaded, or does not keep the contract, is left out and named (`Loaded.problems`, on the catalog),
never a reason for the service to fail. Loaded once, on first use (docs/benchmarks.md#plugins).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points

from srbench.benchmarks.base import Benchmark
from srbench.schemas.catalog import CatalogPlugin

GROUP = "srbench.benchmarks"
ID = re.compile(r"[a-z0-9][a-z0-9.-]{0,62}")


@dataclass
class Loaded:
    """The plugins found: each benchmark by id with where it came from, and each entry point left out, with why."""

    benchmarks: dict[str, Benchmark] = field(default_factory=dict)
    origins: dict[str, CatalogPlugin] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load(core: set[str]) -> Loaded:
    """Every benchmark the installed packages expose in `GROUP`; `core` holds the nine ids (never overridden)."""
    out = Loaded()
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        origin = CatalogPlugin(package=ep.dist.name if ep.dist else "?", version=ep.dist.version if ep.dist else "?",
                               entry_point=f"{ep.name} = {ep.value}")
        try:
            bench = _benchmark(ep)
        except Exception as exc:  # noqa: BLE001 - a third party's import or factory: named, never fatal
            out.problems.append(f"plugin {origin.entry_point} ({origin.package} {origin.version}) was not loaded: "
                                f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}")
            continue
        problem = _broken(bench, core, out.benchmarks)
        if problem or not isinstance(bench, Benchmark):
            out.problems.append(f"plugin {origin.entry_point} ({origin.package} {origin.version}) was not loaded: "
                                f"{problem}")
            continue
        out.benchmarks[bench.id] = bench
        out.origins[bench.id] = origin
    return out


def _benchmark(ep: EntryPoint) -> object:
    value = ep.load()
    if isinstance(value, type):             # a class: only a Benchmark subclass is made
        return value() if issubclass(value, Benchmark) else value
    return value() if callable(value) and not isinstance(value, Benchmark) else value


def _broken(bench: object, core: set[str], found: dict[str, Benchmark]) -> str | None:
    """Why `bench` does not keep the contract (None: it does)."""
    if not isinstance(bench, Benchmark):
        name = bench.__name__ if isinstance(bench, type) else type(bench).__name__
        return f"it gives {name}, not a srbench.benchmarks.base.Benchmark"
    bid = getattr(bench, "id", None)
    if not isinstance(bid, str) or not ID.fullmatch(bid):
        return f"its id {bid!r} is not lower-case letters, digits, '.' and '-'"
    if bid in core:
        return f"its id {bid} is one of the nine benchmarks'; a plugin never replaces one"
    if bid in found:
        return f"another plugin already gives benchmark {bid}"
    missing = [a for a in ("title", "capability", "kind", "profiles", "source") if not hasattr(bench, a)]
    if missing:
        return f"it does not set {', '.join(missing)}"
    weight = getattr(bench, "weight", None)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
        return f"its weight {weight!r} is not a positive integer (its weight within a selected subset)"
    return None
