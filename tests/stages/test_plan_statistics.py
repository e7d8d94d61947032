"""Issue 43 (item 7): a manifest's explicit `claim_rule: hoeffding` is written into the plan (it was dropped as the
default, so the plan read like one frozen before the field existed); a stored plan that never said stays as it was."""

from __future__ import annotations

from tests.stages.test_plan_digest import fixture

from srbench.schemas.plan import Manifest, Statistics
from srbench.stages.plan.freeze import PlanLinks, build_plan, check_frozen
from srbench.stages.stats.planning import planning_for
from srbench.stages.stats.stopping import statistics_of

MANIFEST = {"version": "sr-bench-1.0", "profile": "quick", "seed": 1, "dataset": {"sha256": "0" * 64},
            "targets": [{"id": "mom"}]}


def test_an_explicit_hoeffding_is_written_and_read_back() -> None:
    m = Manifest.model_validate({**MANIFEST, "statistics": {"claim_rule": "hoeffding"}})
    dumped = m.statistics.model_dump(mode="json") if m.statistics else {}
    assert dumped["claim_rule"] == "hoeffding" and dumped["baseline_selection"] == "adjusted"
    again = Statistics.model_validate(dumped)
    assert again.model_dump(mode="json") == dumped                       # the same bytes, the same plan digest
    assert statistics_of({"statistics": dumped}).claim_rule == "hoeffding"


def test_a_stored_plan_that_never_said_keeps_its_bytes() -> None:
    old = Statistics.model_validate({"margin": 0.02})
    assert "claim_rule" not in old.model_dump(mode="json") and old.claim_rule == "hoeffding"
    new = Manifest.model_validate(MANIFEST).statistics
    assert new is not None and new.model_dump(mode="json")["claim_rule"] == "betting"


def test_a_frozen_plan_keeps_the_explicit_hoeffding_and_plans_for_it(tmp_path) -> None:
    # the stored plan (not only the manifest model) says hoeffding, and `sr-bench plan`'s planning declares it
    store, manifest, resolve, find, options, extras = fixture(str(tmp_path / "store"))
    manifest["statistics"] = {"claim_rule": "hoeffding", "margin": 0.02}
    plan = build_plan(manifest, store, resolve_target=resolve, find_datasets=find, options=options,
                      links=PlanLinks(**extras))
    stored = plan.as_json()["statistics"]
    assert isinstance(stored, dict) and stored["claim_rule"] == "hoeffding"
    assert check_frozen(plan.as_json()).as_json()["statistics"] == stored
    planning = planning_for(plan, {"hle": 2, "mmlu-pro": 2})
    assert planning.claim_rule == "hoeffding" and planning.declared.rule == "hoeffding"
    assert planning.other.rule == "betting" and planning.declared.sized_for_effect is not None
