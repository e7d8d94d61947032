"""Issue 13, item 4: upstream's manifest fields with their upstream meaning — inline `cases`,
`auxiliary_targets`, `benchmark_options`, `experiment` (test_actors), `baseline_run_id` (candidate
plans) and `limits.max_calls_per_case`."""

from __future__ import annotations

from typing import Any

import pytest

from srbench.stages.datasets.build import decode_cases

from .helpers import Api, manifest, single


@pytest.fixture
def ds(api: Api, prepare: Any, sim: Any) -> dict[str, Any]:
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    return prepare("mmlu-pro", limit=4)


def _cases(ds: dict[str, Any]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in decode_cases(open(ds["path"], "rb").read())]


def test_inline_cases_become_a_dataset_of_the_store(api: Api, ds: dict[str, Any]) -> None:
    cases = _cases(ds)[:3]
    m = {k: v for k, v in manifest(ds, [{"id": "strong"}]).items() if k != "dataset"}
    planned = api.ok("POST", "/plans", {"manifest": {**m, "cases": cases}})
    frozen = planned["manifest"]
    assert planned["total"] == 3 and frozen["dataset"]["custom_subset"] is True
    registered = api.ok("GET", f"/datasets/{frozen['dataset']['id']}")
    assert registered["case_count"] == 3 and registered["custom_subset"] is True
    assert "inline" in registered["name"]
    again = api.ok("POST", "/plans", {"manifest": {**m, "cases": cases}})
    assert again["plan_sha256"] == planned["plan_sha256"]                   # the same cases, the same plan
    run = api.ok("POST", "/runs", {"manifest": frozen})
    assert api.wait(run["id"])["status"] == "completed"
    # with a dataset, inline cases must be its cases
    full = manifest(ds, [{"id": "strong"}])
    assert api.ok("POST", "/plans", {"manifest": {**full, "cases": _cases(ds)}})["total"] == 4
    changed = _cases(ds)
    changed[0]["answer"] = "Z"
    msg = api.error("POST", "/plans", {"manifest": {**full, "cases": changed}}, 400, "invalid_input")
    assert "differ from the dataset" in msg
    assert "cases" in api.error("POST", "/plans", {"manifest": {**m, "cases": [{"id": "x"}]}}, 400)
    assert "duplicate" in api.error("POST", "/plans", {"manifest": {**m, "cases": cases + cases[:1]}}, 400)


def test_limits_max_calls_per_case_is_frozen_and_checked(api: Api, ds: dict[str, Any]) -> None:
    m = manifest(ds, [{"id": "strong"}])
    frozen = api.ok("POST", "/plans", {"manifest": {**m, "limits": {**m["limits"], "max_calls_per_case": 32}}})
    assert frozen["manifest"]["limits"]["max_calls_per_case"] == 32
    plain = api.ok("POST", "/plans", {"manifest": m})["manifest"]
    assert "max_calls_per_case" not in plain["limits"] and plain["plan_sha256"] != frozen["plan_sha256"]
    for bad in (0, 257, "many"):
        msg = api.error("POST", "/plans", {"manifest": {**m, "limits": {**m["limits"], "max_calls_per_case": bad}}},
                        400, "invalid_input")
        assert "max_calls_per_case" in msg


def test_benchmark_options_and_auxiliary_targets(api: Api, ds: dict[str, Any], service: Any) -> None:
    m = manifest(ds, [{"id": "strong"}])
    # the local operator may give options (here: none that apply to mmlu-pro) and auxiliary targets inline
    assert api.ok("POST", "/plans", {"manifest": {**m, "benchmark_options": {}, "auxiliary_targets": {}}})
    bad = api.error("POST", "/plans", {"manifest": {**m, "benchmark_options": []}}, 400)
    assert "benchmark_options" in bad
    # a named actor's options must be the operator's
    alice = Api(service.url, service.token)
    alice.http.headers.update({"X-SR-Bench-Actor-ID": "alice", "X-SR-Bench-Actor-Role": "write"})
    try:
        other = {"hle": {"judge": "strong", "grader_version": "sr-bench-reference-judge-v1"}}
        alice.error("POST", "/plans", {"manifest": {**m, "benchmark_options": other}}, 403, "options_override")
        alice.error("POST", "/plans", {"manifest": {**m, "auxiliary_targets": {"judge": single("judge", "http://x")}}},
                    403, "target_override")
        assert alice.ok("POST", "/plans", {"manifest": {**m, "benchmark_options": {}}})["status"] == "validated"
    finally:
        alice.close()


def test_a_manifest_carrying_a_reviewed_hash_must_still_freeze_to_it(api: Api, ds: dict[str, Any]) -> None:
    m = manifest(ds, [{"id": "strong"}])
    reviewed = api.ok("POST", "/plans", {"manifest": m})["plan_sha256"]
    run = api.ok("POST", "/runs", {"manifest": {**m, "plan_sha256": reviewed}})
    assert run["manifest"]["plan_sha256"] == reviewed
    api.wait(run["id"])
    status, body = api.post("/runs", {"manifest": {**m, "plan_sha256": "f" * 64}})
    assert status == 400 and body["code"] == "reviewed_plan_changed" and body["dispatch_started"] is False
