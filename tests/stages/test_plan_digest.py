"""Issue 26 (item 1): a plan travels as the `Plan` model, and its bytes do not change. These digests were
taken before the plan stopped being a dict: a plan with every optional block a manifest (and upstream's
wire fields) can give, and a recovery child of it (execution cells, recovery block as the service writes it,
preview context)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from srbench.cas import ObjectStore, canonical_json
from srbench.schemas.dataset import Case, DatasetManifest
from srbench.schemas.plan import Plan
from srbench.schemas.target import Target
from srbench.stages.datasets.build import encode_cases
from srbench.stages.plan.freeze import PlanLinks, build_plan, check_frozen, plan_sha256


def _case(i: int, benchmark: str) -> Case:
    return Case.model_validate({"id": f"{benchmark}-{i}", "benchmark": benchmark,
                                "messages": [{"role": "user", "content": f"question {i}"}], "answer": "A",
                                "metadata": {"stratum": "all", "split": "dev", "source_revision": "r1"}})


def fixture(root: str) -> tuple[ObjectStore, dict[str, Any], Any, Any, dict[str, Any], dict[str, Any]]:
    store = ObjectStore(root)
    data = encode_cases([_case(i, b) for b in ("hle", "mmlu-pro") for i in range(2)])
    sha = hashlib.sha256(data).hexdigest()
    obj = store.put_bytes(data)
    registered = DatasetManifest(id="ds-1", name="ds", path="", sha256=sha, object=obj, case_count=4,
                                 profile="smoke", seed=7, split="dev", benchmarks=["hle", "mmlu-pro"], sources={},
                                 selection={}, custom_subset=True)
    prices = {"m": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}
    targets = {
        "judge": Target(id="judge", kind="single", base_url="http://127.0.0.1:9/v1", model="m", prices=prices),
        "strong": Target(id="strong", kind="single", base_url="http://127.0.0.1:9/v1", model="m", prices=prices,
                         request_params={"temperature": 0.2}),
    }
    manifest = {
        "version": "sr-bench-1.0", "name": "every block", "profile": "smoke", "seed": 7,
        "cost_policy": "require_priced", "stop_on_systematic": "run",
        "dataset": {"sha256": sha},
        "targets": [{"id": "strong"}, {"id": "inline", "kind": "single", "base_url": "http://127.0.0.1:9/v1",
                                       "model": "m", "prices": prices}],
        "sampling": {"top_p": 0.9},
        "limits": {"concurrency": 2, "max_calls_per_case": 8, "max_cost_usd": 1.5},
        "statistics": {"claim_rule": "betting", "margin": 0.02, "primary_benchmarks": ["mmlu-pro"],
                       "planning": {"effect": 0.1}, "early_stop": {"baseline_run": "run-base"}},
    }
    options = {"hle": {"judge": "judge", "grader_version": "hle-official-judge-v1",
                       "judge_response_format": "json_schema"}}
    extras = {"experiment": {"id": "exp-1", "role": "candidate", "hypothesis": "routing pays"},
              "baseline_run_id": "run-base"}
    return store, manifest, targets.get, lambda s: [registered] if s == sha else [], options, extras


PLAN_SHA256 = "fca99592e9da76e9dddc6f3f6884e55f49888641fccaafcbd3c72420b1e5b318"
PLAN_BYTES_SHA256 = "253833ce91d1e6e6e646617e4c5c31d51dd3cd42a5fcc3d2c283e50db02d1727"
CHILD_SHA256 = "c000dca75023c14cf291e09ec32bf227e6bd390ceab594749ced3a82184f79ef"   # taken with the dict-typed recovery block


def _plan(tmp_path: Path) -> Plan:
    store, manifest, resolve, find, options, extras = fixture(str(tmp_path / "store"))
    return build_plan(manifest, store, resolve_target=resolve, find_datasets=find, options=options,
                      links=PlanLinks(**extras))


def test_a_plan_with_every_optional_block_keeps_its_digest(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert isinstance(plan, Plan) and plan.plan_sha256 == PLAN_SHA256 == plan_sha256(plan)
    assert hashlib.sha256(canonical_json(plan.as_json())).hexdigest() == PLAN_BYTES_SHA256
    assert plan.experiment is not None and plan.experiment.model_dump() == {"id": "exp-1", "role": "candidate", "hypothesis": "routing pays"}
    assert plan.baseline_run_id == "run-base" and plan.auxiliary_targets["judge"].target.id == "judge"
    assert plan.statistics is not None and plan.statistics.early_stop is not None
    again = check_frozen(plan.as_json())                  # the stored form validates back to the same plan
    assert again == plan and again.as_json() == plan.as_json()


def test_a_recovery_child_of_it_keeps_its_digest(tmp_path: Path) -> None:
    data = _plan(tmp_path).as_json()
    recovery = {"parent": "run-1", "mode": "undispatched", "cells": ["c-1"], "cells_sha256": "0" * 64,
                "snapshot": {"status": "failed", "plan_sha256": "1" * 64, "total": 4, "known_cost_usd": 0.25},
                "recovery_plan_sha256": "2" * 64}
    child = {**data, "recovery": recovery,
             "execution_cells": [["hle-0", "strong"]], "total": 1, "preview_context": {"session_id": "s"},
             "statistics": {**data["statistics"], "early_stop": None}}
    child.pop("plan_sha256")
    assert check_frozen(child, refreeze=True).plan_sha256 == CHILD_SHA256
