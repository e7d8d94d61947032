"""Upstream manifest fields, with their upstream meaning, on top of sr-bench's manifest.

- ``cases``: the questions inline. With a ``dataset`` they must equal the dataset's cases (same ids,
  same content); without one they become a dataset of this store (a custom subset, registered like a
  prepared one), so the plan still names its questions by sha256.
- ``auxiliary_targets`` {id: target}: the judges and simulators the benchmark options name; for the
  local operator they may be spelled out here instead of registered.
- ``benchmark_options`` {benchmark: {judge, grader_version, grading…}}: for the local operator they
  take the place of the store's ``benchmark-options.json`` entries; a named actor's must equal them.
- ``experiment`` {id, role, hypothesis}: the run joins that experiment in that role when it is
  created (the experiment must exist and be the actor's; the role must fit the run).
- ``baseline_run_id``: the baseline a candidate plan was derived from (kept in the plan).
- ``limits.max_calls_per_case``: the most model calls one case may make (subject, judge and
  simulator calls together; upstream's default 32). A plan whose benchmarks need more is refused.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from srbench.cas.digest import JSONValue
from srbench.discovery import read_benchmark_options
from srbench.errors import Forbidden, InvalidInput, NotFound
from srbench.schemas.dataset import Case, FrozenDataset, split_of
from srbench.schemas.plan import Plan
from srbench.schemas.wire import WireJSON
from srbench.service.api.actors import Actor, record_owner
from srbench.service.datasets.refs import find_datasets, register_dataset
from srbench.service.journal import owners
from srbench.service.runs import experiments
from srbench.service.runs.state import OnCreate
from srbench.service.wire.projections import experiment_roles
from srbench.stages.datasets.build import dataset_id, decode_cases, encode_cases
from srbench.stages.plan.freeze import PlanLinks

if TYPE_CHECKING:
    from srbench.service.app import Service

EXTRA_KEYS = ("cases", "auxiliary_targets", "benchmark_options", "experiment", "baseline_run_id")
INLINE_URL = "inline:manifest-cases"


class PlanRequest(BaseModel):
    """An upstream-shaped plan request translated once, before planning: what `build_plan` is given."""

    model_config = ConfigDict(frozen=True)
    manifest: Any = Field(description="sr-bench's manifest (inline cases made a dataset of the store); "
                                      "planning validates it")
    options: WireJSON | None = Field(description="benchmark options to plan with (None: the store's)")
    auxiliary_targets: WireJSON = Field(description="targets spelled out inline, by id (local operator)")
    links: PlanLinks = Field(description="the experiment the run joins and its baseline run, checked")


def translate(service: Service, manifest: Any, actor: Actor) -> PlanRequest:
    """Upstream's manifest fields taken out of `manifest` and turned into what planning needs."""
    manifest, extras = split_manifest(manifest)
    manifest, options, aux = prepare_inputs(service, manifest, extras, actor)
    experiment = None
    if "experiment" in extras:
        experiment = experiments.membership(extras["experiment"])
        experiments.visible(service.journal, experiment.id, actor)
    baseline = extras.get("baseline_run_id")
    if baseline is not None and not isinstance(baseline, str):
        raise InvalidInput("baseline_run_id must be a run id")
    return PlanRequest(manifest=manifest, options=options, auxiliary_targets=aux,
                       links=PlanLinks(experiment=experiment, baseline_run_id=baseline))


def split_manifest(manifest: Any) -> tuple[Any, WireJSON]:
    """(sr-bench's manifest, the upstream fields taken out of it)."""
    if not isinstance(manifest, dict):
        return manifest, {}
    extras = {k: manifest[k] for k in EXTRA_KEYS if k in manifest}
    return {k: v for k, v in manifest.items() if k not in EXTRA_KEYS}, extras


def prepare_inputs(service: Service, manifest: Any, extras: WireJSON, actor: Actor
                   ) -> tuple[Any, WireJSON | None, WireJSON]:
    """Before planning: inline cases as a dataset, and the options and auxiliary targets to plan with.
    Returns (manifest, benchmark options or None for the store's, auxiliary targets)."""
    if "cases" in extras and isinstance(manifest, dict):
        manifest = _with_inline_cases(service, manifest, extras["cases"])
    operator = read_benchmark_options(service.store_dir)
    options = None
    given = extras.get("benchmark_options")
    if given is not None:
        if not isinstance(given, dict):
            raise InvalidInput("benchmark_options must be an object keyed by benchmark id")
        if actor.named and any(operator.get(b) != v for b, v in given.items()):
            raise Forbidden("Benchmark harness options are configured by the server operator", code="options_override")
        options = {**operator, **given}
    aux = extras.get("auxiliary_targets") or {}
    if not isinstance(aux, dict):
        raise InvalidInput("auxiliary_targets must be an object {id: target}")
    return manifest, options, ({} if actor.named else aux)


def _with_inline_cases(service: Service, manifest: WireJSON, raw: Any) -> WireJSON:
    if not isinstance(raw, list) or not raw:
        raise InvalidInput("cases must be a non-empty list")
    try:
        cases = [Case.model_validate(c) for c in raw]
    except ValueError as exc:
        raise InvalidInput(f"cases: {str(exc).splitlines()[0]}") from None
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise InvalidInput("cases: duplicate case ids")
    data = encode_cases(cases)
    sha = hashlib.sha256(data).hexdigest()
    if manifest.get("dataset") is not None:
        ds = manifest["dataset"]
        stored = _dataset_cases(service, ds.get("sha256") if isinstance(ds, dict) else None)
        if stored is not None and {c.id: c for c in stored} != {c.id: c for c in cases}:
            raise InvalidInput("cases differ from the dataset's cases (inline cases must equal the dataset file)")
        return manifest
    profile, seed = manifest.get("profile"), manifest.get("seed")
    if profile not in ("smoke", "quick", "standard") or not isinstance(seed, int):
        return {**manifest, "dataset": {"sha256": sha}}       # the manifest's own check names the problem
    _register_inline(service, cases, data, sha, str(profile), seed)
    return {**manifest, "dataset": {"sha256": sha}}


def _dataset_cases(service: Service, sha: str | None) -> list[Case] | None:
    if not sha:
        return None
    found = find_datasets(service, sha)
    return decode_cases(service.objects.get_bytes(found[0].object)) if found else None


def _register_inline(service: Service, cases: list[Case], data: bytes, sha: str, profile: str, seed: int) -> None:
    obj = service.objects.put_bytes(data)
    benchmarks = sorted({c.benchmark for c in cases})
    sources: dict[str, JSONValue] = {b: {"url": INLINE_URL, "revision": "inline", "files": [], "origin": "local-import",
                   "access_note": "cases given inline in a run manifest"} for b in benchmarks}
    selection: dict[str, JSONValue] = {b: {"algorithm": "inline", "version": 1, "strata": "given", "custom_subset": True}
                 for b in benchmarks}
    manifest = {"id": dataset_id(sha, sources, profile, seed, True, selection), "name": "+".join(benchmarks) +
                f"/{profile} (inline)", "path": "", "sha256": sha, "object": obj, "case_count": len(cases),
                "profile": profile, "seed": seed, "split": split_of(profile), "benchmarks": benchmarks,
                "sources": sources, "selection": selection, "custom_subset": True,
                "notices": ["inline cases from a run manifest: not a prepared benchmark profile"]}
    register_dataset(service, FrozenDataset.model_validate(manifest))


def creation_hook(service: Service, plan: Plan, actor: Actor) -> OnCreate:
    """In the run's insert transaction: its owner, and its experiment link (checked again there)."""
    link = plan.experiment
    roles = experiment_roles(plan)
    if link is not None and link.role not in roles:
        raise InvalidInput(f"experiment role {link.role} does not fit this run (it can be: "
                           f"{', '.join(roles) or 'none'})", code="experiment_role")

    def hook(c: sqlite3.Connection, run_id: str) -> None:
        record_owner(c, run_id, actor.owner)
        if link is not None:
            exists, owner = owners.experiment_owner(c, link.id)
            if not exists or (actor.scope is not None and owner != actor.scope):
                raise NotFound(f"no experiment {link.id!r}")
            experiments.insert_link(c, link.id, run_id, link.role, link.hypothesis)
    return hook


def derived_hook(service: Service, actor: Actor, source_plan: WireJSON, role: str) -> OnCreate:
    """For a run derived from another (a recovery child, a replay): its owner, and the source's
    experiment membership in `role` while that experiment still exists and is the actor's (a deleted
    experiment is never recreated by a derived run)."""
    link = source_plan.get("experiment")

    def hook(c: sqlite3.Connection, run_id: str) -> None:
        record_owner(c, run_id, actor.owner)
        if link is None:
            return
        exists, owner = owners.experiment_owner(c, link["id"])
        if exists and (actor.scope is None or owner == actor.scope):
            experiments.insert_link(c, link["id"], run_id, role, link.get("hypothesis", ""))
    return hook
