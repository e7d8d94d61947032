"""Routing diagnostics through the service (issue 43): a simulated router with a known policy (its RouterRule) in
front of two simulated models; the diagnosis of the router run against the singles run is predicted exactly from
the policy and the singles' stored answers (the simulators answer a prompt the same way whoever calls them)."""

from __future__ import annotations

from typing import Any

from srbench.service.route_table import ROUTES
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import freeze, manifest

PRICES = {"strong": {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0},
          "weak": {"input": 0.2, "cached_input": 0.1, "cache_write": 0.2, "output": 0.8}}


def _rows(api: Any, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    rows = api.ok("GET", f"/runs/{run_id}/results?limit=500")["results"]
    return {(r["case_id"], r["target_id"]): r for r in rows}


def _runs(api: Any, prepare: Any, router: RouterRule) -> tuple[str, str, list[Any]]:
    ds = prepare("mmlu-pro")
    cases = decode_cases(open(ds["path"], "rb").read())
    models = [SimModel("strong", skill=0.5), SimModel("weak", skill=0.9)]     # the cheap one is the better here
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [
            {"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
             "prices": {"strong": PRICES["strong"]}},
            {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": {"weak": PRICES["weak"]}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-43", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1,
             "models": ["strong", "weak"]}]})
        base = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}, {"id": "weak"}]))})["id"]
        assert api.wait(base)["status"] == "completed"
        mom = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "mom"}]))})["id"]
        assert api.wait(mom)["status"] == "completed"
    return base, mom, cases


def test_the_diagnosis_of_a_known_policy_is_predicted_exactly(api, prepare) -> None:
    # the known policy: a prompt naming "law" goes to the cheap model ("weak"), every other to the dear one
    router = RouterRule(strong="weak", weak="strong", long_prompt_chars=10**9, keywords=("law",), config_hash="cfg-43")
    base, mom, cases = _runs(api, prepare, router)
    served = {c.id: router.route([m.model_dump() for m in c.messages])[0] for c in cases}
    assert set(served.values()) == {"strong", "weak"}, "the sample exercises both branches of the policy"
    singles, rrows = _rows(api, base), _rows(api, mom)
    ok = {k: r["state"] == "completed" and r["correct"] is True for k, r in singles.items()}
    cost = {k: r["cost_usd"] for k, r in singles.items()}

    d = api.ok("GET", f"/runs/{mom}/diagnose?baseline={base}")
    assert d["cache_hit"] is False and d["cases"] == len(cases)
    next(r for r in ROUTES if r.name == "diagnose_run").answer.model_validate(d)      # its declared answer model
    (r,) = d["routers"]
    # every case went to a measured single: nothing elsewhere, every pair timed
    assert r["optimality"]["cases_in_pool"] == len(cases) and r["optimality"]["cases_elsewhere"] == 0
    assert r["latency"]["pairs"] == r["ttft"]["pairs"] == len(cases)
    by_case = {c["case_id"]: c for c in r["cases"]}
    cheapest, optimal, confusion, losses = {}, 0, {}, set()
    for case, model in served.items():
        got = by_case[case]
        assert got["served_model"] == model and got["served_single"] == model
        # the simulator answers the router's call as it answered the direct one, at the same price
        assert got["router_correct"] == ok[(case, model)] == bool(rrows[(case, "mom")]["correct"])
        assert got["router_cost_usd"] == rrows[(case, "mom")]["cost_usd"]
        right = sorted((cost[(case, t)], t) for t in ("strong", "weak") if ok[(case, t)])
        cheapest[case] = right[0][1] if right else None
        if right:
            optimal += cost[(case, model)] <= right[0][0] and ok[(case, model)]
        col = cheapest[case] or "(none correct)"
        confusion[(model, col)] = confusion.get((model, col), 0) + 1
        router_cost = rrows[(case, "mom")]["cost_usd"]
        if not ok[(case, model)] and right and right[0][0] <= router_cost:
            losses.add(case)
    assert r["optimality"]["optimal_selections"] == optimal
    assert r["optimality"]["cases_with_correct_single"] == sum(1 for v in cheapest.values() if v)
    assert {(c["served"], c["cheapest_correct"]): c["cases"] for c in r["confusion"]} == confusion
    assert {x["case_id"] for x in r["losses"]} == losses and losses, "the dear model's misses the cheap one got"
    for x in r["losses"]:         # each loss links its evidence: both cells, both calls, the router's decision
        assert x["router"]["run_id"] == mom and x["single"]["run_id"] == base
        assert x["router"]["call"] == rrows[(x["case_id"], "mom")]["call"]
        assert x["single"]["call"] == singles[(x["case_id"], x["single"]["target_id"])]["call"]
        assert x["decision"] and x["headers"]["x-vsr-selected-model"] == x["router"]["model"]
    oracle = sum(1 for v in cheapest.values() if v)
    assert d["oracle"]["cases_no_single_correct"] == len(cases) - oracle

    again = api.ok("GET", f"/runs/{mom}/diagnose?baseline={base}")
    assert again["cache_hit"] is True and again["digest"] == d["digest"]
    message = api.error("GET", f"/runs/{base}/diagnose", None, 400, "no_router")     # a run without a router
    assert "no router target" in message and "\n" not in message
