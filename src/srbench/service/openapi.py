"""The route table and the OpenAPI 3.1 document the service serves (built from the same table)."""

from __future__ import annotations

import re
from typing import Any

from srbench import VERSION
from srbench.schemas.target import Target

# (method, path under the API prefix, handler name in a service.*handlers module, summary)
ROUTES: list[tuple[str, str, str, str]] = [
    ("GET", "/health", "health", "Liveness and store identity (no token needed)"),
    ("GET", "/catalog", "catalog", "The installed suite and its nine benchmarks"),
    ("GET", "/setup", "setup_check", "What each benchmark needs on the service host (check only)"),
    ("GET", "/targets", "list_targets", "The target registry"),
    ("POST", "/targets", "register_targets", "Register or replace targets"),
    ("GET", "/datasets", "list_datasets", "Frozen datasets of this store"),
    ("POST", "/datasets/prepare", "prepare_dataset", "Freeze a dataset from a pinned or local source"),
    ("POST", "/datasets/combine", "combine_datasets", "Combine datasets of one profile, seed and split"),
    ("GET", "/datasets/{dataset_id}", "get_dataset", "One dataset manifest"),
    ("GET", "/datasets/{dataset_id}/cases", "dataset_cases", "Public case view, without reference answers"),
    ("POST", "/plans", "make_plan", "Validate and freeze a manifest (no model call)"),
    ("GET", "/runs", "list_runs", "Run summaries, newest first"),
    ("POST", "/runs", "submit_run", "Start a run from a frozen plan (idempotent by key)"),
    ("GET", "/runs/{run_id}", "get_run", "One run with progress"),
    ("POST", "/runs/{run_id}/cancel", "cancel_run", "Stop the work of a run"),
    ("GET", "/runs/{run_id}/report", "run_report", "The report (a cached rule output)"),
    ("GET", "/runs/{run_id}/results", "run_results", "Per-cell results, 100 a page"),
    ("GET", "/runs/{run_id}/calls", "run_calls", "Call summaries, 100 a page"),
    ("GET", "/runs/{run_id}/calls/{cell_id}", "run_call", "One full call record"),
    ("GET", "/runs/{run_id}/events", "run_events", "Events after a sequence number, 100 a page"),
    ("GET", "/objects/{digest}", "get_object", "An object by digest (JSON objects only)"),
    ("POST", "/comparisons", "make_comparison", "Paired comparison of a baseline and a candidate run"),
    ("POST", "/replays", "make_replay", "Replay saved single-model answers along previewed routes"),
    ("POST", "/runs/{run_id}/reprice", "reprice_run", "Append a price correction (zero model calls)"),
    ("POST", "/runs/{run_id}/reconcile-usage", "reconcile_usage", "Append a usage correction from retained SSE"),
    ("POST", "/runs/{run_id}/recover-plan", "recover_plan", "Review which cells a recovery may continue"),
    ("POST", "/runs/{run_id}/recover", "recover_run", "Create a recovery child run over selected cells"),
    ("POST", "/runs/{run_id}/regrade", "regrade_run", "Offline regrade of saved MCQ/grid answers"),
    ("POST", "/runs/{run_id}/export", "export_run", "Dev-only training matrix of a completed run"),
    ("POST", "/runs/{run_id}/push", "push_run", "Copy a finished run's objects and its bundle to a team object "
     "store (idempotent)"),
    ("POST", "/runs/{run_id}/pull", "pull_run", "Import a pushed run from a team object store, every digest "
     "checked on arrival"),
    ("POST", "/shutdown", "shutdown", "Stop the service; every result is kept"),
    ("POST", "/store/verify", "store_verify", "Re-hash every object and check journal → object references"),
    ("POST", "/store/gc", "store_gc", "Remove objects no reference reaches, older than a grace period "
     "(dry run unless apply; refused while runs are active)"),
]

_PAGE = [{"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
         {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}}]

_BODIES: dict[str, dict[str, Any]] = {
    "register_targets": {"type": "object", "required": ["targets"], "additionalProperties": False,
                         "properties": {"targets": {"type": "array", "items": {"$ref": "#/components/schemas/Target"}}}},
    "prepare_dataset": {"type": "object", "required": ["benchmark", "profile"], "additionalProperties": False,
                        "properties": {"benchmark": {"type": "string"},
                                       "profile": {"type": "string", "enum": ["smoke", "quick", "standard"]},
                                       "seed": {"type": "integer"}, "limit": {"type": ["integer", "null"]},
                                       "source_path": {"type": ["string", "null"]},
                                       "revision": {"type": ["string", "null"]},
                                       "source": {"type": ["string", "null"], "enum": ["auto", "download", "mirror", None]}}},
    "combine_datasets": {"type": "object", "required": ["manifests"], "additionalProperties": False,
                         "properties": {"manifests": {"type": "array", "items": {"type": "object"}}}},
    "make_comparison": {"type": "object", "required": ["baseline_run_id", "candidate_run_id"],
                        "additionalProperties": False,
                        "properties": {"baseline_run_id": {"type": "string"}, "candidate_run_id": {"type": "string"},
                                       "margin": {"type": ["number", "null"], "minimum": 0, "maximum": 1}}},
    "make_replay": {"type": "object", "required": ["baseline_run_id", "preview_run_id"], "additionalProperties": False,
                    "properties": {"baseline_run_id": {"type": "string"}, "preview_run_id": {"type": "string"}}},
    "recover_plan": {"type": "object", "required": ["mode"], "additionalProperties": False,
                     "properties": {"mode": {"type": "string", "enum": ["undispatched", "failed"]}}},
    "recover_run": {"type": "object", "required": ["plan", "idempotency_key"], "additionalProperties": False,
                    "properties": {"plan": {"type": "object"}, "idempotency_key": {"type": "string"},
                                   "acknowledge_new_attempt": {"type": "boolean"}}},
    "make_plan": {"type": "object", "required": ["manifest"], "additionalProperties": False,
                  "properties": {"manifest": {"type": "object"}}},
    "submit_run": {"type": "object", "required": ["plan"], "additionalProperties": False,
                   "properties": {"plan": {"type": "object"}, "idempotency_key": {"type": ["string", "null"]}}},
    "push_run": {"type": "object", "additionalProperties": False,
                 "properties": {"remote": {"type": ["string", "null"], "maxLength": 2048}}},
    "pull_run": {"type": "object", "additionalProperties": False,
                 "properties": {"remote": {"type": ["string", "null"], "maxLength": 2048}}},
    "store_gc": {"type": "object", "additionalProperties": False,
                 "properties": {"apply": {"type": "boolean", "default": False},
                                "grace_s": {"type": "number", "minimum": 0, "default": 3600}}},
}


def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for method, path, name, summary in ROUTES:
        op: dict[str, Any] = {"operationId": name, "summary": summary,
                              "responses": {"200": {"description": "OK"}, "4XX": {"description": "client error",
                                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}}
        params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                  for p in re.findall(r"{(\w+)}", path)]
        if name in ("run_results", "run_calls", "dataset_cases", "list_datasets"):
            params += _PAGE
        if name == "run_events":
            params += [{"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}}]
        if name == "run_report":
            params += [{"name": "explain", "in": "query", "schema": {"type": "boolean"}}]
        if params:
            op["parameters"] = params
        if name in _BODIES:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _BODIES[name]}}}
        if name != "health":
            op["security"] = [{"bearer": []}]
        paths.setdefault("/api/sr-bench/v1" + path, {})[method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "sr-bench service", "version": VERSION},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Target": Target.model_json_schema(),
                "Error": {"type": "object", "properties": {"error": {"type": "object", "properties": {
                    "code": {"type": "string"}, "message": {"type": "string"}}}}},
            },
        },
    }
