"""The stored-object models written for issue 26 (item 1) are frozen and document every field."""

from __future__ import annotations

import importlib
import inspect

import pytest
from pydantic import BaseModel

MODULES = ("schemas.corrections", "schemas.grade", "schemas.replay", "schemas.recovery", "schemas.derived", "schemas.comparison",
           "schemas.comparison_published", "schemas.comparison_claims", "schemas.comparison_inputs", "stages.compare.claims", "schemas.estimate",
           "schemas.conversation", "benchmarks.conversation", "schemas.recipe", "schemas.results", "schemas.report", "schemas.report_params", "schemas.report_paired",
           "schemas.report_sections", "schemas.intervals", "stages.derived.replay", "stages.derived.reconcile", "stages.report.conversations", "stages.grading.grade", "stages.grading.code", "stages.derived.rules", "benchmarks.terminal_bench.trajectory", "benchmarks.tau.models", "service.journal.runs", "service.journal.cell_rows",
           "service.journal.experiments", "service.runs.state", "schemas.event_data", "schemas.target_checks", "schemas.early_stop", "schemas.generation", "schemas.sources")


@pytest.mark.parametrize("name", MODULES)
def test_frozen_and_documented(name):
    module = importlib.import_module(f"srbench.{name}")
    models = [m for _, m in inspect.getmembers(module, inspect.isclass)
              if issubclass(m, BaseModel) and m.__module__ == module.__name__ and not m.__name__.startswith("_")]
    assert models, name
    for model in models:
        assert model.model_config.get("frozen") is True, model.__name__
        undocumented = [f for f, info in model.model_fields.items() if not info.description]
        assert not undocumented, (model.__name__, undocumented)
