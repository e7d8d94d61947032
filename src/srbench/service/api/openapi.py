"""The route table and the OpenAPI 3.1 document, generated from the contract's pydantic models.

The routes are upstream's (vLLM Semantic Router's sr-bench 1.0 API, the shapes in `service.wire`) plus
sr-bench's own (setup, dataset prepare/combine, objects, reprice, push/pull, store maintenance).

Each route names its handler, its request body model and query model (`service.api_requests`: the
handlers validate with exactly these) and its answer model (`service.api_responses`). The document's
schemas are those models' `model_json_schema()`, so what is checked and what is documented are one
source and cannot drift; schemathesis fuzzes the service against this document.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from pydantic import BaseModel

from srbench import VERSION
from srbench.schemas.dataset import DatasetManifest
from srbench.service.api import exclusions as ex
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api import workflow as wf


class Route(NamedTuple):
    method: str
    path: str                       # under the API prefix
    name: str                       # handler in a service.*handlers module, and the operationId
    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None       # None: any JSON object (a stored record)
    created: bool = False           # 201 when it creates, 200 when it binds an existing one
    accepted: bool = False          # 202: accepted for background work (upstream's preparation jobs)
    aliases: tuple[str, ...] = ()   # full paths answering the same (upstream's bare /health)


R = Route
ROUTES: list[Route] = [
    R("GET", "/health", "health", "Readiness and store identity (the token is needed, as upstream)", answer=rs.Health,
      aliases=("/health",)),
    R("GET", "/catalog", "catalog", "The installed suite, its nine benchmarks, profiles and modes", answer=rs.Catalog),
    R("GET", "/setup", "setup_check", "What each benchmark needs on the service host (check only)",
      answer=rs.SetupChecks),
    R("GET", "/targets", "list_targets", "The target registry", answer=rs.Targets),
    R("POST", "/targets", "register_targets", "Register or replace targets (the operator)", rq.RegisterTargets,
      answer=rs.Registered),
    R("GET", "/datasets", "list_datasets", "Frozen datasets of this store", query=rq.Page, answer=rs.Datasets),
    R("GET", "/datasets/selection", "dataset_selection", "Per benchmark: the one prepared source a profile "
      "would use, or why none", query=rq.Selection, answer=rs.DatasetSelection),
    R("POST", "/datasets/compose", "compose_datasets", "One dataset from chosen benchmarks of prepared datasets",
      rq.ComposeDatasets, answer=rs.Composed),
    R("POST", "/datasets/prepare", "prepare_dataset", "Freeze a dataset from a pinned or local source",
      rq.PrepareDataset, answer=DatasetManifest),
    R("POST", "/datasets/combine", "combine_datasets", "Combine datasets of one profile, seed and split",
      rq.CombineDatasets, answer=DatasetManifest),
    R("POST", "/datasets/exclusions", "compile_exclusions", "An exclusion snapshot of named datasets and runs "
      "(task identities and digests only; stored)", ex.CompileExclusions, answer=ex.ExclusionSnapshot),
    R("GET", "/datasets/{dataset_id}", "get_dataset", "One dataset: coverage, categories, provenance",
      answer=rs.DatasetDetail),
    R("GET", "/datasets/{dataset_id}/cases", "dataset_cases", "Public case view, without reference answers",
      query=rq.CasesPage, answer=rs.Cases),
    R("GET", "/dataset-preparations", "list_preparations", "Dataset preparation jobs, newest first",
      answer=wf.Preparations),
    R("POST", "/dataset-preparations", "submit_preparation", "Prepare a dataset in the background (deduplicated)",
      rq.PrepareJob, answer=wf.PreparationAnswer, accepted=True),
    R("GET", "/dataset-preparations/options", "preparation_options", "What can be prepared, per profile",
      answer=wf.PreparationOptions),
    R("GET", "/dataset-preparations/{prep_id}", "get_preparation", "One preparation job",
      answer=wf.PreparationAnswer),
    R("POST", "/plans", "make_plan", "Validate and freeze a manifest (no model call)", rq.MakePlan,
      answer=rs.PlanAnswer),
    R("GET", "/runs", "list_runs", "Run summaries, newest first (keyset pages)", query=rq.RunsPage,
      answer=rs.Runs),
    R("POST", "/runs", "submit_run", "Start a run of a frozen manifest (idempotent by key)", rq.SubmitRun,
      answer=rs.RunCreated, created=True),
    R("GET", "/runs/{run_id}", "get_run", "One run with progress", answer=rs.RunView),
    R("POST", "/runs/{run_id}/cancel", "cancel_run", "Stop the work of a run", answer=rs.RunView),
    R("GET", "/runs/{run_id}/report", "run_report", "The report (a cached rule output)", answer=rs.Report),
    R("GET", "/runs/{run_id}/results", "run_results", "Per-cell results, by cursor", query=rq.After,
      answer=rs.Results),
    R("GET", "/runs/{run_id}/calls", "run_calls", "Call summaries, by cursor (a damaged call marks its row)",
      query=rq.CallsAfter, answer=rs.Calls),
    R("GET", "/runs/{run_id}/calls/{call_id}", "run_call", "One full call record", answer=rs.CallDetail),
    R("GET", "/runs/{run_id}/recipes", "run_recipes", "The router recipes captured for the run (UI-7)",
      answer=rs.Recipes),
    R("GET", "/runs/{run_id}/events", "run_events", "Events after a sequence number, 1000 a page",
      query=rq.EventsAfter, answer=rs.Events),
    R("POST", "/runs/{run_id}/candidate-plan", "candidate_plan", "A plan that swaps registered MoM targets into "
      "a finished baseline's protocol", rq.CandidatePlan, answer=rs.PlanAnswer),
    R("GET", "/objects/{digest}", "get_object", "An object by digest (JSON records only; verified)"),
    R("POST", "/comparisons", "make_comparison", "Paired comparison of a baseline and a candidate run",
      rq.MakeComparison, answer=rs.Comparison),
    R("POST", "/replays", "make_replay", "Replay saved single-model answers along previewed routes",
      rq.MakeReplay, answer=rs.ReplayCreated, created=True),
    R("GET", "/replay-options", "replay_options", "Baselines, or previews a baseline can be replayed with",
      query=rq.RunOptions, answer=wf.RunOptions, aliases=("/api/sr-bench/v1/runs/{run_id}/replay-options",)),
    R("GET", "/comparison-options", "comparison_options", "Baselines, or runs a baseline can be compared with",
      query=rq.RunOptions, answer=wf.RunOptions),
    R("GET", "/experiments", "list_experiments", "Experiments, oldest first", query=rq.ExperimentPage,
      answer=wf.Experiments),
    R("POST", "/experiments", "create_experiment", "Create an experiment (idempotent by key)",
      rq.CreateExperiment, answer=wf.Experiment, created=True),
    R("GET", "/experiments/{experiment_id}", "get_experiment", "One experiment", answer=wf.Experiment),
    R("DELETE", "/experiments/{experiment_id}", "delete_experiment", "Delete an experiment; its runs stay",
      answer=wf.ExperimentDeleted),
    R("GET", "/experiments/{experiment_id}/runs", "experiment_runs", "The runs of an experiment, by role",
      query=rq.ExperimentPage, answer=wf.ExperimentRuns),
    R("POST", "/experiments/{experiment_id}/runs", "attach_run", "Attach a run to an experiment in a role",
      rq.AttachRun, answer=wf.Experiment),
    R("POST", "/runs/{run_id}/reprice", "reprice_run", "Append a price correction (zero model calls)",
      rq.RepriceRun, answer=wf.Repriced),
    R("POST", "/runs/{run_id}/reconcile-usage", "reconcile_usage",
      "Append a usage correction from retained SSE", rq.ReconcileUsage, answer=wf.Reconciled),
    R("POST", "/runs/{run_id}/recover-plan", "recover_plan", "Review which cells a recovery may continue",
      rq.RecoverPlan, answer=rs.RecoveryPlan),
    R("POST", "/runs/{run_id}/recover", "recover_run", "Create a recovery child run over selected cells",
      rq.RecoverRun, answer=rs.RunCreated, created=True),
    R("POST", "/runs/{run_id}/regrade", "regrade_run", "Offline regrade of saved MCQ/grid answers",
      answer=rs.Derived),
    R("POST", "/runs/{run_id}/export", "export_run", "Dev-only training matrix of a completed run",
      answer=rs.Derived),
    R("POST", "/runs/{run_id}/push", "push_run", "Copy a finished run's objects and its bundle to a team "
      "object store (idempotent)", rq.TeamRemote, answer=wf.Pushed),
    R("POST", "/runs/{run_id}/pull", "pull_run", "Import a pushed run from a team object store, every digest "
      "checked on arrival", rq.TeamRemote, answer=wf.Pulled),
    R("POST", "/shutdown", "shutdown", "Stop the service; every result is kept", answer=wf.Stopping),
    R("POST", "/store/verify", "store_verify", "Re-hash every object and check journal → object references "
      "(repair: copy good objects from SR_BENCH_REPAIR_FROM)", rq.StoreVerify, answer=wf.Verified),
    R("POST", "/store/gc", "store_gc", "Remove objects no reference reaches, older than a grace period "
      "(dry run unless apply; refused while runs are active)", rq.StoreGc, answer=wf.Collected),
]

_REF = "#/components/schemas/{model}"
ACTORS = ("A caller holding the token may act for an actor: X-SR-Bench-Actor-ID (1-256 characters) and "
          "X-SR-Bench-Actor-Role (admin, write or read; read may only GET and POST /comparisons). admin sees "
          "everything, write and read only their own runs and experiments; without the headers the caller is "
          "the local operator.")


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    """A `$ref` to the model's schema, which is added (with the models it uses) to `components`."""
    schema = model.model_json_schema(ref_template=_REF)
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": _REF.format(model=model.__name__)}


def _query(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [{"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in schema["properties"].items()]


def openapi_document() -> dict[str, Any]:
    components: dict[str, Any] = {}
    error = _schema(rs.Error, components)
    paths: dict[str, Any] = {}
    for r in ROUTES:
        answer = _schema(r.answer, components) if r.answer else {"type": "object"}
        ok = {"description": "OK", "content": {"application/json": {"schema": answer}}}
        responses: dict[str, Any] = ({"201": {**ok, "description": "Created"}, "200": ok} if r.created else
                                     {"202": {**ok, "description": "Accepted"}} if r.accepted else {"200": ok})
        responses["4XX"] = {"description": "client error (403: a wrong token, the read role, another actor's "
                                           "operator route)", "content": {"application/json": {"schema": error}}}
        responses["5XX"] = {"description": "a storage fault (507 insufficient_storage, 503 storage_unavailable) "
                                           "or a damaged object (503 damaged_object)",
                            "content": {"application/json": {"schema": error}}}
        op: dict[str, Any] = {"operationId": r.name, "summary": r.summary, "responses": responses}
        params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                  for p in re.findall(r"{(\w+)}", r.path)]
        if r.query is not None:
            params += _query(r.query)
        if params:
            op["parameters"] = params
        if r.body is not None:
            required = bool(r.body.model_json_schema().get("required"))
            op["requestBody"] = {"required": required,
                                 "content": {"application/json": {"schema": _schema(r.body, components)}}}
        op["security"] = [{"bearer": []}]
        paths.setdefault("/api/sr-bench/v1" + r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "sr-bench service", "version": VERSION},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": ACTORS}},
                       "schemas": components},
    }
