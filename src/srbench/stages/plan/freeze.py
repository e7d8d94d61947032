"""Plan: validate a manifest and freeze it (RUN-1, RUN-6, TG-2, TG-4). No model is called.

The frozen plan pins the dataset (path, sha256, object digest), a snapshot of every target, the
effective request parameters per target (sampling defaults ⊕ manifest sampling ⊕ the target's
pinned request_params), limits, weights and grader versions. `plan_sha256` is the SHA-256 of the
canonical JSON of the plan without that field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.base import Benchmark
from srbench.cas import ObjectStore, canonical_json
from srbench.errors import IntegrityError, InvalidInput, NotFound
from srbench.schemas.dataset import Case, DatasetManifest, Evaluation, split_of
from srbench.schemas.generation import GenerationParams
from srbench.schemas.plan import (
    BenchmarkOptions,
    ExperimentLink,
    Manifest,
    Plan,
    PlanDataset,
    PlannedTarget,
    StoreOptions,
    TargetRef,
    UpstreamPlan,
)
from srbench.schemas.sources import SourceLabel
from srbench.schemas.target import Target
from srbench.stages.datasets import source_labels
from srbench.stages.datasets.build import decode_cases, read_dataset_file, read_dataset_object
from srbench.stages.datasets.exclusions import evaluation_notices
from srbench.stages.plan.options import benchmark_option_problems
from srbench.stages.plan.problems import fail, pydantic_problems
from srbench.stages.plan.roles import effective_params
from srbench.stages.plan.targets import target_problems
from srbench.stages.stats.stopping import statistics_problems
from srbench.targets import routers


def plan_sha256(plan: Plan | Mapping[str, JsonValue]) -> str:
    """The SHA-256 of the canonical JSON of the plan (a model, or its stored JSON) without its `plan_sha256`."""
    data = plan.as_json() if isinstance(plan, Plan) else plan
    body = {k: v for k, v in data.items() if k != "plan_sha256"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


class PlanLinks(BaseModel):
    """What a plan records beyond its manifest: the links upstream's wire fields ask for, checked by the
    service before planning (`service.wire.upstream.translate`) so the plan is frozen once, complete."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    experiment: ExperimentLink | None = Field(default=None, description="the experiment the run joins "
                                              "(checked: it exists and is the actor's)")
    baseline_run_id: str | None = Field(default=None, description="the baseline run a candidate plan was "
                                                                  "derived from")
    upstream: UpstreamPlan | None = Field(default=None, description="what a plan frozen by upstream's CLI "
                                                                    "carried beyond the manifest (checked)")


def build_plan(raw: object, store: ObjectStore, *, resolve_target: Callable[[str], Target | None],
               find_datasets: Callable[[str], list[DatasetManifest]],
               options: StoreOptions | None = None, links: PlanLinks | None = None) -> Plan:
    """Validate `raw` (a parsed manifest) and return the frozen plan, its `plan_sha256` set.

    `find_datasets(sha256)` gives every registered dataset with those bytes (several may share them,
    e.g. a `--limit` equal to the profile size); the one matching the manifest's profile and seed is
    used, a full profile before a custom subset, since the bytes are then the full profile.
    """
    if not isinstance(raw, dict):
        raise InvalidInput("manifest must be a mapping (YAML or JSON object)")
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        raise fail(pydantic_problems(exc)) from None
    problems: list[str] = []
    data, obj, registered = _dataset(store, manifest, find_datasets, problems)
    cases = decode_cases(data) if data is not None else []
    problems += _case_problems(manifest, cases, data is not None, registered)
    benchmarks = sorted({c.benchmark for c in cases})
    adapters = _adapters(manifest, cases, benchmarks, problems)
    planned = _planned_targets(manifest, resolve_target, problems)
    if manifest.mode != "preview":
        op, aux, bench_options = benchmark_option_problems(benchmarks, adapters, options or {}, resolve_target,
                                                           manifest, {pt.target.id for pt in planned})
        problems += op
    else:
        aux, bench_options = {}, {}
    primary = (manifest.statistics.primary_benchmarks or []) if manifest.statistics else []
    problems += [f"statistics.primary_benchmarks names {b}, which the dataset does not hold"
                 for b in primary if b not in benchmarks]
    problems += [f"limits.grading_concurrency names {b}, which is not a benchmark of this dataset graded in a "
                 "sandbox; remove it" for b in (manifest.limits.grading_concurrency or {})
                 if not getattr(adapters.get(b), "needs_sandbox", False)]
    if problems:
        raise fail(problems)
    dataset = _frozen_dataset(manifest, obj, registered, cases, benchmarks)
    plan = Plan(
        name=manifest.name, mode=manifest.mode, preview_context=manifest.preview_context,
        perturbation=manifest.perturbation, profile=manifest.profile,
        seed=manifest.seed, cost_policy=manifest.cost_policy, stop_on_systematic=manifest.stop_on_systematic,
        dataset=dataset, case_sha256=manifest.dataset.sha256, targets=planned, sampling=manifest.sampling, limits=manifest.limits,
        benchmark_weights={b: adapters[b].weight for b in benchmarks},
        adapter_versions={b: adapters[b].adapter_version for b in benchmarks},
        grader_versions={b: _grader(bench_options.get(b)) or adapters[b].grader_version for b in benchmarks},
        total=len(cases) * len(planned), auxiliary_targets=aux, benchmark_options=bench_options,
        notices=_notices(manifest, adapters, registered, dataset.evaluation, dataset.sources or {}, planned),
        statistics=manifest.statistics,
        experiment=links.experiment if links else None, baseline_run_id=links.baseline_run_id if links else None,
        upstream=links.upstream if links else None)
    if statistics_problems(plan):
        raise fail(statistics_problems(plan))
    _check_calls_per_case(plan)
    return plan.model_copy(update={"plan_sha256": plan_sha256(plan)})


def _adapters(manifest: Manifest, cases: list[Case], benchmarks: list[str], problems: list[str]
              ) -> dict[str, Benchmark]:
    """Each benchmark's adapter (problems appended: unknown, unavailable, or its cases not plannable live)."""
    adapters: dict[str, Benchmark] = {}
    for b in benchmarks:
        try:
            bench = get_benchmark(b)
        except InvalidInput as exc:
            problems.append(exc.message)
            continue
        if not bench.available:
            problems.append(f"benchmark {b} is not available: {bench.unavailable_reason}")
        elif manifest.mode == "live":
            problems += bench.plan_problems([c for c in cases if c.benchmark == b])
        adapters[b] = bench
    return adapters


def _frozen_dataset(manifest: Manifest, obj: str, registered: DatasetManifest | None, cases: list[Case],
                    benchmarks: list[str]) -> PlanDataset:
    """The plan's dataset block: its bytes, the registered dataset's id, subset flag and evaluation roles, and
    each benchmark's source label (from the registered sources, else the cases' revisions)."""
    revisions: dict[str, set[str | None]] = {}
    for c in cases:
        revisions.setdefault(c.benchmark, set()).add(c.metadata.source_revision)
    sources = source_labels.labels(registered.sources if registered else None, revisions)
    evaluation = registered.evaluation if registered else None
    return PlanDataset(sha256=manifest.dataset.sha256, object=obj, id=registered.id if registered else None,
                       case_count=len(cases), benchmarks=benchmarks, split=split_of(manifest.profile),
                       custom_subset=bool(registered and registered.custom_subset), sources=sources,
                       **({"evaluation": evaluation} if evaluation else {}))


def _grader(options: BenchmarkOptions | None) -> str | None:
    """The grader version a benchmark's frozen options pin (None: the adapter's own)."""
    return options.grader_version if options is not None else None


def _check_calls_per_case(plan: Plan) -> None:
    """Upstream's `limits.max_calls_per_case` must leave room for the calls one judged case makes."""
    n, needed = plan.limits.max_calls_per_case, 2 if plan.auxiliary_targets else 1
    if n is not None and n < needed:
        raise InvalidInput(f"limits.max_calls_per_case {n} is below the {needed} calls a judged case makes")


def _case_problems(manifest: Manifest, cases: list[Case], read: bool, registered: DatasetManifest | None
                   ) -> list[str]:
    """What is wrong with the dataset's cases for this manifest (profile, seed, split, ids, output cap)."""
    problems: list[str] = []
    if read:
        if not cases:
            problems.append("dataset has no cases")
        if registered is not None:
            if registered.profile != manifest.profile:
                problems.append(f"profile {manifest.profile} does not match the dataset's {registered.profile}")
            if registered.seed != manifest.seed:
                problems.append(f"seed {manifest.seed} does not match the dataset's {registered.seed}")
    cap = manifest.limits.max_output_tokens
    if manifest.sampling.max_tokens is not None and manifest.sampling.max_tokens > cap:
        problems.append(f"sampling.max_tokens {manifest.sampling.max_tokens} exceeds limits.max_output_tokens "
                        f"{cap}; raise the cap or lower sampling.max_tokens")
    want_split = split_of(manifest.profile)
    bad_split = [c.id for c in cases if c.metadata.split != want_split]
    if bad_split:
        problems.append(f"{len(bad_split)} case(s) are not in the {want_split} split (first: {bad_split[0]})")
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        problems.append("dataset has duplicate case ids")
    return problems


def _planned_targets(manifest: Manifest, resolve_target: Callable[[str], Target | None],
                     problems: list[str]) -> list[PlannedTarget]:
    """Each manifest target resolved, checked (problems appended) and with its effective parameters."""
    planned: list[PlannedTarget] = []
    seen: set[str] = set()
    preview = manifest.mode == "preview"
    if manifest.perturbation is not None and not preview:
        problems.append(f"perturbation {manifest.perturbation}: a perturbed prompt is only sent to a router's preview "
                        "endpoint (robustness at zero inference cost); set mode: preview or remove perturbation")
    for i, t in enumerate(manifest.targets):
        target = resolve_target(t.id) if isinstance(t, TargetRef) else t
        if target is None:
            problems.append(f"targets[{i}]: no registered target with id {t.id!r}")
            continue
        if target.id in seen:
            problems.append(f"targets[{i}]: duplicate target id {target.id!r}")
        seen.add(target.id)
        problems += target_problems(target, manifest.limits, "capability_only" if preview else manifest.cost_policy, i)
        if preview and (target.kind != "mom" or not target.preview_url):
            problems.append(f"targets[{i}] ({target.id}): preview needs a MoM target with a preview_url (IT-3)")
        planned.append(PlannedTarget(target=target, registered=isinstance(t, TargetRef),
                                     effective_params=effective_params(manifest.sampling, target,
                                                                       manifest.limits.max_output_tokens)))
    return planned


def _notices(manifest: Manifest, adapters: Mapping[str, Benchmark], registered: DatasetManifest | None,
             evaluation: dict[str, Evaluation] | None, sources: dict[str, SourceLabel],
             planned: list[PlannedTarget]) -> list[str]:
    """The plan's notices, each once: the benchmarks', the dataset's, the sources', preview's, routers'."""
    notices: list[str] = []
    for b in sorted(adapters):
        notices += [n for n in adapters[b].notices() if n not in notices]
    if registered is not None and registered.custom_subset:
        notices.append("custom task subset: not a full profile result")
    notices += [n for n in evaluation_notices(evaluation) if n not in notices]
    notices += [n for n in source_labels.notices(sources) if n not in notices]
    if manifest.mode == "preview":
        notices.append("preview: routing decisions only; no answers, no capability score (IT-3)")
    for pt in planned:
        if pt.target.kind == "mom" and not routers.for_target(pt.target).reports_config_hash:
            notices.append(f"target {pt.target.id}: router {pt.target.router} reports no configuration hash, so its "
                           "configuration is not checked before, during or after the run (IT-2)")
    return notices


def _dataset(store: ObjectStore, manifest: Manifest, find_datasets: Callable[[str], list[DatasetManifest]],
             problems: list[str]) -> tuple[bytes | None, str, DatasetManifest | None]:
    """The dataset the manifest names by sha256: the store's registered copy when there is one (the
    path is then not read: it is only a hint), else the file at the path, to say what is wrong."""
    ref = manifest.dataset
    candidates = find_datasets(ref.sha256)
    fitting = [d for d in candidates if d.profile == manifest.profile and d.seed == manifest.seed]
    ranked = sorted(fitting, key=lambda d: d.custom_subset) + candidates
    registered = ranked[0] if ranked else None
    try:
        if registered is not None:
            return read_dataset_object(store, registered.object, ref.sha256), registered.object, registered
        if ref.path is not None:
            data, obj = read_dataset_file(store, ref.path, ref.sha256)
            problems.append("dataset is not a frozen dataset of this store (prepare or combine it first, or "
                            "`sr-bench pull` the run that used it)")
            return data, obj, None
    except (IntegrityError, InvalidInput, NotFound) as exc:
        problems.append(exc.message)
        return None, "", None
    problems.append(f"dataset.sha256 {ref.sha256} is not a frozen dataset of this store (prepare or combine it "
                    "first, or `sr-bench pull` the run that used it)")
    return None, "", None


def check_frozen(raw: object, *, refreeze: bool = False) -> Plan:
    """Validate a frozen plan as submitted to `run`: schema and an unchanged plan_sha256 (`refreeze`: a
    plan sent without its plan_sha256 is validated as any frozen plan and hashed anew, as upstream re-freezes
    a frozen manifest without one)."""
    if not isinstance(raw, dict) or raw.get("kind") != "plan":
        raise InvalidInput("not a frozen plan: run `sr-bench plan --manifest M --output frozen.json` first")
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        raise fail(pydantic_problems(exc), "frozen plan") from None
    declared = raw.get("plan_sha256")
    actual = plan_sha256(plan)
    if declared != actual and not (refreeze and declared is None):
        raise InvalidInput(f"frozen plan was changed after review: plan_sha256 is {actual}, it says {declared}",
                           code="reviewed_plan_changed", details={"dispatch_started": False, "model_requests": 0})
    problems = frozen_problems(plan)
    if problems:
        raise fail(problems, "frozen plan")
    return plan.model_copy(update={"plan_sha256": actual})


def frozen_problems(plan: Plan) -> list[str]:
    """What `plan` would have refused, re-checked on a frozen plan (which may have been edited and rehashed)."""
    limits = plan.limits
    problems: list[str] = []
    cap = limits.max_output_tokens
    if plan.sampling.max_tokens is not None and plan.sampling.max_tokens > cap:
        problems.append(f"sampling.max_tokens {plan.sampling.max_tokens} exceeds limits.max_output_tokens {cap}")
    ids = [pt.target.id for pt in plan.targets]
    if not ids:
        problems.append("targets: a plan needs at least one target")
    for i, pt in enumerate(plan.targets):
        target = pt.target
        if ids.count(target.id) > 1 and ids.index(target.id) != i:
            problems.append(f"targets[{i}]: duplicate target id {target.id!r}")
        problems += target_problems(target, limits, "capability_only" if plan.mode != "live" else plan.cost_policy, i)
        if not pt.effective_params.same(effective_params(plan.sampling, target, cap)):
            problems.append(f"targets[{i}] ({target.id}): effective_params do not follow from the plan's sampling, "
                            "limits and the target's request_params; plan the manifest again")
    for jid, pt in plan.auxiliary_targets.items():
        if pt.target.id != jid or jid in ids:
            problems.append(f"auxiliary target {jid!r} does not match its id or collides with a subject target")
        if not pt.effective_params.same(effective_params(GenerationParams(), pt.target, cap)):
            problems.append(f"auxiliary target {jid!r}: effective_params were edited; plan the manifest again")
    primary = (plan.statistics.primary_benchmarks if plan.statistics else None) or []
    problems += [f"statistics.primary_benchmarks names {b}, which the plan's dataset does not hold"
                 for b in primary if b not in plan.dataset.benchmarks]
    for b, opt in plan.benchmark_options.items():
        for role in ("judge", "user_simulator", "scaffolding"):
            if getattr(opt, role) and getattr(opt, role) not in plan.auxiliary_targets:
                problems.append(f"benchmark_options.{b}.{role} names no auxiliary target")
    problems += statistics_problems(plan)
    case_count = plan.dataset.case_count
    if plan.execution_cells is not None:
        cells = [tuple(c) for c in plan.execution_cells]
        if len(set(cells)) != len(cells) or any(len(c) != 2 or c[1] not in ids for c in cells):
            problems.append("execution_cells must be distinct (case id, planned target id) pairs")
        if plan.total != len(cells):
            problems.append(f"total {plan.total} is not the number of execution_cells")
    elif not isinstance(case_count, int) or plan.total != case_count * len(ids):
        problems.append(f"total {plan.total} is not dataset.case_count × targets")
    return problems
