"""REC-1..REC-4: explicit recovery plans and child runs."""

from __future__ import annotations

from srbench.simulate.behaviour import SimModel
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

from .helpers import Api, freeze, manifest, single


def test_undispatched_recovery_after_a_stop(api, service, prepare) -> None:
    ds = prepare("mmlu-pro")
    with SimulatorThread(models=[SimModel("slow", skill=0.6, latency_s=0.4)]) as sim:
        api.ok("POST", "/targets", {"targets": [single("slow", sim.v1_url)]})
        m = manifest(ds, [{"id": "slow"}])
        m["limits"]["concurrency"] = 2
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        api.wait(run_id, until=lambda r: r["progress"]["completed"] >= 2)
        service.stop()                                      # SVC-4: stop keeps every result
        service.start()
        a = Api(service.url, service.token)
        parent = a.ok("GET", f"/runs/{run_id}")
        assert parent["status"] == "interrupted"
        p = parent["progress"]
        assert p["completed"] >= 2 and p["pending"] >= 1
        plan = a.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
        assert len(plan["eligible"]) == p["pending"]
        assert plan["excluded_counts"].get("completed") == p["completed"]
        assert a.error("POST", f"/runs/{run_id}/recover", {"plan": plan}, 400, "recovery_plan_required")
        plan["selected_cells"] = plan["selected_cells"][:3]
        n0 = len(sim.log)
        child = a.ok("POST", f"/runs/{run_id}/recover", {"plan": plan, "idempotency_key": "rec-1"})
        assert child["created"]
        cid = child["id"]
        done = a.wait(cid)
        assert done["status"] == "completed" and done["progress"]["total"] == 3
        assert len(sim.log) - n0 == 3
        # the same key again: the same child, no new request
        again = a.ok("POST", f"/runs/{run_id}/recover", {"plan": plan, "idempotency_key": "rec-1"})
        assert again["created"] is False and again["id"] == cid and len(sim.log) - n0 == 3
        # other cells with the same key: refused
        other = dict(plan, selected_cells=plan["eligible"][3:4] and [plan["eligible"][3]["cell_id"]])
        a.error("POST", f"/runs/{run_id}/recover", {"plan": other, "idempotency_key": "rec-1"}, 409,
                "idempotency_conflict")
        # the stale plan (cells now claimed) is refused; a new plan excludes the claimed cells
        a.error("POST", f"/runs/{run_id}/recover", {"plan": other, "idempotency_key": "rec-2"}, 400,
                "recovery_plan_required")
        plan2 = a.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
        assert plan2["excluded_counts"]["claimed"] == 3 and len(plan2["eligible"]) == p["pending"] - 3
        # the parent stays as it was; lineage shows the child; the child never completes the parent
        parent2 = a.ok("GET", f"/runs/{run_id}")
        assert parent2["status"] == "interrupted" and parent2["lineage"]["children"] == [cid]
        child_view = a.ok("GET", f"/runs/{cid}")
        assert child_view["lineage"]["parent"] == run_id and child_view["lineage"]["parent_known_cost_usd"] is not None
        rep = a.ok("GET", f"/runs/{cid}/report")
        t = rep["summary"]["targets"][0]
        assert t["total"] == 3 and rep["complete"] is False and t["sr_bench_score"] is None
        assert any("Recovery child" in x for x in rep["limitations"])
        a.close()


def test_failed_recovery_needs_acknowledgement(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    boom = Fault(status=500, body='{"error": {"message": "boom"}}', label="500")
    with SimulatorThread(models=[SimModel("m", skill=0.6)]) as sim:
        sim.set_fault(lambda body: boom if "math" in body["messages"][-1]["content"] else None)
        api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url)]})
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
        run = api.wait(run_id)
        failed = run["progress"]["failed"]
        assert run["status"] == "failed" and failed >= 1
        und = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
        assert und["eligible"] == [] and und["excluded_counts"]["already_dispatched"] == failed
        assert api.ok("POST", f"/runs/{run_id}/recover-plan")["plan_sha256"] == und["plan_sha256"]  # mode: its default
        # upstream's recover with that plan's (empty) eligible cells: the rule named, not a schema message
        empty = {"mode": "undispatched", "plan_sha256": und["plan_sha256"], "cells": und["eligible_cells"],
                 "idempotency_key": "u-0"}
        msg = api.error("POST", f"/runs/{run_id}/recover", empty, 400, "recovery_cells_required")
        assert "at least one selected cell" in msg and "List should have" not in msg
        whole = api.error("POST", f"/runs/{run_id}/recover", {"plan": und, "idempotency_key": "u-1"}, 400,
                          "recovery_cells_required")            # sr-bench's whole plan, selecting nothing: the same
        assert whole == msg
        plan = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "failed"})
        assert len(plan["eligible"]) == failed and plan["requires_acknowledgement"]
        api.error("POST", f"/runs/{run_id}/recover", {"plan": plan, "idempotency_key": "f-1"}, 400,
                  "acknowledgement_required")
        sim.set_fault(None)
        child = api.ok("POST", f"/runs/{run_id}/recover", {"plan": plan, "idempotency_key": "f-1",
                                                           "acknowledge_new_attempt": True})
        assert api.wait(child["id"])["status"] == "completed"
        assert api.ok("GET", f"/runs/{run_id}")["status"] == "failed"     # the parent is kept as it was
