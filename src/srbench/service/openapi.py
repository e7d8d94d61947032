"""The route table and the OpenAPI 3.1 document, generated from the contract's pydantic models.

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
from srbench.service import api_requests as rq
from srbench.service import api_responses as rs


class Route(NamedTuple):
    method: str
    path: str                       # under the API prefix
    name: str                       # handler in a service.*handlers module, and the operationId
    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None       # None: any JSON object (a stored record)
    created: bool = False           # 201 when it creates, 200 when it binds an existing one


ROUTES: list[Route] = [
    Route("GET", "/health", "health", "Liveness and store identity (no token needed)", answer=rs.Health),
    Route("GET", "/catalog", "catalog", "The installed suite and its nine benchmarks", answer=rs.Catalog),
    Route("GET", "/setup", "setup_check", "What each benchmark needs on the service host (check only)",
          answer=rs.SetupChecks),
    Route("GET", "/targets", "list_targets", "The target registry", answer=rs.Targets),
    Route("POST", "/targets", "register_targets", "Register or replace targets", rq.RegisterTargets,
          answer=rs.Registered),
    Route("GET", "/datasets", "list_datasets", "Frozen datasets of this store", query=rq.Page, answer=rs.Datasets),
    Route("POST", "/datasets/prepare", "prepare_dataset", "Freeze a dataset from a pinned or local source",
          rq.PrepareDataset, answer=DatasetManifest),
    Route("POST", "/datasets/combine", "combine_datasets", "Combine datasets of one profile, seed and split",
          rq.CombineDatasets, answer=DatasetManifest),
    Route("GET", "/datasets/{dataset_id}", "get_dataset", "One dataset manifest", answer=DatasetManifest),
    Route("GET", "/datasets/{dataset_id}/cases", "dataset_cases", "Public case view, without reference answers",
          query=rq.CasesPage, answer=rs.Cases),
    Route("POST", "/plans", "make_plan", "Validate and freeze a manifest (no model call)", rq.MakePlan,
          answer=rs.PlanAnswer),
    Route("GET", "/runs", "list_runs", "Run summaries, newest first", query=rq.RunsPage,
          answer=rs.Runs),
    Route("POST", "/runs", "submit_run", "Start a run from a frozen plan (idempotent by key)", rq.SubmitRun,
          answer=rs.RunCreated, created=True),
    Route("GET", "/runs/{run_id}", "get_run", "One run with progress", answer=rs.RunView),
    Route("POST", "/runs/{run_id}/cancel", "cancel_run", "Stop the work of a run", answer=rs.RunView),
    Route("GET", "/runs/{run_id}/report", "run_report", "The report (a cached rule output)", answer=rs.Report),
    Route("GET", "/runs/{run_id}/results", "run_results", "Per-cell results, 100 a page", query=rq.SeqPage,
          answer=rs.Results),
    Route("GET", "/runs/{run_id}/calls", "run_calls", "Call summaries, 100 a page (a damaged call marks its row)",
          query=rq.SeqPage, answer=rs.Calls),
    Route("GET", "/runs/{run_id}/calls/{cell_id}", "run_call", "One full call record", answer=rs.CallDetail),
    Route("GET", "/runs/{run_id}/events", "run_events", "Events after a sequence number, 100 a page",
          query=rq.EventsAfter, answer=rs.Events),
    Route("GET", "/objects/{digest}", "get_object", "An object by digest (JSON records only; verified)"),
    Route("POST", "/comparisons", "make_comparison", "Paired comparison of a baseline and a candidate run",
          rq.MakeComparison, answer=rs.Derived),
    Route("POST", "/replays", "make_replay", "Replay saved single-model answers along previewed routes",
          rq.MakeReplay, answer=rs.ReplayCreated, created=True),
    Route("POST", "/runs/{run_id}/reprice", "reprice_run", "Append a price correction (zero model calls)",
          rq.RepriceRun, answer=rs.Repriced),
    Route("POST", "/runs/{run_id}/reconcile-usage", "reconcile_usage",
          "Append a usage correction from retained SSE", rq.ReconcileUsage, answer=rs.Reconciled),
    Route("POST", "/runs/{run_id}/recover-plan", "recover_plan", "Review which cells a recovery may continue",
          rq.RecoverPlan),
    Route("POST", "/runs/{run_id}/recover", "recover_run", "Create a recovery child run over selected cells",
          rq.RecoverRun, answer=rs.RunCreated, created=True),
    Route("POST", "/runs/{run_id}/regrade", "regrade_run", "Offline regrade of saved MCQ/grid answers",
          answer=rs.Derived),
    Route("POST", "/runs/{run_id}/export", "export_run", "Dev-only training matrix of a completed run",
          answer=rs.Derived),
    Route("POST", "/runs/{run_id}/push", "push_run", "Copy a finished run's objects and its bundle to a team "
          "object store (idempotent)", rq.TeamRemote, answer=rs.Pushed),
    Route("POST", "/runs/{run_id}/pull", "pull_run", "Import a pushed run from a team object store, every digest "
          "checked on arrival", rq.TeamRemote, answer=rs.Pulled),
    Route("POST", "/shutdown", "shutdown", "Stop the service; every result is kept", answer=rs.Stopping),
    Route("POST", "/store/verify", "store_verify", "Re-hash every object and check journal → object references "
          "(repair: copy good objects from SR_BENCH_REPAIR_FROM)", rq.StoreVerify, answer=rs.Verified),
    Route("POST", "/store/gc", "store_gc", "Remove objects no reference reaches, older than a grace period "
          "(dry run unless apply; refused while runs are active)", rq.StoreGc, answer=rs.Collected),
]

_REF = "#/components/schemas/{model}"


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
        responses: dict[str, Any] = {"201": {**ok, "description": "Created"}, "200": ok} if r.created else {"200": ok}
        responses["4XX"] = {"description": "client error", "content": {"application/json": {"schema": error}}}
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
        if r.name != "health":
            op["security"] = [{"bearer": []}]
        paths.setdefault("/api/sr-bench/v1" + r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "sr-bench service", "version": VERSION},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "schemas": components},
    }
