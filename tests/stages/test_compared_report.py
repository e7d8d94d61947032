"""What compare reads of a stored report (schemas/comparison_inputs.py ComparedReport): a field a report
lacks reads as the dict code's default, fields compare does not read are ignored, and a router's absent
config-hash evidence is told apart from a recorded null."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from srbench.schemas.comparison_claims import MissingEvidence
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.stages.compare.notes import _evidence, _rules


def test_defaults_and_ignored_fields() -> None:
    r = ComparedReport.model_validate({"kind": "report", "status": "completed", "results": "b3:" + "0" * 64})
    assert r.mode == "live" and r.run_id is None and r.early_stop is None and r.benchmarks == []
    assert r.provenance is None and r.summary is None
    with pytest.raises(ValidationError):             # a field compare reads must have its type
        ComparedReport.model_validate({"status": "completed", "benchmarks": [{"target_id": "a"}]})


def test_published_figures_default_like_the_dict_code() -> None:
    r = ComparedReport.model_validate({"benchmarks": [
        {"target_id": "a", "benchmark": "mmlu-pro", "accuracy": 1, "sr_bench_rule": "exact"},
        {"target_id": "a", "benchmark": "simpleqa", "accuracy": 0.5, "published": {"rule": "f1", "score": 0.4}},
        {"target_id": "b", "benchmark": "mmlu-pro", "accuracy": 0.0}]})
    rules = _rules(r, "a")
    assert set(rules) == {"mmlu-pro", "simpleqa"}
    assert rules["mmlu-pro"].published_metric == "accuracy" and rules["mmlu-pro"].published is None
    assert rules["mmlu-pro"].sr_bench_accuracy == 1 and isinstance(rules["mmlu-pro"].sr_bench_accuracy, int)
    assert rules["simpleqa"].published_rule == "f1" and rules["simpleqa"].published == 0.4


def test_absent_evidence_is_not_a_recorded_null() -> None:
    targets = ComparedReport.model_validate({"summary": {"targets": [
        {"target_id": "old", "kind": "mom"}, {"target_id": "none", "kind": "mom", "config_hash_evidence": None},
        {"target_id": "s", "kind": "single"}]}}).summary
    assert targets is not None
    old, none, single = targets.targets
    ev = _evidence(old)
    assert isinstance(ev, MissingEvidence) and ev.confirmed is False
    assert _evidence(none) is None and _evidence(single) is None
