"""The routes, in the document's order, and the OpenAPI 3.1 document generated from the contract's models.

The routes are upstream's (vLLM Semantic Router's sr-bench 1.0 API, the shapes in `service.wire`) plus
sr-bench's own (setup, dataset prepare/combine, objects, reprice, push/pull, store maintenance).

Each route is declared on its handler (`service.api.bindings.route`): its request body model and query
model (`service.api.requests`: the handlers are given the request validated by exactly these) and its
answer model (`service.api.responses`). The document's schemas are those models' `model_json_schema()`,
so what is checked and what is documented are one source and cannot drift; schemathesis fuzzes the
service against this document.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from srbench import VERSION
from srbench.schemas.wire import WireJSON
from srbench.service.api import responses as rs
from srbench.service.api.bindings import Route, bound_routes
from srbench.service.routes import (
    core,
    datasets,
    derived,
    evidence,
    exclusions,
    experiments,
    options,
    preparations,
    team,
)

# the modules whose handlers declare the routes (importing them fills the registry): service/routes/ only
MODULES = (core, datasets, exclusions, derived, team, evidence, experiments, preparations, options)


# The document's order of its paths (and so of its schemas), as published since 1.0: the routes are declared
# on their handlers, module by module; a route not named here comes after these, in declaration order.
ORDER = ("health", "catalog", "setup_check", "list_targets", "register_targets", "check_targets", "list_datasets",
         "dataset_selection", "compose_datasets", "prepare_dataset", "import_dataset", "combine_datasets", "compile_exclusions",
         "get_dataset", "dataset_cases", "list_preparations", "submit_preparation", "preparation_options",
         "get_preparation", "make_plan", "list_runs", "submit_run", "get_run", "cancel_run", "run_report",
         "run_results", "run_calls", "run_call", "run_recipes", "run_events", "run_failures", "candidate_plan", "get_object",
         "make_comparison", "make_replay", "replay_options", "comparison_options", "run_baselines", "run_live",
         "list_experiments",
         "create_experiment", "get_experiment", "delete_experiment", "experiment_runs", "attach_run",
         "reprice_run", "reconcile_usage", "recover_plan", "recover_run", "regrade_run", "export_run",
         "diagnose_run", "robustness_run",
         "push_run", "pull_run", "shutdown", "store_verify", "store_gc", "get_benchmark_options",
         "set_benchmark_options")
ROUTES: list[Route] = bound_routes(ORDER)


_REF = "#/components/schemas/{model}"
ACTORS = ("A caller holding the token may act for an actor: X-SR-Bench-Actor-ID (1-256 characters) and "
          "X-SR-Bench-Actor-Role (admin, write or read; read may only GET and POST /comparisons). admin sees "
          "everything, write and read only their own runs and experiments; without the headers the caller is "
          "the local operator.")


def _schema(model: type[BaseModel], components: WireJSON) -> WireJSON:
    """A `$ref` to the model's schema, which is added (with the models it uses) to `components`."""
    schema = model.model_json_schema(ref_template=_REF)
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": _REF.format(model=model.__name__)}


def _query(model: type[BaseModel]) -> list[WireJSON]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [{"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in schema["properties"].items()]


def openapi_document() -> WireJSON:
    components: WireJSON = {}
    error = _schema(rs.Error, components)
    paths: WireJSON = {}
    for r in ROUTES:
        answer = _schema(r.answer, components) if r.answer else {"type": "object"}
        ok = {"description": "OK", "content": {"application/json": {"schema": answer}}}
        responses: WireJSON = ({"201": {**ok, "description": "Created"}, "200": ok} if r.created else
                                     {"202": {**ok, "description": "Accepted"}} if r.accepted else {"200": ok})
        responses["4XX"] = {"description": "client error (403: a wrong token, the read role, another actor's "
                                           "operator route)", "content": {"application/json": {"schema": error}}}
        responses["5XX"] = {"description": "a storage fault (507 insufficient_storage, 503 storage_unavailable) "
                                           "or a damaged object (503 damaged_object)",
                            "content": {"application/json": {"schema": error}}}
        op: WireJSON = {"operationId": r.name, "summary": r.summary, "responses": responses}
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
