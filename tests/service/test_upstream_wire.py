"""Issue 13, items 1 and 5: sr-bench's service answers upstream's sr-bench 1.0 wire format.

- Every exchange of `upstream_wire.json` (examples written from upstream's Dashboard types, CLI client
  and handlers) is replayed against the real service on a store with a finished baseline and a router
  candidate: status, error code and response shape.
- A client that follows upstream's client protocol (`upstream_client.py`: bare /health readiness, the
  store identity check, never-retried requests, cursor pages) runs the whole loop: prepare (a
  background preparation job) → select → compose → plan → run → show → report → candidate plan →
  compare → recover, with nothing sr-bench-specific in its requests but the source of the preparation.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .helpers import Api, freeze, manifest
from .upstream_client import (
    DashboardProxy,
    UpstreamClient,
    UpstreamError,
    dataset_cases,
    datasets,
    recover_from_file,
    token_total,
)
from .upstream_client import dataset as open_dataset
from .upstream_client import prepare as upstream_prepare

EXAMPLES = json.loads((Path(__file__).parent / "upstream_wire.json").read_text())["exchanges"]
PRICES = {"strong": {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0},
          "weak": {"input": 0.2, "cached_input": 0.1, "cache_write": 0.2, "output": 0.8}}
PATTERNS = {"str": lambda v: isinstance(v, str), "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool), "object": lambda v: isinstance(v, dict),
            "list": lambda v: isinstance(v, list),
            "iso": lambda v: isinstance(v, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", v),
            "sha256": lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v),
            "run-id": lambda v: isinstance(v, str) and re.fullmatch(r"run-[0-9a-f]{20}", v),
            "call-id": lambda v: isinstance(v, str) and re.fullmatch(r"call-[0-9a-f]{32}", v),
            "exp-id": lambda v: isinstance(v, str) and re.fullmatch(r"exp-[0-9a-f]{32}", v),
            "prep-id": lambda v: isinstance(v, str) and re.fullmatch(r"prep-[0-9a-f]{32}", v)}


def mismatch(shape: Any, value: Any, where: str, ctx: dict[str, Any]) -> str | None:
    """Where `value` does not have `shape` (see upstream_wire.json's `about`), or None."""
    if isinstance(shape, str) and shape.startswith("<") and shape.endswith(">"):
        kinds = shape[1:-1].split("|")
        if value is None and "null" in kinds:
            return None
        return None if any(PATTERNS[k](value) for k in kinds if k != "null") else f"{where}: {value!r} is not {shape}"
    if isinstance(shape, str) and re.fullmatch(r"{\w+}", shape):
        shape = ctx[shape[1:-1]]
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where}: {type(value).__name__}, not an object"
        for key, sub in shape.items():
            if key not in value:
                return f"{where}.{key}: missing"
            bad = mismatch(sub, value[key], f"{where}.{key}", ctx)
            if bad:
                return bad
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where}: {type(value).__name__}, not a list"
        if not shape:
            return None if not value else f"{where}: {len(value)} items, none expected"
        if not value:
            return f"{where}: empty"
        return next((b for i, v in enumerate(value) if (b := mismatch(shape[0], v, f"{where}[{i}]", ctx))), None)
    return None if shape == value else f"{where}: {value!r} != {shape!r}"


def _fill(value: Any, ctx: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return ctx[value[1:]]
    if isinstance(value, dict):
        return {k: _fill(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ctx) for v in value]
    return value


@pytest.fixture
def world(api: Api, prepare: Any) -> Iterator[dict[str, Any]]:
    """A finished two-model baseline and a finished router candidate on the same smoke questions."""
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500, keywords=("math", "physics"),
                        config_hash="cfg-7")
    models = [SimModel("strong", skill=0.85, cached_fraction=0.5), SimModel("weak", skill=0.45)]
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": _targets(sim)})
        base = manifest(ds, [{"id": "strong"}, {"id": "weak"}])
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, base)})["id"]
        cand_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "mom"}]))})["id"]
        assert api.wait(run_id)["status"] == api.wait(cand_id)["status"] == "completed"
        frozen = freeze(api, base)
        edited = copy.deepcopy(frozen)
        edited["limits"]["concurrency"] = 3                      # its plan_sha256 left as reviewed
        other = freeze(api, dict(base, name="another plan"))     # a different plan under a used key
        unhashed = {k: v for k, v in frozen.items() if k != "plan_sha256"}    # upstream re-freezes it
        calls = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
        yield {"dataset_id": ds["id"], "dataset_ref": ds["ref"], "dataset_sha256": ds["sha256"], "run_id": run_id, "candidate_run_id": cand_id,
               "call_id": calls[0]["id"], "baseline_manifest": base, "frozen_manifest": frozen,
               "edited_manifest": edited, "unhashed_manifest": unhashed, "seed": ds["seed"],
               "other_manifest": other, "sim": sim}


def _targets(sim: SimulatorThread) -> list[dict[str, Any]]:
    return [{"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
             "prices": {"strong": PRICES["strong"]}},
            {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": {"weak": PRICES["weak"]}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-7", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1,
             "models": ["strong", "weak"]}]


def test_every_upstream_example_is_answered_in_upstream_shape(api: Api, service: Any, world: dict[str, Any]) -> None:
    import httpx

    ctx = dict(world)
    problems = []
    for ex in EXAMPLES:
        token = ex.get("token", service.token)
        headers = {} if token is None else {"Authorization": "Bearer " + token}
        if ex.get("actor"):
            headers |= {"X-SR-Bench-Actor-ID": ex["actor"][0], "X-SR-Bench-Actor-Role": ex["actor"][1]}
        url = service.url + ("" if ex.get("bare") else "/api/sr-bench/v1") + re.sub(
            r"{(\w+)}", lambda m: ctx[m.group(1)], ex["path"])
        resp = httpx.request(ex["method"], url, headers=headers, json=_fill(ex["body"], ctx) if "body" in ex else None,
                             timeout=30, trust_env=False)
        body = resp.json()
        if resp.status_code != ex["status"]:
            problems.append(f"{ex['name']}: HTTP {resp.status_code}, expected {ex['status']}: {str(body)[:300]}")
            continue
        bad = mismatch(ex["response"], body, "answer", ctx)
        if bad:
            problems.append(f"{ex['name']}: {bad}")
        for name, key in (ex.get("save") or {}).items():
            ctx[name] = body[key]
        for name, keys in (ex.get("save_nested") or {}).items():
            ctx[name] = body[keys[0]][keys[1]]
    assert not problems, "\n".join(problems)
    assert len(EXAMPLES) >= 50


def _wait(client: UpstreamClient, path: str, done: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = client.request("GET", path)
        if done(value):
            return value
        assert time.monotonic() < deadline, value
        time.sleep(0.05)


TERMINAL = ("completed", "failed", "cancelled", "interrupted")


def test_an_upstream_client_runs_the_whole_loop(api: Api, service: Any, tmp_path: Path, prepare: Any) -> None:
    client = UpstreamClient(service.url, service.store_dir, service.token)
    # readiness and store identity, as upstream's client checks them
    assert client.ready()
    with pytest.raises(ValueError, match="different sr-bench store"):
        UpstreamClient(service.url, tmp_path / "another-store", service.token).ready()
    with pytest.raises(ValueError, match="authentication failed"):
        UpstreamClient(service.url, service.store_dir, "wrong-token").request("GET", "/runs")

    # prepare: a background job (ARC-AGI-2 from its offline mirror: no network in tests), followed as
    # upstream's CLI follows it (`prepare`: 202 {"preparation": job}, then GET …/{id} {"preparation": job})
    request = {"benchmark": "arc-agi-2", "profile": "smoke", "source": "mirror"}
    prepared = upstream_prepare(client, request)
    job = client.request("POST", "/dataset-preparations", request)["preparation"]       # deduplicated
    assert job["status"] == "completed" and job["dataset"]["id"] == prepared["id"]
    assert [p["id"] for p in client.request("GET", "/dataset-preparations")["preparations"]] == [job["id"]]
    selection = client.request("GET", "/datasets/selection?profile=smoke")
    arc = next(b for b in selection["benchmarks"] if b["id"] == "arc-agi-2")
    assert arc["eligible"] and arc["source_ids"] == [prepared["id"]] and arc["case_count"] == 2
    dataset = client.request("POST", "/datasets/compose", {"dataset_ids": arc["source_ids"],
                                                           "benchmarks": ["arc-agi-2"]})["dataset"]
    # the newer Dashboard prepares every chosen benchmark in one job: the prepared one is reused, the
    # missing one prepared, and the job's dataset is their composition (upstream's exact body for the first)
    again = client.request("POST", "/dataset-preparations", {"benchmarks": ["arc-agi-2"], "profile": "smoke",
                                                             "seed": dataset["seed"]})["preparation"]
    assert again["items"][0]["benchmark"] == "arc-agi-2"
    assert upstream_prepare(client, {"benchmarks": ["arc-agi-2"], "profile": "smoke",
                                     "seed": dataset["seed"]})["id"] == dataset["id"]
    done = client.request("GET", f"/dataset-preparations/{again['id']}")["preparation"]
    assert done["items"] == [{"benchmark": "arc-agi-2", "status": "completed", "phase": "completed", "reused": True,
                              "source_ids": [prepared["id"]]}]
    mmlu = prepare("mmlu-pro")                                  # prepared before (the same default seed)
    both = upstream_prepare(client, {"benchmarks": ["mmlu-pro", "arc-agi-2"], "profile": "smoke"})
    assert both["benchmarks"] == ["arc-agi-2", "mmlu-pro"] and both["case_count"] == mmlu["case_count"] + 2
    # the Dashboard opens every listed dataset through its proxy (64-hex ids only): each answers 200
    proxy = DashboardProxy(client)
    listed = datasets(proxy)
    assert {both["id"], prepared["id"], mmlu["id"]} <= {d["id"] for d in listed}
    for d in listed:
        assert open_dataset(proxy, d["id"])["id"] == dataset_cases(proxy, d["id"], limit=2)["dataset_id"] == d["id"]

    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=10**6, keywords=(), config_hash="cfg-7")
    with SimulatorThread(models=[SimModel("strong", skill=0.9), SimModel("weak", skill=0.3)], router=router,
                         answer_key=load_answer_key(dataset["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [*_targets(sim), {"id": "dead", "kind": "single", "model": "dead",
                                                                 "base_url": "http://127.0.0.1:9/v1",
                                                                 "prices": {"dead": PRICES["weak"]}}]})
        base = {"version": "sr-bench-1.0", "name": "upstream loop", "profile": "smoke", "seed": dataset["seed"],
                "dataset": {"path": dataset["path"], "sha256": dataset["sha256"]},
                "targets": [{"id": "strong"}, {"id": "weak"}],
                "limits": {"concurrency": 2, "total_timeout_s": 10, "idle_timeout_s": 5, "max_run_seconds": 30}}
        plan = client.request("POST", "/plans", {"manifest": base})
        assert plan["status"] == "validated" and plan["model_requests"] == 0 and plan["total"] == 4
        run = client.request("POST", "/runs", {"manifest": plan["manifest"], "idempotency_key": "loop-1"})
        assert run["status"] in ("queued", "running", "completed") and run["manifest"]["plan_sha256"] == plan["plan_sha256"]
        assert client.request("POST", "/runs", {"manifest": plan["manifest"], "idempotency_key": "loop-1"})["id"] == run["id"]
        run = _wait(client, f"/runs/{run['id']}", lambda r: r["status"] in TERMINAL)
        assert run["status"] == "completed" and run["progress"] == {**run["progress"], "total": 4, "completed": 4}

        # show: every page by cursor, one full call, the events
        results = client.pages(f"/runs/{run['id']}/results", "results", limit=3)
        calls = client.pages(f"/runs/{run['id']}/calls", "calls", limit=3)
        assert len(results) == len(calls) == 4 and len({c["id"] for c in calls}) == 4
        assert {(r["case_id"], r["target_id"]) for r in results} == {(c["case_id"], c["target_id"]) for c in calls}
        one = client.request("GET", f"/runs/{run['id']}/calls/{calls[-1]['id']}")
        assert one["role"] == "subject" and one["record"]["status"] == "completed"
        events = client.request("GET", f"/runs/{run['id']}/events?after=0")["events"]
        assert events[0]["kind"] == "created" and [e["seq"] for e in events] == sorted(e["seq"] for e in events)
        assert client.request("GET", f"/runs/{run['id']}/events?after={events[-1]['seq']}")["events"] == []

        report = client.request("GET", f"/runs/{run['id']}/report")
        assert {t["id"] for t in report["summary"]["targets"]} == {"strong", "weak"} and report["status"] == "completed"
        assert all(token_total(t["tokens"]) for t in report["summary"]["targets"])     # the Dashboard shows a number

        # a candidate on the baseline's protocol, then compare
        cand_plan = client.request("POST", f"/runs/{run['id']}/candidate-plan", {"target_ids": ["mom"],
                                                                                 "name": "router candidate"})
        assert cand_plan["manifest"]["baseline_run_id"] == run["id"]
        cand = client.request("POST", "/runs", {"manifest": cand_plan["manifest"], "idempotency_key": "loop-2"})
        assert _wait(client, f"/runs/{cand['id']}", lambda r: r["status"] in TERMINAL)["status"] == "completed"
        cmp = client.request("POST", "/comparisons", {"baseline_run_id": run["id"], "candidate_run_id": cand["id"]})
        row = cmp["comparisons"][0]
        assert row["candidate_target_id"] == "mom" and row["baseline_target_id"] == cmp["baseline_selected_target_id"]
        assert row["paired_cases"] == 2 and row["wins"] + row["losses"] + row["ties"] == 2
        mom = client.request("GET", f"/runs/{cand['id']}/report")["summary"]["targets"][0]
        assert sum(mom["decisions"].values()) == 2 and sum(mom["selected_models"].values()) == 2

        # recover: a run whose target cannot be reached, continued by a child over the reviewed cells
        dead = client.request("POST", "/plans", {"manifest": {**base, "name": "unreachable", "targets": [{"id": "dead"}]}})
        parent = client.request("POST", "/runs", {"manifest": dead["manifest"], "idempotency_key": "loop-3"})
        parent = _wait(client, f"/runs/{parent['id']}", lambda r: r["status"] in TERMINAL)
        assert parent["status"] == "failed"
        review = client.request("POST", f"/runs/{parent['id']}/recover-plan", {"mode": "failed"})
        if not review["eligible_cells"]:
            review = client.request("POST", f"/runs/{parent['id']}/recover-plan", {"mode": "undispatched"})
        assert review["eligible_cells"] and review["counts"]["eligible"] == len(review["eligible_cells"])
        # upstream's `recover --plan FILE` sends the file's selected_cells (sr-bench's cell ids) as it got them
        saved = tmp_path / "recovery.json"
        saved.write_text(json.dumps(review))
        child = recover_from_file(client, parent["id"], saved, "loop-recovery", True)
        assert child["manifest"]["recovery"]["parent"] == parent["id"] and child["experiment_roles"] == ["recovery"]
        assert recover_from_file(client, parent["id"], saved, "loop-recovery", True)["id"] == child["id"]
        # upstream's Dashboard sends {case_id, target_id} cells: the same binding
        submission = {"mode": review["mode"], "plan_sha256": review["plan_sha256"], "cells": review["eligible_cells"],
                      "idempotency_key": "loop-recovery", "acknowledge_new_attempt": True}
        assert client.request("POST", f"/runs/{parent['id']}/recover", submission)["id"] == child["id"]
        # sr-bench's CLI sends the file whole; cells in upstream's form there bind the same child too
        edited = {**review, "selected_cells": review["eligible_cells"]}
        assert client.request("POST", f"/runs/{parent['id']}/recover",
                              {"plan": edited, "idempotency_key": "loop-recovery"})["id"] == child["id"]
        with pytest.raises(UpstreamError) as refused:       # the plan is stale now: its cells are claimed
            recover_from_file(client, parent["id"], saved, "loop-recovery-2", True)
        assert refused.value.status == 400 and refused.value.body["code"] == "recovery_plan_required"
        assert refused.value.body["dispatch_started"] is False
        _wait(client, f"/runs/{child['id']}", lambda r: r["status"] in TERMINAL)
    client.close()


def test_the_shape_matcher_fails_where_it_should() -> None:
    ctx = {"run_id": "run-" + "a" * 20}
    assert mismatch({"a": "<int>", "b": ["<str>"]}, {"a": 1, "b": ["x", "y"], "extra": 0}, "x", ctx) is None
    assert mismatch({"a": "<int>"}, {"a": True}, "x", ctx) == "x.a: True is not <int>"
    assert mismatch({"a": "<int|null>"}, {"a": None}, "x", ctx) is None
    assert mismatch({"a": "<int>"}, {}, "x", ctx) == "x.a: missing"
    assert mismatch(["<str>"], [], "x", ctx) == "x: empty"
    assert mismatch([], [1], "x", ctx) == "x: 1 items, none expected"
    assert mismatch({"id": "{run_id}"}, {"id": "run-" + "b" * 20}, "x", ctx) is not None
    assert mismatch("<iso>", "2026-01-02T03:04:05.123456+00:00", "x", ctx) is None
    assert mismatch("<iso>", "2026-01-02 03:04:05", "x", ctx) is not None


def test_the_wire_figures_of_a_report_hold_a_page_of_rows_not_every_row(tmp_path) -> None:
    """Issue 42 (item 3): upstream's figures of a 100k-cell report were computed over every row as a model at
    once (~500 MiB in the service for GET /report); now one pass keeps counters and floats. Their peak
    memory grows by under 500 bytes a row (~5 KB before: every row's model), and the figures are those `metric` gives over
    the whole list."""
    import tracemalloc

    from srbench.cas import ObjectStore
    from srbench.schemas.results import ResultRow
    from srbench.service.wire.figures import ReportFigures, metric
    from srbench.stages.report.results import write_results

    store = ObjectStore(str(tmp_path / "cas"))

    def report(n: int) -> dict[str, Any]:
        rows = [{"benchmark": "mmlu-pro", "cache_neutral_cost_usd": None, "call": None, "case_id": f"mmlu-pro/{i}",
                 "cell_id": f"c{i:08d}", "config_hash_seen": None, "correct": i % 3 == 0, "cost_basis": "single",
                 "cost_unknown_reason": None, "cost_usd": 0.001 * (i % 7), "decision": None,
                 "error_class": None if i % 11 else "http_500", "finish_reason": "stop", "grade": None,
                 "grade_status": "correct" if i % 3 == 0 else "incorrect", "has_call": bool(i % 11), "http_status": 200,
                 "judge_call": None, "judge_cost_usd": 0, "latency_s": 0.01 * (i % 13), "outside_pool": [],
                 "priced_models": [], "published_score": 0, "response_model": f"m{i % 3}", "selected_model": None,
                 "seq": i, "state": "completed" if i % 11 else "failed", "stratum": "other", "target_id": f"t{i % 2}",
                 "ttft_s": 0.005, "usage": {"cache_write": 0, "cached_input": 0, "input": 100 + i % 5, "output": 6}}
                for i in range(n)]
        return {"mode": "live", "results": write_results(store, rows), "summary": {"targets": [
            {"target_id": "t0", "kind": "single"}, {"target_id": "t1", "kind": "single"}]}}

    def peak(rep: dict[str, Any]) -> int:
        tracemalloc.start()
        try:
            ReportFigures(store)._compute(rep)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    small, big = report(1_000), report(4_000)
    figures = ReportFigures(store)._compute(big)        # (the store's reads warmed up)
    per_row = (peak(big) - peak(small)) / 3_000
    assert per_row < 500, f"{per_row:.0f} bytes a row"
    from srbench.stages.report.results import iter_rows
    rows = [ResultRow.model_validate(r) for r in iter_rows(store, big["results"])]
    assert figures.targets["t1"] == metric([r for r in rows if r.target_id == "t1"], {}, False).model_dump(mode="json")
    assert figures.failure is not None and figures.failure["case_id"] == "mmlu-pro/0"
