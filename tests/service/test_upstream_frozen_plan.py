"""Issue 39, item 2: `POST /runs` takes a plan frozen by upstream's `vllm-sr benchmark plan --output` (written
here by hand in upstream's frozen form, so this runs without the upstream package; tests/upstream drives the
real CLI): its hash checked by upstream's rule, the protocol fields sr-bench also defines agreeing or refused by
name, the fields sr-bench does not use kept with the plan, a resubmission bound to the same run."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .helpers import Api, single

UPSTREAM_LIMITS = {"concurrency": 2, "total_timeout_s": 20.0, "idle_timeout_s": 10, "max_output_tokens": 4096,
                   "max_output_chars": 131072, "max_log_bytes": 8388608, "repetition_window": 128,
                   "repetition_limit": 5, "max_cost_usd": 5.0, "max_run_seconds": 60, "max_calls_per_case": 32,
                   "case_timeout_s": 20}
WEIGHTS = {"mmlu-pro": 0.10, "simpleqa-verified": 0.10, "gpqa-diamond": 0.15, "hle": 0.15, "arc-agi-2": 0.10,
           "livecodebench": 0.10, "scicode": 0.10, "terminal-bench-2.1": 0.10, "tau3": 0.10}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                          .encode()).hexdigest()


def _numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def _sealed(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan with upstream's receipt: the SHA-256 of its canonical JSON, integral numbers as integers."""
    body = {k: v for k, v in plan.items() if k != "plan_sha256"}
    return {**body, "plan_sha256": _digest(_numbers(body))}


@pytest.fixture
def frozen(api: Api, prepare: Any) -> Any:
    ds = prepare("mmlu-pro", limit=4)
    cases = [json.loads(line) for line in open(ds["path"], "rb").read().splitlines() if line.strip()]
    with SimulatorThread(models=[SimModel("strong", skill=0.9)], answer_key=load_answer_key(ds["path"])) as sim:
        plan = {"version": "sr-bench-1.0", "name": "frozen upstream", "profile": "smoke", "seed": ds["seed"],
                "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                "targets": [single("strong", sim.v1_url, "strong")], "limits": dict(UPSTREAM_LIMITS),
                "mode": "live", "cost_policy": "require_priced", "cases": cases, "output_policy": "bounded",
                "sampling": {"temperature": 0, "max_tokens": 4096}, "case_sha256": _digest(cases),
                "benchmark_weights": dict(WEIGHTS), "adapter_versions": {"mmlu-pro": "sr-bench-mcq-final-v2"}}
        yield _sealed(plan)


def test_an_upstream_frozen_plan_runs_and_keeps_what_sr_bench_does_not_use(api: Api, frozen: dict[str, Any]) -> None:
    run = api.ok("POST", "/runs", {"manifest": frozen, "idempotency_key": "up-1"})
    assert api.wait(run["id"])["status"] == "completed" and run["created"] is True
    kept = api.ok("GET", f"/runs/{run['id']}")["manifest"]["upstream"]
    assert kept["plan_sha256"] == frozen["plan_sha256"]
    assert kept["fields"] == {"limits.max_log_bytes": 8388608, "output_policy": "bounded",
                              "case_sha256": frozen["case_sha256"], "benchmark_weights": WEIGHTS,
                              "adapter_versions": {"mmlu-pro": "sr-bench-mcq-final-v2"}}
    report = api.ok("GET", f"/runs/{run['id']}/report")
    assert report["summary"]["targets"][0]["total"] == 4
    again = api.ok("POST", "/runs", {"manifest": frozen, "idempotency_key": "up-1"})
    assert again["id"] == run["id"] and again["created"] is False
    # the same plan sent without its receipt is frozen anew, as upstream does (another plan: no receipt kept)
    loose = {k: v for k, v in frozen.items() if k != "plan_sha256"}
    planned = api.ok("POST", "/plans", {"manifest": loose})
    assert planned["manifest"]["upstream"]["plan_sha256"] is None and planned["total"] == 4


def test_an_edited_upstream_plan_is_refused_before_anything_is_sent(api: Api, frozen: dict[str, Any]) -> None:
    edited = {**frozen, "limits": {**frozen["limits"], "concurrency": 3}}
    api.error("POST", "/runs", {"manifest": edited}, 400, "reviewed_plan_changed")
    assert api.run_count() == 0


@pytest.mark.parametrize(("change", "named"), [
    ({"output_policy": "native"}, "output_policy 'native'"),
    ({"benchmark_weights": {**WEIGHTS, "gpqa-diamond": 0.2}}, "benchmark_weights.gpqa-diamond: 0.2 is not"),
    ({"benchmark_weights": {"mmlu-pro": 0.1}}, "benchmark_weights: hle is missing"),
    ({"adapter_versions": {"mmlu-pro": "another-v1"}}, "adapter_versions.mmlu-pro: 'another-v1'"),
    ({"case_sha256": "0" * 64}, "case_sha256: not the digest of the plan's cases"),
    ({"execution_cells": [{"case_id": "x", "target_id": "strong"}]}, "execution_cells:"),
])
def test_a_field_that_disagrees_with_sr_bench_is_refused_by_name(api: Api, frozen: dict[str, Any],
                                                                  change: dict[str, Any], named: str) -> None:
    msg = api.error("POST", "/runs", {"manifest": _sealed({**frozen, **change})}, 400, "invalid_input")
    assert named in msg and msg.startswith("upstream-frozen plan")
    assert api.run_count() == 0
