"""A recovery plan is a pydantic model (issue 26, item 1): the service's plan validates against it and
serialises back to the same document, key order included; its plan_sha256 covers the rest."""

from __future__ import annotations

import hashlib

from srbench.cas import canonical_json
from srbench.schemas.recovery import RecoveryPlan
from srbench.service.runs import recovery
from srbench.simulate.behaviour import SimModel
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

from .helpers import freeze, manifest, single


def test_the_recovery_plan_is_its_model(api, prepare, service) -> None:
    ds = prepare("mmlu-pro")
    boom = Fault(status=500, body='{"error": {"message": "boom"}}', label="500")
    with SimulatorThread(models=[SimModel("m", skill=0.6)]) as sim:
        sim.set_fault(lambda body: boom if "math" in body["messages"][-1]["content"] else None)
        api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url)]})
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
        api.wait(run_id)
        for mode in ("undispatched", "failed"):
            plan = recovery.recovery_plan(service.service.runs, run_id, mode).model_dump(mode="json")
            assert plan["excluded"] and (mode == "undispatched" or plan["eligible"])
            again = RecoveryPlan.model_validate(plan).model_dump(mode="json")
            assert again == plan and list(again) == list(plan)
            assert [list(e) for e in again["excluded"]] == [list(e) for e in plan["excluded"]]
            rest = {k: v for k, v in plan.items() if k not in ("plan_sha256", "selected_cells")}
            assert plan["plan_sha256"] == hashlib.sha256(canonical_json(rest)).hexdigest()
            assert plan["selected_cells"] == [e["cell_id"] for e in plan["eligible"]]
    assert not [n for n, f in RecoveryPlan.model_fields.items() if not f.description]
