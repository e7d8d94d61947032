"""Issue 39, item 4: sr-bench's answers are a superset of upstream's. The same frozen cases (MMLU-Pro and
GPQA smoke, inline) run through upstream's own engine (the released wheel, in its own interpreter:
engine_driver.py) and through sr-bench's service, against one deterministic simulator (two single models,
a third, and a router); then every key upstream's report, comparison, run, results, calls and call answers
carry must be in sr-bench's, with equal values, except the keys listed below with why they differ."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import PRICE, REVISIONS, Api, isolated_env
from srbench import DEFAULT_SEED
from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples
from srbench.simulate.behaviour import RouterRule, SimModel
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .upstream_env import upstream_python

DRIVER = Path(__file__).with_name("engine_driver.py")
LIMITS = {"concurrency": 2, "total_timeout_s": 20, "idle_timeout_s": 10, "case_timeout_s": 20, "max_run_seconds": 60}

# keys whose values differ by nature, not by a figure (each key is still required on both sides)
IDENTITY = {"id", "run_id", "baseline_run_id", "candidate_run_id", "created_at", "updated_at", "started_at",
            "finished_at", "plan_sha256", "case_sha256"}                         # each engine's own names and times
TIMING = {"wall_time_s", "latency_s", "ttft_s", "subject_latency_s", "latency_p50_s", "latency_p95_s", "ttft_p50_s",
          "request_time_sum_s", "activity"}                                      # measured, never equal
NOT_RECORDED = {"queue_wait_s", "queue_wait_p50_s", "queue_wait_p95_s", "case_wall_time_p50_s",
                "runner"}                                   # sr-bench records none of these: null, never a made-up 0
PROSE = {"accuracy_denominator", "cache_neutral_cost_basis", "score_scope", "limitations", "quality_denominator",
         "baseline_selection", "baseline_selection_qualification", "baseline_tie_policy", "quality_metric",
         "quality_delta_ci95_qualification", "error"}                            # each side's own words
BY_DESIGN = {
    "adapter_versions",                # sr-bench's adapters carry sr-bench's version names
    "dataset",                         # sr-bench names the registered dataset the inline cases are; upstream: null
    "custom_subset",                   # ... so they are that prepared profile, not a custom subset
    "sampling",                        # the frozen plan's sampling block (issue 39 item 2 translates plans)
    "quality_delta_bootstrap_ci95",    # the same stratified bootstrap, other random draws
    "details",                         # a result's grade details: sr-bench's grade record, not upstream's adapter's
    "usage",                           # a call's usage: sr-bench's bucket names (`response_usage` has upstream's)
}
EXEMPT = IDENTITY | TIMING | NOT_RECORDED | PROSE | BY_DESIGN


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() <= b.keys() and all(_same(v, b[k]) for k, v in a.items())
    return bool(a == b)


def differences(up: Any, mine: Any, path: str = "") -> list[str]:
    """Where sr-bench's answer lacks an upstream key, or holds another value under it (rows in order)."""
    out: list[str] = []
    if isinstance(up, dict) and isinstance(mine, dict):
        for key, value in up.items():
            if key not in mine:
                out.append(f"{path}.{key}: missing")
            elif key not in EXEMPT:
                out += differences(value, mine[key], f"{path}.{key}")
    elif isinstance(up, list) and isinstance(mine, list) and up and all(isinstance(x, dict) for x in up):
        if len(up) != len(mine):
            return [f"{path}: {len(up)} rows upstream, {len(mine)} in sr-bench"]
        for i, (x, y) in enumerate(zip(up, mine, strict=True)):
            out += differences(x, y, f"{path}[{i}]")
    elif not _same(up, mine):
        out.append(f"{path}: upstream {up!r:.80} != sr-bench {mine!r:.80}")
    return out


def _by_cell(rows: list[dict[str, Any]], *keys: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: tuple(str(r.get(k)) for k in keys))


@pytest.fixture
def both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(upstream's answers, sr-bench's answers) for the same two frozen runs and their comparison."""
    python = upstream_python()
    isolated_env(tmp_path, monkeypatch)
    mmlu, gpqa = samples.write_mmlu_pro(tmp_path / "mmlu"), samples.write_gpqa(tmp_path / "gpqa", rows=40)
    models = [SimModel("strong", skill=0.9, cached_fraction=0.5), SimModel("weak", skill=0.5), SimModel("mid", skill=0.7)]
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=600, keywords=(), config_hash="cfg-1")
    with EmbeddedService(tmp_path / "store") as svc, SimulatorThread(models=models, router=router) as sim:
        api = Api(svc.url, svc.token)
        cases = []
        for bench, src in (("mmlu-pro", mmlu), ("gpqa-diamond", gpqa)):
            ds = api.ok("POST", "/datasets/prepare", {"benchmark": bench, "profile": "smoke", "seed": DEFAULT_SEED,
                                                       "source_path": str(src), "revision": REVISIONS[bench]})
            cases += [c.model_dump(mode="json") for c in decode_cases(Path(ds["path"]).read_bytes())]
        targets = {t: {"id": t, "kind": "single", "base_url": sim.v1_url, "model": t, "prices": {t: PRICE}}
                   for t in ("strong", "weak", "mid")}
        targets["mom"] = {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM",
                          "prices": {"strong": PRICE, "weak": PRICE}, "max_inference_calls": 1, "config_hash": "cfg-1"}
        manifests = [{"version": "sr-bench-1.0", "name": name, "profile": "smoke", "seed": DEFAULT_SEED, "cases": cases,
                      "targets": [targets[t] for t in ids], "limits": LIMITS}
                     for name, ids in (("baseline", ("strong", "weak")), ("candidate", ("mom", "mid")))]
        spec = tmp_path / "spec.json"
        spec.write_text(json.dumps({"store": str(tmp_path / "upstream-store"), "manifests": manifests, "timeout_s": 90}))
        done = subprocess.run([str(python), str(DRIVER), str(spec)], capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        up = json.loads(done.stdout)
        run_ids = [api.ok("POST", "/runs", {"manifest": m})["id"] for m in manifests]
        for rid in run_ids:
            assert api.wait(rid, 90)["status"] == "completed"
        mine = {"runs": [api.ok("GET", f"/runs/{r}") for r in run_ids],
                "reports": [api.ok("GET", f"/runs/{r}/report") for r in run_ids],
                "comparisons": [api.ok("POST", "/comparisons", {"baseline_run_id": run_ids[0],
                                                                "candidate_run_id": run_ids[1]})],
                "results": [api.ok("GET", f"/runs/{r}/results?limit=500") for r in run_ids],
                "calls": [api.ok("GET", f"/runs/{r}/calls?limit=500") for r in run_ids]}
        mine["call"] = [api.ok("GET", f"/runs/{r}/calls/{page['calls'][0]['id']}")
                        for r, page in zip(run_ids, mine["calls"], strict=True)]
        api.close()
    yield up, mine


def test_answers_are_a_superset_with_equal_figures(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    up, mine = both
    assert [r["status"] for r in up["runs"]] == ["completed", "completed"]
    problems: list[str] = []
    for kind in ("reports", "comparisons"):
        for i, (a, b) in enumerate(zip(up[kind], mine[kind], strict=True)):
            problems += differences(a, b, f"{kind}[{i}]")
    for i, (a, b) in enumerate(zip(up["runs"], mine["runs"], strict=True)):
        # the run's manifest is the frozen plan (issue 39 item 2); every other field of the run answer here
        problems += differences({k: v for k, v in a.items() if k != "manifest"}, b, f"runs[{i}]")
    for i in range(2):
        problems += differences(_by_cell(up["results"][i]["results"], "case_id", "target_id"),
                                _by_cell(mine["results"][i]["results"], "case_id", "target_id"), f"results[{i}]")
        problems += differences(_by_cell(up["calls"][i]["calls"], "case_id", "target_id", "role"),
                                _by_cell(mine["calls"][i]["calls"], "case_id", "target_id", "role"), f"calls[{i}]")
        problems += [p for p in differences(up["call"][i], mine["call"][i], f"call[{i}]") if p.endswith("missing")]
    assert problems == [], "\n".join(problems)
    # the figures this rests on, as both engines computed them
    report = mine["reports"][0]
    assert {t["id"] for t in report["summary"]["targets"]} == {"strong", "weak"}
    row = mine["comparisons"][0]["comparisons"][0]
    assert row["total_cost_saving_percent"] is not None and row["micro_quality_delta"] is not None
    assert mine["comparisons"][0]["baseline_selected_target_id"] == "strong"
    assert all(b["tokens"]["input_tokens"] > 0 and b["total_spend_usd"] > 0 for b in report["benchmarks"])
    exempt_seen = {k for r in mine["reports"] for t in r["summary"]["targets"] for k in t} & NOT_RECORDED
    assert exempt_seen == {"queue_wait_p50_s", "queue_wait_p95_s", "case_wall_time_p50_s"}
    assert all(t["queue_wait_p50_s"] is None for r in mine["reports"] for t in r["summary"]["targets"])
