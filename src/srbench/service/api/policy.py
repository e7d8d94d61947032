"""What a named actor (one the Dashboard's proxy acts for) may put into a run: upstream's policy.

A named actor evaluates the operator's registered targets unchanged, under the operator's benchmark
options (judges, graders, sandbox limits). A manifest may still spell a target out inline when every
field it gives equals the registered one; anything else is a 403. A frozen plan is checked the same
way before it runs (a plan's hash proves only that it was not edited, not who wrote it): its subjects
and judges must be the registered targets, its benchmark options, grader versions, weights and
adapter versions those the operator's store gives now. The local operator is not restricted.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import JsonValue, ValidationError

from srbench.benchmarks import get as get_benchmark
from srbench.errors import Forbidden, SrBenchError
from srbench.schemas.plan import BenchmarkOptions, Plan, StoreOptions
from srbench.schemas.target import Target
from srbench.service.store import target_registry
from srbench.stages.plan.options import benchmark_option_problems

if TYPE_CHECKING:
    from srbench.service.app import Service

log = logging.getLogger("srbench.service")


def registry(service: Service) -> dict[str, Target]:
    """The registered targets by id. One stored before a check it fails now (an id ending in a newline, which
    an older sr-bench let through) is left out and named in the service's log, not a 500 on every read."""
    target_registry.sync(service)        # the store's targets.json (upstream's `target register`)
    out: dict[str, Target] = {}
    for name, value in service.journal.list_refs("target"):
        try:
            out[name] = Target.model_validate(value)
        except ValidationError as exc:
            log.warning("registered target %r left out: it does not validate (%s); register it again with a valid "
                        "entry", name, exc.errors()[0]["msg"])
    return out


def _differs(known: Target, given: Mapping[str, JsonValue]) -> bool:
    """Whether an inline target (wire JSON) gives a field another value than the registered one has."""
    registered = known.model_dump(mode="json")
    return any(registered.get(k) != v for k, v in given.items())


def resolve_inline(manifest: Mapping[str, JsonValue], targets: dict[str, Target]) -> dict[str, JsonValue]:
    """The manifest (wire JSON) with inline targets replaced by references to the registered targets they
    repeat."""
    out = dict(manifest)
    entries = manifest.get("targets")
    if isinstance(entries, list):
        resolved: list[JsonValue] = []
        for entry in entries:
            if isinstance(entry, dict) and "kind" in entry:
                known = targets.get(str(entry.get("id")))
                if known is None:
                    raise Forbidden("Target must be registered by the server operator", code="unregistered_target")
                if _differs(known, entry):
                    raise Forbidden("Dashboard cannot override a registered target", code="target_override")
                entry = {"id": entry["id"]}
            resolved.append(entry)
        out["targets"] = resolved
    auxiliary = manifest.get("auxiliary_targets") or {}
    for key, target in (auxiliary.items() if isinstance(auxiliary, dict) else ()):   # else: the manifest's error
        known = targets.get(key)
        if known is None or not isinstance(target, dict) or _differs(known, target):
            raise Forbidden("Auxiliary target must match the server registry", code="target_override")
    return out


def _expected_options(plan: Plan, options: StoreOptions, targets: dict[str, Target]
                      ) -> dict[str, BenchmarkOptions]:
    """The benchmark options the operator's store gives this plan now (planning's own function, given the
    plan's limits and cost policy)."""
    benchmarks = plan.dataset.benchmarks or []
    adapters = {b: get_benchmark(b) for b in benchmarks}

    def resolve(tid: str) -> Target | None:
        return targets.get(tid)
    subjects = {pt.target.id for pt in plan.targets}
    _, _, frozen = benchmark_option_problems(benchmarks, adapters, options, resolve, plan, subjects)
    return frozen


def check_plan(plan: Plan, targets: dict[str, Target], options: StoreOptions) -> None:
    """Refuse (403) a frozen plan a named actor may not run."""
    for pt in [*plan.targets, *plan.auxiliary_targets.values()]:
        tid = pt.target.id
        if tid not in targets or targets[tid].model_dump(mode="json") != pt.target.model_dump(mode="json"):
            raise Forbidden(f"Target {tid} must be the server operator's registered target, unchanged",
                            code="target_override")
    if plan.mode == "preview":
        return
    try:
        expected = _expected_options(plan, options, targets)
    except (SrBenchError, ValueError):            # ValueError: an entry no frozen plan could hold
        expected = None
    given = {b: o.model_dump(mode="json") for b, o in plan.benchmark_options.items()}
    if expected is None or given != {b: o.model_dump(mode="json") for b, o in expected.items()}:
        raise Forbidden("Benchmark harness options are configured by the server operator", code="options_override")
    for b in plan.dataset.benchmarks or []:
        bench = get_benchmark(b)
        pinned = expected.get(b)
        grader = (pinned.grader_version if pinned is not None else None) or bench.grader_version
        if (plan.grader_versions.get(b) != grader or plan.benchmark_weights.get(b) != bench.weight
                or plan.adapter_versions.get(b) != bench.adapter_version):
            raise Forbidden(f"{b}: graders, weights and adapter versions are the registered ones",
                            code="options_override")
