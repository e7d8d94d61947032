"""A run that will never finish says what it is (issue 27, item 4): a cancelled run with a router and a
single model reports accuracy over the planned denominator and over the answered cells, each labelled,
and its paired "does routing pay" figure over the cases both sides answered — partial, n of N, never a
claim — each figure checked against the fake endpoint's own log."""

from __future__ import annotations

import itertools
from typing import Any

from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

from .helpers import PRICE, Api, freeze, manifest, single

ANSWERED = 10               # the endpoint answers this many requests; every later one stalls until cancelled
RULE = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500, keywords=("math", "physics"))


def mom(sim: SimulatorThread) -> dict[str, Any]:
    return {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "max_inference_calls": 1,
            "prices": {"strong": PRICE, "weak": PRICE}, "models": ["strong", "weak"],
            "config_hash": RULE.config_hash, "preview_url": sim.router_url + "/preview"}


def stalling_sim(ds: dict[str, Any]) -> SimulatorThread:
    count = itertools.count()
    sim = SimulatorThread(models=[SimModel("strong", skill=0.8), SimModel("weak", skill=0.4)], router=RULE,
                          answer_key=load_answer_key(ds["path"]),
                          fault=lambda body: None if next(count) < ANSWERED else Fault(headers_delay_s=60, label="stall"))
    return sim


def cancelled_run(api: Api, ds: dict[str, Any], sim: SimulatorThread) -> str:
    """A run of `strong` and `mom` cancelled once ANSWERED requests were answered and two hang."""
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url), mom(sim)]})
    m = manifest(ds, [{"id": "strong"}, {"id": "mom"}], name="cancelled-run")
    m["limits"]["concurrency"] = 1
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
    api.wait(run_id, timeout=30, until=lambda r: r["progress"]["completed"] == ANSWERED and r["progress"]["running"] == 2)
    api.ok("POST", f"/runs/{run_id}/cancel")
    assert api.wait(run_id, timeout=10)["status"] == "cancelled"
    return run_id


def test_a_cancelled_run_reports_both_denominators_and_a_partial_pair(api, service, prepare) -> None:
    ds = prepare("mmlu-pro")                         # 14 cases
    with stalling_sim(ds) as sim:
        run_id = cancelled_run(api, ds, sim)
        log = [e for e in sim.log if e["completed"]]
    assert len(log) == ANSWERED
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert rep["status"] == "cancelled" and rep["complete"] is False
    assert rep["partial"] == {
        "answered_cells": ANSWERED, "planned_cells": 28, "final": True,
        "label": f"partial: {ANSWERED} of 28 planned cells answered (run cancelled: it will not finish)",
        "accuracy": rep["partial"]["accuracy"], "accuracy_answered": rep["partial"]["accuracy_answered"]}
    assert "counts as not correct" in rep["partial"]["accuracy"] and "answered cells only" in rep["partial"]["accuracy_answered"]
    by = {t["target_id"]: t for t in rep["summary"]["targets"]}
    for tid, endpoint in (("strong", "single"), ("mom", "router")):
        mine = [e for e in log if e["endpoint"] == endpoint]
        t, right = by[tid], sum(bool(e["correct"]) for e in mine)
        assert t["completed"] == len(mine) and t["correct"] == right and t["total"] == 14
        assert t["accuracy"] == right / 14 and t["accuracy_answered"] == right / len(mine)
        assert t["calls_by_role"] == {"subject": len(mine) + 1}          # the cancelled call too: it was sent
    # the run is known to have spent what its answered calls cost (it said 0 when any cost was unknown)
    known = sum(t["known_cost_usd"] + sum(t.get(f) or 0.0 for f in ("judge_cost_usd",)) for t in by.values())
    assert rep["summary"]["total_spend_usd"] is None and known > 0
    assert abs(rep["summary"]["known_spend_usd"] - known) < 1e-12
    brow = {b["target_id"]: b for b in rep["benchmarks"]}
    assert brow["mom"]["accuracy_answered"] == by["mom"]["accuracy_answered"]
    assert any(f"accuracy_answered is over the {ANSWERED} answered cells" in x for x in rep["limitations"])

    # the paired figure: only the cases both sides answered, partial, no claim
    rows = api.ok("GET", f"/runs/{run_id}/results?limit=100")["results"]
    done = {(r["target_id"], r["case_id"]): r["correct"] for r in rows if r["state"] == "completed"}
    both = sorted({c for (t, c) in done if t == "mom" and ("strong", c) in done})
    assert 0 < len(both) < 14
    paired = rep["paired"]
    assert paired["partial"] is True and paired["evidence"]["formal"] is False and "partial" in paired["evidence"]["label"]
    (c,) = paired["candidates"]
    assert c["target_id"] == "mom" and c["baseline_target_id"] == "strong" and c["claim"] is None and c["formal"] is False
    assert c["n"] == len(both) and c["planned_cases"] == 14
    assert c["label"] == f"partial: {len(both)} of 14 planned cases answered by both sides"
    diff = [int(done[("mom", k)]) - int(done[("strong", k)]) for k in both]
    assert abs(c["delta"] - sum(diff) / len(both)) < 1e-12 and c["wins"] == diff.count(1) and c["losses"] == diff.count(-1)
    lo, hi = c["interval"]["ci"]
    assert lo <= c["delta"] <= hi and "claim" not in c["interval"]
    assert c["operations"]["candidate"]["latency_p50_s"] is not None
    # the CLI says the same: never "the answer appears when the run has finished" for a cancelled run
    from srbench.cli.answer import routing_answer
    from srbench.cli.runs import partial_line

    said = routing_answer(None, api.ok("GET", f"/runs/{run_id}"), rep).why_none or ""
    assert said.startswith(rep["partial"]["label"] + "; it will not finish, so nothing is claimed")
    assert f"mom vs strong on the {len(both)} of 14 cases both answered: Δ macro quality {c['delta']:+.3f}" in said
    s = by["strong"]
    assert (f"strong {s['accuracy']:.3f} over 14 planned, {s['accuracy_answered']:.3f} over {s['completed']} answered"
            in (partial_line(rep) or ""))
    # compare still refuses a cancelled run: the partial figure is the report's, labelled so
    assert "run_not_comparable" in api.error("POST", "/comparisons", {"baseline_run_id": run_id,
                                                                        "candidate_run_id": run_id}, 400)


def test_the_report_of_a_completed_run_has_no_partial_section(api, service, prepare, sim) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    rep = api.ok("GET", f"/runs/{run_id}/report")
    t = rep["summary"]["targets"][0]
    assert rep["partial"] is None and t["accuracy_answered"] == t["accuracy"] and t["completed"] == t["total"] == 14
