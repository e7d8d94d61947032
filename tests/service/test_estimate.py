"""UI-2 / item 9: a plan answer counts the requests it will send (judge calls included) and bounds their
cost from the pinned prices; the bound holds against what the run then costs, and a per-request figure
is checked by hand."""

from __future__ import annotations

import json
from pathlib import Path

from srbench.benchmarks.judge import JUDGE_GRADER
from srbench.cas.digest import canonical_json
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import PRICE, manifest, single

JUDGE_PRICE = {"input": 0.5, "cached_input": 0.5, "cache_write": 0.5, "output": 2.0}


def test_planned_requests_and_the_upper_cost_bound(api, service, tmp_path: Path) -> None:
    src = samples.write_simpleqa(tmp_path / "sq")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    models = [SimModel("subject", skill=0.6), SimModel("judge-model", skill=1.0)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [
            single("subject", sim.v1_url), single("free", sim.v1_url, "subject", prices={}),
            {"id": "judge", "kind": "single", "base_url": sim.v1_url, "model": "judge-model",
             "prices": {"judge-model": JUDGE_PRICE}}]})
        (Path(service.store_dir) / "benchmark-options.json").write_text(
            json.dumps({"simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
        m = manifest(ds, [{"id": "subject"}], sampling={"temperature": 0, "max_tokens": 64})
        m["limits"]["max_output_chars"] = 1000
        out = api.ok("POST", "/plans", {"manifest": m})
        est = out["estimate"]
        assert est["requests"] == {"subject": 5, "judge": 5, "total": 10} and est["conversation_cells"] == 0
        # by hand for the first case: prompt bytes bound × input rate + max_tokens × output rate
        case = decode_cases(open(ds["path"], "rb").read())[0]
        msgs = [mm.model_dump() for mm in case.messages]
        body = {"temperature": 0, "max_tokens": 64, "model": "subject", "messages": msgs, "stream": True,
                "stream_options": {"include_usage": True}}
        first = (len(canonical_json(body)) + 64 * len(msgs) + 256) * PRICE["cache_write"] / 1e6 + 64 * PRICE["output"] / 1e6
        subject = next(r for r in est["targets"] if r["role"] == "subject")
        assert subject["upper_cost_usd"] > first > 0
        assert est["upper_cost_usd"]["total"] == est["upper_cost_usd"]["subject"] + est["upper_cost_usd"]["judge"]
        run_id = api.ok("POST", "/runs", {"manifest": out["manifest"]})["id"]
        assert api.wait(run_id)["status"] == "completed"
        t = api.ok("GET", f"/runs/{run_id}/report")["summary"]["targets"][0]
        assert 0 < t["cost_usd"] <= est["upper_cost_usd"]["subject"]
        assert 0 < t["judge_cost_usd"] <= est["upper_cost_usd"]["judge"]
        assert len(sim.log) == est["requests"]["total"]

        unpriced = api.ok("POST", "/plans", {"manifest": {**manifest(ds, [{"id": "free"}]),
                                                          "cost_policy": "capability_only"}})["estimate"]
        assert unpriced["upper_cost_usd"]["subject"] is None and unpriced["upper_cost_usd"]["total"] is None
        assert any("no prices pinned for free" in n for n in unpriced["notes"])


def test_a_named_actor_launches_its_own_frozen_plan_of_a_judged_benchmark(api, service, tmp_path: Path) -> None:
    """The Dashboard signs in as a named actor: the operator's judge options in a frozen plan (which
    holds the options model's defaults, e.g. `grading: null`) are the expected ones, not an override."""
    import httpx

    from srbench.discovery import API_PREFIX

    src = samples.write_simpleqa(tmp_path / "sq")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    api.ok("POST", "/targets", {"targets": [single("subject", "http://127.0.0.1:9/v1"),
                                            single("judge", "http://127.0.0.1:9/v1", "jm", prices={"jm": JUDGE_PRICE})]})
    (Path(service.store_dir) / "benchmark-options.json").write_text(
        json.dumps({"simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
    actor = {"Authorization": f"Bearer {service.token}", "X-SR-Bench-Actor-ID": "dashboard", "X-SR-Bench-Actor-Role": "admin"}
    with httpx.Client(base_url=service.url + API_PREFIX, headers=actor, timeout=30) as c:
        frozen = c.post("/plans", json={"manifest": manifest(ds, [{"id": "subject"}])}).json()["manifest"]
        assert frozen["benchmark_options"]["simpleqa-verified"]["grading"] is None
        r = c.post("/runs", json={"manifest": frozen})
        assert r.status_code == 201, r.text
        c.post(f"/runs/{r.json()['id']}/cancel")
    api.wait(r.json()["id"])
