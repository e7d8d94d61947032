"""RUN-8: a cost reservation before each priced call and an actual-cost stop, kept in the journal."""

from __future__ import annotations

from srbench.client.embedded import EmbeddedService

from .helpers import Api, freeze, manifest, single


def test_reservation_stops_dispatch_before_the_cap_and_survives_restart(api, service, sim, prepare) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("weak", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "weak"}])
    m["limits"].update(concurrency=1, max_cost_usd=0.018)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
    run = api.wait(run_id)
    b = run["budget"]
    assert run["status"] == "failed" and "budget" in run["error"] and "not a provider cap" in run["error"]
    sent = len(sim.log)
    assert 0 < sent < 14 and run["progress"]["pending"] == 14 - sent
    assert b["cap_usd"] == 0.018 and b["reserved_usd"] < 1e-12 and b["spent_usd"] <= 0.018
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert abs(rep["summary"]["targets"][0]["known_cost_usd"] - b["spent_usd"]) < 1e-12
    # the next reservation really would not have fitted: spent + one reservation > cap
    events = api.ok("GET", f"/runs/{run_id}/events")["events"]
    refused = [e for e in events if e["kind"] == "budget_refused"]
    assert len(refused) == 1 and b["spent_usd"] + refused[0]["data"]["reserve_usd"] > 0.018
    store_dir = service.store_dir
    service.stop()
    with EmbeddedService(store_dir) as again:
        a2 = Api(again.url, again.token)
        assert a2.ok("GET", f"/runs/{run_id}")["budget"] == b
        a2.close()
    service.start()
