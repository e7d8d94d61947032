"""IT-1..IT-5 on a fake router in front of two fake models: baseline and MoM live runs on the same
dataset, then preview, replay and compare — checked against hand-computed figures from what the
fake endpoints really served."""

from __future__ import annotations

import math

from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key, messages_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import freeze, manifest

PRICES = {"strong": {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0},
          "weak": {"input": 0.2, "cached_input": 0.1, "cache_write": 0.2, "output": 0.8}}


def _cost(entries: list[dict]) -> float:
    total = 0.0
    for e in entries:
        p, u = PRICES[e["model"]], e["usage"]
        cached = u.get("prompt_tokens_details", {}).get("cached_tokens", 0)
        total += ((u["prompt_tokens"] - cached) * p["input"] + cached * p["cached_input"]
                  + u["completion_tokens"] * p["output"]) / 1e6
    return total


def test_baseline_mom_preview_replay_compare(api, prepare) -> None:
    mm, arc = prepare("mmlu-pro"), prepare("arc-agi-2")
    ds = api.ok("POST", "/datasets/combine", {"manifests": [mm, arc]})
    cases = decode_cases(open(ds["path"], "rb").read())
    bench_of = {messages_key([m.model_dump() for m in c.messages]): c.benchmark for c in cases}
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500,
                        keywords=("math", "physics", "chemistry", "engineering"), config_hash="cfg-42")
    models = [SimModel("strong", skill=0.85, cached_fraction=0.5), SimModel("weak", skill=0.45)]
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [
            {"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
             "prices": {"strong": PRICES["strong"]}},
            {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": {"weak": PRICES["weak"]}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-42", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1,
             "models": ["strong", "weak"]}]})
        base_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}, {"id": "weak"}]))})["id"]
        assert api.wait(base_id)["status"] == "completed"
        n_base = len(sim.log)
        mom_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "mom"}]))})["id"]
        assert api.wait(mom_id)["status"] == "completed"
        log = list(sim.log)
        prev = manifest(ds, [{"id": "mom"}], mode="preview", preview_context={"session_id": "s-1"})
        prev_id = api.ok("POST", "/runs", {"manifest": freeze(api, prev)})["id"]
        assert api.wait(prev_id)["status"] == "completed"
        assert len(sim.log) == len(log), "preview must not run an inference"
    base_log = [e for e in log[:n_base] if e["completed"]]
    mom_log = [e for e in log[n_base:] if e["completed"] and e["endpoint"] == "router"]
    assert len(base_log) == 32 and len(mom_log) == 16

    # IT-2: the config hash was checked before and after the MoM run
    events = api.ok("GET", f"/runs/{mom_id}/events")["events"]
    checks = [e["data"]["phase"] for e in events if e["kind"] == "config_hash_checked"]
    assert checks == ["before", "after"]

    # preview: decisions and models, no capability score
    prep = api.ok("GET", f"/runs/{prev_id}/report")["summary"]["targets"][0]
    assert prep["accuracy"] is None and prep["sr_bench_score"] is None
    routed = {e["messages_digest"]: e["model"] for e in mom_log}
    assert prep["models"] == {m: list(routed.values()).count(m) for m in set(routed.values())}

    # replay reproduces the live MoM answers from the saved single-model answers (deterministic fakes)
    rep_run = api.ok("POST", "/replays", {"baseline_run_id": base_id, "preview_run_id": prev_id})
    assert rep_run["created"] and rep_run["model_requests"] == 0
    mom_rep = api.ok("GET", f"/runs/{mom_id}/report")
    mt = mom_rep["summary"]["targets"][0]
    assert mt["models_outside_pool"] == [] and set(mt["selected_models"]) <= {"strong", "weak"}
    assert not any("outside its declared pool" in x for x in mom_rep["limitations"])
    again = api.ok("POST", "/replays", {"baseline_run_id": base_id, "preview_run_id": prev_id})
    assert again["created"] is False and again["id"] == rep_run["id"]
    replay = api.ok("GET", f"/runs/{rep_run['id']}/report")
    mom_rep = api.ok("GET", f"/runs/{mom_id}/report")
    rt, mt = replay["summary"]["targets"][0], mom_rep["summary"]["targets"][0]
    assert rt["accuracy"] is None and rt["estimated_accuracy"] == mt["accuracy"]
    assert abs(rt["estimated_cost_usd"] - mt["cost_usd"]) < 1e-12
    assert replay["summary"]["total_spend_usd"] == 0.0
    assert rt["call_count"] == 0 and rt["calls_by_role"] == {} and rt["estimated_tokens_by_role"] == mt["tokens_by_role"]

    # compare by hand
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": base_id, "candidate_run_id": mom_id,
                                          "margin": 0.05})
    by = {m: {e["messages_digest"]: bool(e["correct"]) for e in base_log if e["model"] == m} for m in ("strong", "weak")}
    mom_ok = {e["messages_digest"]: bool(e["correct"]) for e in mom_log}
    benches = {"mmlu-pro": [], "arc-agi-2": []}
    quality = {}
    for m in ("strong", "weak"):
        acc = {b: sum(by[m][k] for k in by[m] if bench_of[k] == b) / sum(1 for k in by[m] if bench_of[k] == b)
               for b in benches}
        quality[m] = (acc["mmlu-pro"] + acc["arc-agi-2"]) / 2       # weights 10 and 10
    best = max(("strong", "weak"), key=lambda m: (quality[m], m == "strong"))
    assert cmp["baseline"]["target_id"] == best
    for k, b in bench_of.items():
        benches[b].append(int(mom_ok[k]) - int(by[best][k]))
    delta = 0.5 * sum(benches["mmlu-pro"]) / 14 + 0.5 * sum(benches["arc-agi-2"]) / 2
    r = math.sqrt(2 * math.log(2 / 0.05) * (0.25 / 14 + 0.25 / 2))
    c = cmp["candidates"][0]
    assert abs(c["delta"] - delta) < 1e-12
    hoeffding = c["intervals"]["hoeffding"]        # REP-6's interval, shown beside the claim (a new plan: betting)
    assert abs(hoeffding["ci"][0] - max(-1, delta - r)) < 1e-9 and abs(hoeffding["ci"][1] - min(1, delta + r)) < 1e-9
    assert c["claims_by_rule"]["hoeffding"] == ("improvement" if delta - r > 0 else "regression" if delta + r < 0
                                                else "inconclusive")
    assert "seed's conservative interval" in hoeffding["label"] and hoeffding["makes_claim"] is False
    # the baseline is the stronger of the baseline run's two singles: the claim is adjusted for that choice
    assert c["claim_rule"] == "betting" and c["selection"]["k"] == 2 and cmp["selection"]["singles"] == ["strong", "weak"]
    lo, hi = c["interval"]["ci"]
    assert c["interval"]["selection_adjusted"] and c["claim"] == ("improvement" if lo > 0 else "regression" if hi < 0
                                                                  else "inconclusive")
    base_cost = _cost([e for e in base_log if e["model"] == best])
    mom_cost = _cost(mom_log)
    s = c["savings"]["principal"]
    assert abs(s["baseline_usd"] - base_cost) < 1e-12 and abs(s["candidate_usd"] - mom_cost) < 1e-12
    assert abs(s["saving_pct"] - 100 * (1 - mom_cost / base_cost)) < 1e-9
    assert cmp["evidence"]["label"].startswith("dev")
    assert c["non_inferiority"]["margin"] == 0.05
    # asked twice: served from the action cache
    assert api.ok("POST", "/comparisons", {"baseline_run_id": base_id, "candidate_run_id": mom_id,
                                           "margin": 0.05})["cache_hit"] is True


def test_served_model_outside_the_pool_is_flagged(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    models = [SimModel("strong", skill=0.8), SimModel("rogue", skill=0.5)]
    router = RouterRule(strong="strong", weak="rogue", long_prompt_chars=10**6, keywords=(), config_hash="cfg-1")
    with SimulatorThread(models=models, router=router) as sim:
        api.ok("POST", "/targets", {"targets": [
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "config_hash": "cfg-1",
             "max_inference_calls": 1, "models": ["strong"], "prices": {"strong": PRICES["strong"]}}]})
        m = manifest(ds, [{"id": "mom"}], cost_policy="capability_only")
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        assert api.wait(run_id)["status"] == "completed"
    rep = api.ok("GET", f"/runs/{run_id}/report")
    t = rep["summary"]["targets"][0]
    assert t["models_outside_pool"] == ["rogue"]
    assert any("outside its declared pool: rogue" in x for x in rep["limitations"])
    assert t["cost_usd"] is None          # the rogue model has no price: unknown, never zero


def test_body_model_router_is_priced_per_served_model_and_compared(api, prepare) -> None:
    """An OpenRouter-style router names the served model in the body: priced per model, mix in report
    and compare, and the same calls read as vLLM Semantic Router are priced identically."""
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500, keywords=("math", "physics"),
                        config_hash="cfg-7")
    models = [SimModel("strong", skill=0.85, cached_fraction=0.5), SimModel("weak", skill=0.45)]
    with SimulatorThread(models=models, router=router) as sim:
        api.ok("POST", "/targets", {"targets": [
            {"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
             "prices": {"strong": PRICES["strong"]}},
            {"id": "auto", "kind": "mom", "router": "body-model", "base_url": sim.router_url, "model": "MoM",
             "prices": PRICES, "max_inference_calls": 1, "models": ["strong", "weak"]},
            {"id": "vsr", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-7", "max_inference_calls": 1, "models": ["strong", "weak"]}]})
        base_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})["id"]
        assert api.wait(base_id)["status"] == "completed"
        n_base = len(sim.log)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "auto"}, {"id": "vsr"}]))})["id"]
        assert api.wait(run_id)["status"] == "completed"
        served = [e for e in sim.log[n_base:] if e["completed"] and e["endpoint"] == "router"]
    assert len(served) == 28
    rep = api.ok("GET", f"/runs/{run_id}/report")
    t = {x["target_id"]: x for x in rep["summary"]["targets"]}
    # the router routes by the question alone: both targets saw every case served by the same model
    mix = {m: sum(e["model"] == m for e in served) // 2 for m in ("strong", "weak")}
    mix = {m: n for m, n in mix.items() if n}
    assert t["auto"]["routing"]["router"] == "body-model" and t["auto"]["routing"]["model_mix"] == mix
    assert t["vsr"]["routing"]["router"] == "vllm-sr" and t["vsr"]["routing"]["model_mix"] == mix
    assert t["auto"]["routing"]["retries"] is None and t["auto"]["routing"]["unattributed_calls"] == 0
    assert abs(t["auto"]["cost_usd"] - _cost(served) / 2) < 1e-12
    assert abs(t["auto"]["cost_usd"] - t["vsr"]["cost_usd"]) < 1e-12
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": base_id, "candidate_run_id": run_id})
    routing = {c["target_id"]: c["routing"] for c in cmp["candidates"]}
    assert routing["auto"]["model_mix"] == mix and routing["auto"]["router"] == "body-model"
    assert routing["vsr"]["router"] == "vllm-sr"
