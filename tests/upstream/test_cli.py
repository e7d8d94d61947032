"""Issue 39, items 1-3: upstream's released `vllm-sr benchmark` CLI (vllm-sr 0.4.0 from PyPI, unchanged) drives
sr-bench's real service on loopback — every command of its `benchmark` group, asserting what its user sees:
the exit code, the run finishing, the figures (the same ones sr-bench's own API answers).

The tests share one service (`world`) and run in file order: later commands read earlier runs.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from srbench.benchmarks import sources as benchmark_sources
from srbench.simulate import samples
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .commands import covers
from .conftest import PRICES, World, manifest, registered

RUNS: dict[str, str] = {}        # what the earlier tests made, by name


def _report(w: World, run_id: str) -> dict[str, Any]:
    return w.api("GET", f"/runs/{run_id}/report")


@covers("catalog", "setup")
def test_local_commands(world: World) -> None:
    catalog = world.up.json("catalog")
    assert catalog["version"] == "sr-bench-1.0" and len(catalog["benchmarks"]) == 9
    checks = world.up.json("setup", "--benchmark", "mmlu-pro")["benchmarks"]         # local: no service call
    assert checks == [{"benchmark": "mmlu-pro", "model_requests": 0, "installed": True}]


@covers("target register", "target list")
def test_targets(world: World) -> None:
    # `register` (in the fixture) wrote <store>/targets.json, which the service reads as its registry
    listed = world.up.json("target", "list")["targets"]
    assert sorted(t["id"] for t in listed) == ["dead", "mom", "strong", "weak"]
    assert {t["id"] for t in world.api("GET", "/targets")["targets"]} == {"strong", "weak", "mom", "dead"}


@covers("dataset options", "dataset prepare", "dataset prepare --local", "dataset preparations", "dataset show",
        "dataset combine", "dataset exclusions")
def test_datasets(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    options = world.up.json("dataset", "options")
    assert "arc-agi-2" in json.dumps(options)
    # no network in tests: the pinned download fails at once and the service reads ARC-AGI-2's offline mirror
    def offline(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("offline", request=request)
    real = benchmark_sources._client
    monkeypatch.setattr(benchmark_sources, "_client",
                        lambda transport, timeout_s: real(httpx.MockTransport(offline), timeout_s))
    prepared = world.up.run("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke")
    dataset = json.loads(prepared.stdout)
    assert "submitted" in prepared.stderr and dataset["benchmarks"] == ["arc-agi-2"] and dataset["case_count"] == 2
    jobs = world.up.json("dataset", "preparations")["preparations"]
    assert len(jobs) == 1 and jobs[0]["status"] == "completed"
    one = world.up.json("dataset", "preparations", jobs[0]["id"])["preparation"]
    assert one["dataset"]["id"] == dataset["id"]
    listed = world.up.json("dataset", "show")["datasets"]
    assert {dataset["id"], world.dataset["id"]} <= {d["id"] for d in listed}
    local = world.up.json("dataset", "show", str(world.cases_file))       # a file: read locally, as upstream
    assert len(local) == world.dataset["case_count"]
    refused = world.up.run("dataset", "prepare", "--benchmark", "mmlu-pro", "--local", code=1)
    assert "--local cannot be combined with --url" in refused.stderr
    # combine and exclusions work on upstream's own store files, without the service: sr-bench's datasets are
    # not theirs (its service does both: POST /datasets/combine, /datasets/compose, /datasets/exclusions)
    world.up.write("ds.json", world.api("GET", f"/datasets/{world.dataset['id']}"))
    assert world.up.run("dataset", "combine", "ds.json", code=1).returncode == 1
    excluded = world.up.run("dataset", "exclusions", "--dataset", world.dataset["id"], "--output", "x.json", code=1)
    assert "datasets/" + world.dataset["id"] in excluded.stderr           # it looks in the store's files
    assert len(world.api("GET", "/datasets")["datasets"]) == len(listed)          # the service saw nothing


@covers("plan", "run")
def test_an_upstream_frozen_plan_runs(world: World) -> None:
    """Item 2: upstream's documented flow, `plan --output F` then `run --manifest F`, attached."""
    up = world.up
    # the path sr-bench answers for a dataset is a .jsonl name of its object file: upstream's plan reads it as it is
    assert world.dataset["path"].endswith(".jsonl")
    up.write("store-path.json", {**manifest(world, registered(world, "strong")),
                                 "dataset": {"path": world.dataset["path"], "sha256": world.dataset["sha256"]}})
    by_store_path = up.json("plan", "--manifest", "store-path.json")
    assert by_store_path["total"] == world.dataset["case_count"]
    up.write("m.json", manifest(world, registered(world, "strong", "weak")))
    planned = up.json("plan", "--manifest", "m.json", "--output", "f.json")
    frozen = up.read("f.json")
    assert planned["total"] == 2 * world.dataset["case_count"] and frozen["plan_sha256"] == planned["plan_sha256"]
    done = up.run("run", "--manifest", "f.json", "--idempotency-key", "flow-1")
    report = json.loads(done.stdout)
    assert "submitted" in done.stderr and report["status"] == "completed"
    run_id = report["run_id"]
    # the figures the user sees are sr-bench's own
    ours = _report(world, run_id)
    assert [(t["id"], t["correct"], t["total"]) for t in report["summary"]["targets"]] == [
        (t["target_id"], t["correct"], t["total"]) for t in ours["summary"]["targets"]]
    assert all(t["total"] == world.dataset["case_count"] for t in report["summary"]["targets"])
    # the plan sr-bench froze keeps upstream's receipts and the fields it does not use
    run = world.api("GET", f"/runs/{run_id}")
    kept = run["manifest"]["upstream"]
    assert kept["plan_sha256"] == frozen["plan_sha256"]
    assert kept["fields"]["limits.max_log_bytes"] == frozen["limits"]["max_log_bytes"]
    assert kept["fields"]["case_sha256"] == frozen["case_sha256"] and kept["fields"]["output_policy"] == "bounded"
    # resubmitting is idempotent: the same key, the same run (no new request)
    again = up.json("run", "--manifest", "f.json", "--idempotency-key", "flow-1", "--detach")
    assert again["id"] == run_id and again["created"] is False
    RUNS["baseline"] = run_id
    # an unfrozen upstream manifest runs too (frozen on submission), detached
    detached = up.json("run", "--manifest", "m.json", "--detach")
    assert detached["status"] in ("queued", "running", "completed") and detached["id"] != run_id


def test_an_edited_or_disagreeing_upstream_plan_is_refused(world: World) -> None:
    """Item 2: upstream's receipt is checked by upstream's rule; a field sr-bench defines must agree."""
    from srbench.service.wire.upstream_plan import upstream_plan_sha256

    up = world.up
    frozen = up.read("f.json")
    edited = {**frozen, "limits": {**frozen["limits"], "concurrency": 3}}          # its plan_sha256 as reviewed
    up.write("edited.json", edited)
    out = up.run("run", "--manifest", "edited.json", code=1)
    assert "reviewed plan changed" in out.stderr
    bad = {**frozen, "benchmark_weights": {**frozen["benchmark_weights"], "hle": 0.2},
           "adapter_versions": {"mmlu-pro": "sr-bench-mcq-final-v9"}}
    bad["plan_sha256"] = upstream_plan_sha256(bad)
    up.write("bad.json", bad)
    out = up.run("run", "--manifest", "bad.json", code=1)
    assert "benchmark_weights.hle: 0.2 is not sr-bench's fixed weight 0.15" in out.stderr
    assert "adapter_versions.mmlu-pro: 'sr-bench-mcq-final-v9'" in out.stderr
    cells = {**frozen, "cases": frozen["cases"][:-1]}
    cells["plan_sha256"] = upstream_plan_sha256(cells)
    up.write("cells.json", cells)
    assert "case_sha256: not the digest of the plan's cases" in up.run("run", "--manifest", "cells.json", code=1).stderr
    before = len(world.api("GET", "/runs")["runs"])
    assert len(world.api("GET", "/runs")["runs"]) == before                 # nothing was created


@covers("runs", "show RUN", "show RUN --results", "show RUN --calls", "show RUN --calls --active",
        "show RUN --events", "show RUN --call-id ID", "report", "report --output")
def test_reading_a_run(world: World) -> None:
    up, run_id = world.up, RUNS["baseline"]
    assert run_id in [r["id"] for r in up.json("runs")["runs"]]
    run = up.json("show", run_id)
    assert run["status"] == "completed" and run["progress"]["completed"] == run["progress"]["total"]
    results = up.json("show", run_id, "--results", "--limit", "5")
    assert len(results["results"]) == 5 and results["next_cursor"] is not None
    calls = up.json("show", run_id, "--calls", "--limit", "500")["calls"]
    assert len(calls) == run["progress"]["total"] and all(c["status"] == "completed" for c in calls)
    assert up.json("show", run_id, "--calls", "--active")["calls"] == []
    events = up.json("show", run_id, "--events")["events"]
    assert events[0]["kind"] == "created" and events[-1]["kind"] == "completed"
    one = up.json("show", run_id, "--call-id", calls[0]["id"])
    assert one["id"] == calls[0]["id"] and one["record"]["status"] == "completed"
    report = up.json("report", run_id, "--output", "report.json")
    assert up.read("report.json") == report and report["run_id"] == run_id


@covers("candidate-plan", "compare", "comparison-options")
def test_a_candidate_and_its_comparison(world: World) -> None:
    up, base = world.up, RUNS["baseline"]
    planned = up.json("candidate-plan", base, "--target", "mom", "--name", "router candidate")
    assert planned["manifest"]["baseline_run_id"] == base and planned["model_requests"] == 0
    up.write("candidate.json", planned["manifest"])
    report = json.loads(up.run("run", "--manifest", "candidate.json").stdout)
    assert report["status"] == "completed"
    cand = RUNS["candidate"] = report["run_id"]
    cmp = up.json("compare", base, cand)
    row = cmp["comparisons"][0]
    n = world.dataset["case_count"]
    assert row["candidate_target_id"] == "mom" and row["paired_cases"] == n
    assert row["wins"] + row["losses"] + row["ties"] == n
    ours = world.api("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand})
    assert row["quality_delta"] == ours["comparisons"][0]["quality_delta"]
    assert cand in [o["run_id"] for o in up.json("comparison-options", base)["options"]]


@covers("preview", "replay-options", "replay")
def test_preview_and_replay(world: World) -> None:
    up, base = world.up, RUNS["baseline"]
    up.write("preview.json", manifest(world, registered(world, "mom")))
    report = json.loads(up.run("preview", "--manifest", "preview.json").stdout)
    assert report["status"] == "completed" and report["mode"] == "preview"
    preview = report["run_id"]
    options = up.json("replay-options", base)
    assert preview in [o["run_id"] for o in options["options"]]
    replay = up.json("replay", "--baseline", base, "--preview", preview, "--idempotency-key", "replay-1")
    assert replay["mode"] == "replay" and replay["model_requests"] == 0
    assert up.json("replay", "--baseline", base, "--preview", preview, "--idempotency-key", "replay-1")["id"] == replay["id"]


@covers("regrade", "export", "reconcile-usage")
def test_derived_answers(world: World) -> None:
    up, base = world.up, RUNS["baseline"]
    regraded = up.json("regrade", base, "--output", "regrade.json")
    assert regraded["changed_count"] == up.read("regrade.json")["changed_count"] == 0
    assert regraded["model_requests"] == 0
    exported = up.json("export", base, "--output", "export.json")
    assert exported["case_count"] == world.dataset["case_count"] == len(up.read("export.json")["cases"])
    corrected = up.json("reconcile-usage", base)
    assert corrected["original_receipts_preserved"] is True


@covers("recover-plan", "recover")
def test_recovery(world: World) -> None:
    up = world.up
    up.write("dead.json", manifest(world, [{"id": "dead"}]))
    failed = up.run("run", "--manifest", "dead.json", code=2)            # a failed run: exit 2, its report printed
    parent = json.loads(failed.stdout)["run_id"]
    review = up.json("recover-plan", parent, "--mode", "failed", "--output", "recovery.json")
    if not review["eligible_cells"]:
        review = up.json("recover-plan", parent, "--output", "recovery2.json")
        (Path(up.cwd) / "recovery.json").write_text(json.dumps(review))
    assert review["parent_run_id"] == parent and review["eligible_cells"]
    child = up.json("recover", parent, "--plan", "recovery.json", "--idempotency-key", "rec-1",
                    "--acknowledge-new-attempt")
    assert child["manifest"]["recovery"]["parent"] == parent
    again = up.json("recover", parent, "--plan", "recovery.json", "--idempotency-key", "rec-1",
                    "--acknowledge-new-attempt")
    assert again["id"] == child["id"]


@covers("cancel")
def test_cancel(world: World) -> None:
    up = world.up
    with SimulatorThread(models=[SimModel("slow", skill=0.5, latency_s=30)]) as slow:
        target = {"id": "slow", "kind": "single", "base_url": slow.v1_url, "model": "slow",
                  "prices": {"slow": PRICES["weak"]}}
        up.write("slow.json", manifest(world, [target]))
        run = up.json("run", "--manifest", "slow.json", "--detach")
        cancelled = up.json("cancel", run["id"])
        assert cancelled["id"] == run["id"] and cancelled["cancel_requested"] is True
        end = time.monotonic() + 60
        while up.json("show", run["id"])["status"] not in ("cancelled", "failed", "completed"):
            assert time.monotonic() < end
            time.sleep(0.2)
        assert up.json("show", run["id"])["status"] == "cancelled"


@covers("experiment create", "experiment list", "experiment show", "experiment attach", "experiment delete")
def test_experiments(world: World) -> None:
    up = world.up
    exp = up.json("experiment", "create", "cheaper routing", "--idempotency-key", "exp-1")
    assert up.json("experiment", "create", "cheaper routing", "--idempotency-key", "exp-1")["id"] == exp["id"]
    up.json("experiment", "attach", exp["id"], "--run", RUNS["baseline"], "--role", "baseline")
    up.json("experiment", "attach", exp["id"], "--run", RUNS["candidate"], "--role", "candidate")
    assert exp["id"] in [e["id"] for e in up.json("experiment", "list")["experiments"]]
    shown = up.json("experiment", "show", exp["id"])
    assert {(m["run_id"], m["role"]) for m in shown["members"]} == {(RUNS["baseline"], "baseline"),
                                                                 (RUNS["candidate"], "candidate")}
    deleted = up.json("experiment", "delete", exp["id"])
    assert deleted["unlinked_runs"] == 2


@covers("run (stopped early)")
def test_a_run_stopped_early_is_completed_for_upstream(world: World, tmp_path: Path) -> None:
    """Item 3: sr-bench's early stop ends the run; upstream's CLI, attached, returns with exit 0."""
    src = samples.write_mmlu_pro(tmp_path / "mmlu-big", per_category=36)        # 504 rows ≥ quick's 500
    ds = world.api("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "quick", "limit": 120,
                                                 "source_path": str(src), "revision": samples.SAMPLE_REVISION})
    rule = RouterRule(strong="weak", weak="weak", config_hash="cfg-weak")
    models = [SimModel("strong", skill=0.95), SimModel("weak", skill=0.05)]
    with SimulatorThread(models=models, router=rule, answer_key=load_answer_key(ds["path"])) as sim:
        targets = [{"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
                    "prices": {"strong": PRICES["strong"]}},
                   {"id": "weakmom", "kind": "mom", "base_url": sim.router_url, "model": "MoM",
                    "config_hash": "cfg-weak", "prices": PRICES, "max_inference_calls": 1}]
        m = {"version": "sr-bench-1.0", "name": "stops early", "profile": "quick", "seed": ds["seed"],
             "dataset": {"path": ds["path"], "sha256": ds["sha256"]}, "targets": targets,
             "limits": {"concurrency": 2, "total_timeout_s": 20, "idle_timeout_s": 10, "max_run_seconds": 120},
             "statistics": {"claim_rule": "betting", "early_stop": {}}}
        world.up.write("early.json", m)
        done = world.up.run("run", "--manifest", "early.json", timeout=180)
    report = json.loads(done.stdout)
    assert report["status"] == "completed" and report["stopped_early"] is True and report["complete"] is False
    run = world.up.json("show", report["run_id"])
    assert run["status"] == "completed" and run["stopped_early"] is True and run["early_stop"]["reason"] == "settled"
    assert run["progress"]["pending"] > 0                       # cells never sent: the rule settled the claim


def test_error_answers_are_upstreams_one_line(world: World) -> None:
    """Upstream's client prints an error answer's `error` string (else 'HTTP <code>'), and tells a refused token
    from a service that is down by the status: a wrong token, an unknown run or call, a service that is not
    there — each one line, exit 1, never upstream's traceback."""
    up = world.up
    for args in (["show", "run-nope"], ["show", "run-nope", "--results"], ["show", "run-nope", "--calls"],
                 ["report", "run-nope"], ["compare", "run-nope", "run-other"], ["cancel", "run-nope"],
                 ["export", "run-nope", "--output", "nope.json"], ["regrade", "run-nope", "--output", "nope.json"],
                 ["recover-plan", "run-nope"], ["reconcile-usage", "run-nope"], ["replay-options", "run-nope"]):
        out = up.run(*args, code=1)
        assert out.stderr == "Error: no run 'run-nope'\n", (args, out.stderr)
    out = up.run("show", RUNS["baseline"], "--call-id", "call-nope", code=1)
    assert out.stderr == f"Error: no call 'call-nope' in run '{RUNS['baseline']}'\n", out.stderr
    assert not (up.cwd / "nope.json").exists()
    wrong = replace(up, token="x" * 43)
    assert wrong.run("runs", code=1).stderr == "Error: Service authentication failed; set SR_BENCH_TOKEN\n"
    down = replace(up, url="http://127.0.0.1:9")
    assert down.run("runs", code=1).stderr == "Error: sr-bench service is unavailable; start vllm-sr benchmark serve\n"
