"""The service's route table (issue 39, item 9): every route module of `service/routes/`, the document's order of
the routes, and the bound routes the app factory (`service.app`) serves and the OpenAPI document
(`service.api.openapi`) describes. It sits above the routes, so that the HTTP edge (`service/api/`) never
imports a handler.
"""

from __future__ import annotations

from srbench.schemas.wire import WireJSON
from srbench.service.api.bindings import Route, bound_routes
from srbench.service.api.openapi import openapi_document
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


def openapi() -> WireJSON:
    """The service's OpenAPI document (what ``GET /openapi.json`` answers)."""
    return openapi_document(ROUTES)
