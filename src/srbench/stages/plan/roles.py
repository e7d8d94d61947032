"""Plan-time checks of multi-call benchmarks (benchmarks/conversation.py): their frozen options and
the pinned target of every auxiliary role.

A benchmark's own settings (e.g. ARC-AGI-2's ``attempts``) come from the store's
benchmark-options.json through ``Benchmark.freeze_options``. A benchmark that is multi-call under
those options needs, for each of its ``conversation_roles`` (``user_simulator``, ``judge``,
``scaffolding``), ``benchmark_options[<id>][<role>]`` naming a registered single-model target that is
not a subject of the plan; it becomes an auxiliary target of the plan (its effective parameters
are its own pinned ones, as a judge's). A missing role is one line naming the benchmark and the role.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import JsonValue

from srbench.benchmarks.base import Benchmark
from srbench.errors import SrBenchError
from srbench.schemas.generation import GenerationParams
from srbench.schemas.plan import BenchmarkOptions, Limits, PlannedTarget, StoreOptions
from srbench.schemas.target import Target
from srbench.stages.plan.targets import target_problems


def effective_params(sampling: GenerationParams, target: Target, max_output_tokens: int) -> GenerationParams:
    """The request parameters a target is called with: greedy and the output cap, then the plan's
    sampling, then the target's own parameters."""
    return GenerationParams.model_validate({"temperature": 0, "max_tokens": max_output_tokens, **sampling.body(),
                                            **target.request_params})


def pinned_auxiliary(b: str, role: str, tid: str, resolve_target: Callable[[str], Target | None], limits: Limits,
                     cost_policy: str, subject_ids: set[str]) -> tuple[list[str], PlannedTarget | None]:
    """DEP-1: the target `tid` pinned for `role` (a judge, a user simulator …) of benchmark `b` — a
    registered single model that is not a subject of the plan. (problems, its planned entry or None)."""
    if tid in subject_ids:
        return [f"{b}: {role} {tid!r} is also a subject target; register it under its own id"], None
    target = resolve_target(tid)
    if target is None:
        return [f"{b}: {role} {tid!r} is not a registered target (the store's benchmark options name it): register "
                f"it (`sr-bench target register`) or name a registered one (`sr-bench options set {b} {role}=ID`)"], None
    if target.kind != "single":
        return [f"{b}: {role} {tid!r} must be a single model, not a router"], None
    problems = [p.replace("targets[-1]", role) for p in target_problems(target, limits, cost_policy, -1)]
    return problems, PlannedTarget(target=target, registered=True,
                                   effective_params=effective_params(GenerationParams(), target, limits.max_output_tokens))


def role_problems(benchmarks: list[str], adapters: Mapping[str, Benchmark], options: StoreOptions,
                  resolve_target: Callable[[str], Target | None], limits: Limits, cost_policy: str,
                  subject_ids: set[str]) -> tuple[list[str], dict[str, PlannedTarget], dict[str, BenchmarkOptions]]:
    """(problems, auxiliary targets by id, frozen option entries by benchmark) for the plan: each entry
    holds only the benchmark's own settings and its roles (its other fields unset)."""
    problems: list[str] = []
    aux: dict[str, PlannedTarget] = {}
    frozen: dict[str, dict[str, JsonValue]] = {}
    for b in benchmarks:
        bench = adapters.get(b)
        if bench is None:
            continue
        raw = options.get(b) if isinstance(options, dict) else None
        raw = raw if isinstance(raw, dict) else {}
        try:
            own = bench.freeze_options(raw)
        except SrBenchError as exc:
            problems.append(exc.message)
            continue
        if own:
            frozen[b] = dict(own)
        if not bench.is_multi_call(own):
            continue
        for role in bench.conversation_roles:
            if role not in BenchmarkOptions.model_fields:
                problems.append(f"{b}: conversation role {role!r} has no benchmark-options field")
                continue
            tid = raw.get(role)
            if not isinstance(tid, str) or not tid:
                problems.append(f"{b} needs a pinned {role}: `sr-bench options set {b} {role}=<target id>` (the "
                                "store's benchmark-options.json, DEP-1)")
                continue
            found, planned = pinned_auxiliary(b, role, tid, resolve_target, limits, cost_policy, subject_ids)
            problems += found
            if planned is None:
                continue
            aux[tid] = planned
            frozen.setdefault(b, {})[role] = tid
    return problems, aux, {b: BenchmarkOptions.model_validate(entry) for b, entry in frozen.items()}
