"""The store's benchmark options (DEP-1), written only by the service: `sr-bench options set` sends a
benchmark's keys to set and unset, the service checks them and rewrites `<store>/benchmark-options.json`
whole (a temporary file beside it, then renamed). Planning reads the file as before
(`discovery.read_benchmark_options`); what is still missing for a benchmark, `setup` says.

A key is checked here as far as it can be on its own (the benchmark exists, the key is one it reads, the
value has the right type and an accepted value); whether a pinned target is registered and whether an
entry is complete are planning's checks (a judge may be set before its grader version).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue

from srbench.benchmarks import REGISTRY
from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.code import CodeBenchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.discovery import read_benchmark_options
from srbench.errors import InvalidInput, NotFound, SrBenchError

FILE = "benchmark-options.json"
ROLE_KEYS = ("judge", "user_simulator", "scaffolding")       # pinned targets: ids, checked when planning
_lock = threading.Lock()


def known_keys(bench: Benchmark) -> set[str]:
    """The keys of `bench`'s entry that sr-bench reads."""
    if isinstance(bench, CodeBenchmark):
        return {"grader_version", *bench.default_options}
    keys = {*bench.conversation_roles, *bench.option_keys}
    if isinstance(bench, JudgedBenchmark):
        keys |= {"judge", "grader_version", "judge_response_format"}
    return keys | ({"grading"} if bench.id == "terminal-bench-2.1" else set())


def check_entry(bench: Benchmark, entry: Mapping[str, JsonValue], changed: set[str]) -> None:
    """Raise InvalidInput naming the first key of `changed` whose value `bench` refuses."""
    unknown = sorted(changed - known_keys(bench))
    if unknown:
        raise InvalidInput(f"{bench.id} has no option {', '.join(unknown)}; its options: "
                           f"{', '.join(sorted(known_keys(bench))) or 'none'}")
    for key in sorted(changed & {*ROLE_KEYS, *bench.conversation_roles}):
        if not isinstance(entry[key], str) or not entry[key]:
            raise InvalidInput(f"{bench.id}.{key} must be a registered target id (a string)")
    if isinstance(bench, CodeBenchmark):
        bench.options(dict(entry))
        return
    grader = entry.get("grader_version")
    if isinstance(bench, JudgedBenchmark) and "grader_version" in changed:
        accepted = getattr(bench, "judge_graders", (bench.grader_version,))
        if grader not in accepted:
            raise InvalidInput(f"{bench.id}.grader_version must be one of {', '.join(repr(g) for g in accepted)}, "
                               f"got {grader!r}")
    if isinstance(bench, JudgedBenchmark) and "judge_response_format" in changed and isinstance(grader, str):
        bench.judge_response_format(grader, entry.get("judge_response_format"))
    if changed & {*bench.option_keys, "grading"}:
        bench.freeze_options(entry)


def update(store_dir: Path, benchmark: str, set_: Mapping[str, JsonValue], unset: list[str]
           ) -> dict[str, JsonValue]:
    """Set and unset keys of one benchmark's entry; returns the whole file as written."""
    bench = REGISTRY.get(benchmark)
    if bench is None:
        raise NotFound(f"no benchmark {benchmark!r} (`sr-bench catalog` lists them)")
    both = sorted(set(set_) & set(unset))
    if both:
        raise InvalidInput(f"{', '.join(both)}: both set and unset; choose one")
    with _lock:
        options = dict(read_benchmark_options(store_dir))
        current = options.get(benchmark)
        entry = {k: v for k, v in (current.items() if isinstance(current, dict) else ()) if k not in unset}
        entry.update(set_)
        try:
            check_entry(bench, entry, set(set_))
        except SrBenchError as exc:
            raise InvalidInput(exc.message) from None
        if entry:
            options[benchmark] = entry
        else:
            options.pop(benchmark, None)
        _write(store_dir / FILE, options)
    return options


def _write(path: Path, options: Mapping[str, JsonValue]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(options, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
