"""Early stopping on the real service against simulated endpoints: a router that always answers with the
weak model against a strong single model in the same run (and against a declared baseline run). The
run stops once the betting interval settles the regression; the cells never sent, the money estimated
not spent, the interleaved dispatch order, the paired report and the comparison are checked against
what the simulator really served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from srbench.simulate import samples
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases
from srbench.stages.stats.betting import interleave

from .helpers import PRICE, REVISIONS, freeze, manifest

BETTING_STOP = {"claim_rule": "betting", "early_stop": {}}


@pytest.fixture
def dataset(api, tmp_path: Path, sources: dict[str, Path]) -> dict[str, Any]:
    """120 MMLU-Pro quick cases and the 40 GPQA quick cases, combined (two benchmarks, weights 10 and 15)."""
    src = samples.write_mmlu_pro(tmp_path / "mmlu-big", per_category=36)          # 504 rows ≥ quick's 500
    mm = api.ok("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "quick", "limit": 120,
                                               "source_path": str(src), "revision": REVISIONS["mmlu-pro"]})
    gp = api.ok("POST", "/datasets/prepare", {"benchmark": "gpqa-diamond", "profile": "quick",
                                               "source_path": str(sources["gpqa-diamond"]),
                                               "revision": REVISIONS["gpqa-diamond"]})
    return api.ok("POST", "/datasets/combine", {"manifests": [mm, gp]})


def _targets(sim: SimulatorThread) -> list[dict[str, Any]]:
    return [{"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong", "prices": {"strong": PRICE}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "config_hash": "cfg-1",
             "prices": {"strong": PRICE, "weak": PRICE}, "max_inference_calls": 1, "models": ["strong", "weak"]}]


def _sim(ds: dict[str, Any]) -> SimulatorThread:
    return SimulatorThread(models=[SimModel("strong", skill=0.95), SimModel("weak", skill=0.05)],
                           router=RouterRule(strong="weak", weak="weak", config_hash="cfg-1"),
                           answer_key=load_answer_key(ds["path"]))


def _events(api, run_id: str) -> list[dict[str, Any]]:
    return api.ok("GET", f"/runs/{run_id}/events")["events"]


def test_same_run_stop_saves_calls_and_records_it(api, dataset) -> None:
    with _sim(dataset) as sim:
        api.ok("POST", "/targets", {"targets": _targets(sim)})
        m = manifest(dataset, [{"id": "strong"}, {"id": "mom"}], statistics=BETTING_STOP)
        m["limits"]["concurrency"] = 2
        planned = api.ok("POST", "/plans", {"manifest": m})
        assert planned["planning"]["claim_rule"] == "betting" and planned["planning"]["early_stop"] == {
            "baseline_run": None}
        sized = planned["planning"]["declared"]["sized_for_effect"]         # issue 43: sized per benchmark
        assert sized["available"] == {"gpqa-diamond": 198, "mmlu-pro": 12_032}
        # every cell priced and none a conversation: sized by the upper cost per case (stages/plan/estimate.py)
        assert sized["basis"] == "least upper cost" and sized["upper_cost_usd"] > planned["estimate"]["upper_cost_usd"]["total"]
        # GPQA weighs 15 of 25 and its source holds 198 cases: +5 points at 50 % ties is out of reach, said so
        assert not sized["reached"] and sized["at_available"] == ["gpqa-diamond", "mmlu-pro"] and sized["power"] < 0.8
        run_id = api.ok("POST", "/runs", {"manifest": planned["manifest"]})["id"]
        run = api.wait(run_id, timeout=60)
        served = [e for e in sim.log if e["completed"]]
    cases = decode_cases(open(dataset["path"], "rb").read())
    assert run["status"] == "completed" and run["stopped_early"] is True and run["error"] is None
    p = run["progress"]
    assert p["pending"] > 0 and p["completed"] + p["failed"] + p["pending"] == p["total"] == 2 * len(cases)
    assert len(served) == p["completed"] + p["failed"] < p["total"]          # a pending cell was never sent

    # dispatch order: the cases interleaved across the two benchmarks (benchmark-interleave-v1)
    rows = [r for off in (0, 100, 200, 300) for r in api.ok("GET", f"/runs/{run_id}/results?offset={off}")["results"]]
    seq_cases = [r["case_id"] for r in sorted(rows, key=lambda r: r["seq"]) if r["target_id"] == "strong"]
    assert seq_cases == [cases[i].id for i in interleave([c.benchmark for c in cases])]
    assert {r["case_id"] for r in rows[:8]} & {c.id for c in cases if c.benchmark == "gpqa-diamond"}

    types = [e["kind"] for e in _events(api, run_id)]
    assert "early_stop" in types and "early_stop_recorded" in types and types[-1] == "stopped_early"
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert rep["status"] == "completed" and rep["stopped_early"] is True        # upstream's status, the end beside
    stop = rep["early_stop"]
    assert api.ok("GET", f"/runs/{run_id}")["early_stop"] == stop               # `show` says it too
    assert stop["reason"] == "settled" and stop["decisions"][0]["verdict"] == "regression"
    assert stop["cells_not_sent"] == p["pending"] and sum(stop["cells_not_sent_by_target"].values()) == p["pending"]
    # the estimate: each target's known cost per settled cell × its cells not sent (by hand from the report)
    by_target = {t["target_id"]: t for t in rep["summary"]["targets"]}
    expected = sum(n * by_target[t]["known_cost_usd"] / (by_target[t]["completed"] + by_target[t]["failed"])
                   for t, n in stop["cells_not_sent_by_target"].items())
    assert stop["estimated_saving_usd"] == pytest.approx(expected, rel=1e-9) and expected > 0
    assert rep["complete"] is False and any("Stopped early" in x for x in rep["limitations"])
    partial = rep["partial"]          # issue 27: both denominators, labelled
    assert partial["final"] is True and partial["answered_cells"] == p["completed"] and partial["planned_cells"] == p["total"]
    assert all(t["accuracy_answered"] == t["correct"] / t["completed"] for t in rep["summary"]["targets"])

    paired = rep["paired"]
    assert paired["available"] is True and paired["claim_rule"] == "betting"
    assert paired["cases"] >= stop["decided_at_cases"] and paired["planned_cases"] == len(cases)
    (cand,) = paired["candidates"]
    assert cand["target_id"] == "mom" and paired["baseline"]["target_id"] == "strong"
    assert cand["claim"] == "regression" and cand["claim_method"] == "stratified-betting-cs"
    assert cand["intervals"]["hoeffding"]["valid"] is False and "early stop" in cand["intervals"]["hoeffding"]["note"]
    # the report's running intersection covers the decision's prefix, so it is at least as tight
    assert cand["interval"]["ci"][1] <= stop["decisions"][0]["upper"] + 1e-12 < 1e-12
    # the cells not sent can still be continued explicitly (REC-2)
    rec = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
    assert len(rec["eligible"]) == p["pending"] and rec["parent_snapshot"]["status"] == "stopped_early"


def test_a_stop_against_the_strongest_of_two_singles_decides_on_the_adjusted_claim(api, dataset) -> None:
    # issue 28: a new plan (no claim_rule written) with two singles decides as compare claims: against both
    with _sim(dataset) as sim:
        weak = {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": {"weak": PRICE}}
        api.ok("POST", "/targets", {"targets": [*_targets(sim), weak]})
        m = manifest(dataset, [{"id": "strong"}, {"id": "weak"}, {"id": "mom"}], statistics={"early_stop": {}})
        planned = api.ok("POST", "/plans", {"manifest": m})
        assert planned["planning"]["singles"] == 2 and planned["planning"]["declared"]["singles"] == 2
        run = api.wait(api.ok("POST", "/runs", {"manifest": planned["manifest"]})["id"], timeout=60)
    assert run["status"] == "completed" and run["stopped_early"] is True     # upstream's status, the end beside
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    (decision,) = rep["early_stop"]["decisions"]
    assert decision["verdict"] == "regression" and decision["selection"]["k"] == 2
    (cand,) = rep["paired"]["candidates"]
    assert cand["claim"] == "regression" and cand["selection"]["k"] == 2 and cand["interval"]["selection_adjusted"]
    assert rep["paired"]["selection"]["singles"] == ["strong", "weak"]
    assert cand["interval"]["ci"][1] <= decision["upper"] + 1e-12 < 1e-12


def test_declared_baseline_run_and_compare_on_the_prefix(api, dataset) -> None:
    with _sim(dataset) as sim:
        api.ok("POST", "/targets", {"targets": _targets(sim)})
        base_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(dataset, [{"id": "strong"}]))})["id"]
        assert api.wait(base_id, timeout=60)["status"] == "completed"
        n_base = len(sim.log)
        stats = {"claim_rule": "betting", "early_stop": {"baseline_run": base_id}}
        cand_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(dataset, [{"id": "mom"}],
                                                                          statistics=stats))})["id"]
        run = api.wait(cand_id, timeout=60)
        sent = len(sim.log) - n_base
    assert run["stopped_early"] and sent < run["progress"]["total"]
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": base_id, "candidate_run_id": cand_id})
    assert cmp["early_stop"]["candidate"]["reason"] == "settled" and cmp["cases"] < cmp["planned_cases"]
    assert cmp["claim_rule"] == "betting" and cmp["candidates"][0]["claim"] == "regression"
    # upstream's statuses at the wire (issue 39, item 3); sr-bench's own comparison block keeps the run's end
    assert cmp["candidate_status"] == "completed" and cmp["candidate_run"]["status"] == "stopped_early"
    assert any("stopped early" in x for x in cmp["limitations"])
    # the report of a comparison repeats the planning for an inconclusive result only
    assert cmp["candidates"][0]["planning"] is None


def test_plans_that_cannot_stop_early_are_refused(api, dataset) -> None:
    with _sim(dataset) as sim:
        api.ok("POST", "/targets", {"targets": _targets(sim)})
        hoeffding = manifest(dataset, [{"id": "strong"}, {"id": "mom"}],
                             statistics={"claim_rule": "hoeffding", "early_stop": {}})
        assert "claim_rule betting" in api.error("POST", "/plans", {"manifest": hoeffding}, 400)
        singles = manifest(dataset, [{"id": "strong"}], statistics=BETTING_STOP)
        assert "single and one mom target" in api.error("POST", "/plans", {"manifest": singles}, 400)
        nowhere = manifest(dataset, [{"id": "mom"}],
                           statistics={"claim_rule": "betting", "early_stop": {"baseline_run": "run-nope"}})
        assert "baseline_run" in api.error("POST", "/plans", {"manifest": nowhere}, 400, "invalid_baseline_run")
        # a new plan without the block records the new defaults explicitly (issue 28): betting claims,
        # adjusted for the baseline's selection; early stopping then needs no claim_rule either
        plain = freeze(api, manifest(dataset, [{"id": "strong"}]))
        assert plain["statistics"]["claim_rule"] == "betting"
        assert plain["statistics"]["baseline_selection"] == "adjusted"
        assert freeze(api, manifest(dataset, [{"id": "strong"}, {"id": "mom"}],
                                    statistics={"early_stop": {}}))["statistics"]["claim_rule"] == "betting"
        assert sim.log == []
