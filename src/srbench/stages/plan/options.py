"""Plan-time checks of the store's benchmark options (DEP-1, DEP-3): each judged benchmark's pinned
judge and grader version, each code benchmark's grading options, then each multi-call benchmark's own
settings and conversation roles (stages/plan/roles.py), frozen as the plan's `BenchmarkOptions`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.code import CodeBenchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.errors import SrBenchError
from srbench.schemas.plan import BenchmarkOptions, Manifest, Plan, PlannedTarget, StoreOptions
from srbench.schemas.target import Target
from srbench.stages.plan.roles import pinned_auxiliary, role_problems


def benchmark_option_problems(benchmarks: list[str], adapters: Mapping[str, Benchmark], options: StoreOptions,
                              resolve_target: Callable[[str], Target | None], manifest: Manifest | Plan,
                              subjects: set[str]
                              ) -> tuple[list[str], dict[str, PlannedTarget], dict[str, BenchmarkOptions]]:
    """(problems, auxiliary targets, frozen benchmark_options) of a live or replay plan: the judges, then
    each benchmark's own options and conversation roles, under the limits and cost policy of `manifest`
    (or of a frozen plan: the service's actor policy rebuilds a plan's options with this same function)."""
    problems, aux, frozen = judge_problems(benchmarks, adapters, options, resolve_target, manifest, subjects)
    rp, role_aux, role_options = role_problems(benchmarks, adapters, options, resolve_target, manifest.limits,
                                               manifest.cost_policy, subjects)
    aux.update(role_aux)
    for b, entry in role_options.items():
        frozen[b] = (frozen[b].model_copy(update=entry.model_dump(exclude_unset=True)) if b in frozen else entry)
    return problems + rp, aux, frozen


def judge_problems(benchmarks: list[str], adapters: Mapping[str, Benchmark], options: StoreOptions,
                   resolve_target: Callable[[str], Target | None], manifest: Manifest | Plan, subject_ids: set[str]
                   ) -> tuple[list[str], dict[str, PlannedTarget], dict[str, BenchmarkOptions]]:
    """DEP-1/DEP-3: every judged benchmark needs a pinned judge and grader_version in the store's
    benchmark-options.json, and that judge a registered target. Returns (problems, aux, options)."""
    problems: list[str] = []
    aux: dict[str, PlannedTarget] = {}
    frozen: dict[str, BenchmarkOptions] = {}
    for b in benchmarks:
        bench = adapters.get(b)
        opt = options.get(b)
        if isinstance(bench, CodeBenchmark):    # code grading options (needs_sandbox), frozen
            if opt and not isinstance(opt, dict):
                problems.append(f"benchmark-options {b} must be a JSON object of grading options")
                continue
            try:
                grading = bench.options(opt if isinstance(opt, dict) else None)
            except SrBenchError as exc:
                problems.append(exc.message)
                continue
            frozen[b] = BenchmarkOptions(grader_version=bench.grader_version, grading=dict(grading))
            continue
        if not isinstance(bench, JudgedBenchmark):      # needs_judge
            continue
        hint = (f"pin one with `sr-bench options set {b} judge=<target id> grader_version={bench.grader_version}` "
                "(the store's benchmark-options.json, DEP-1)")
        if not isinstance(opt, dict) or not opt.get("judge"):
            problems.append(f"{b} needs a pinned judge: {hint}")
            continue
        accepted = getattr(bench, "judge_graders", (bench.grader_version,))
        grader = opt.get("grader_version")
        if not isinstance(grader, str) or grader not in accepted:
            problems.append(f"{b}: benchmark-options grader_version must be one of "
                            f"{', '.join(repr(g) for g in accepted)}, got {grader!r}")
            continue
        entry = BenchmarkOptions(judge=str(opt["judge"]), grader_version=grader)
        if opt.get("judge_response_format") is not None:
            try:
                fmt = bench.judge_response_format(grader, opt["judge_response_format"])
            except SrBenchError as exc:
                problems.append(exc.message)
                continue
            entry = BenchmarkOptions.model_validate({**entry.model_dump(exclude_unset=True),
                                                     "judge_response_format": fmt})
        judge_id = str(entry.judge)
        found, planned = pinned_auxiliary(b, "judge", judge_id, resolve_target, manifest.limits,
                                          manifest.cost_policy, subject_ids)
        problems += found
        if planned is None:
            continue
        aux[judge_id] = planned
        frozen[b] = entry
    return problems, aux, frozen


