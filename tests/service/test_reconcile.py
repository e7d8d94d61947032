"""REP-2: reconcile-usage re-derives metering from the retained SSE, appends an idempotent, versioned
correction, and reports then use it; raw call records stay as they were."""

from __future__ import annotations

from srbench.schemas.call import Usage
from srbench.simulate.server import Fault
from srbench.stages.derived import reconcile as rc

from .helpers import PRICE, freeze, manifest, single


def test_reconcile_verifies_appends_once_and_reports_use_the_correction(api, sim, prepare, monkeypatch) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    before = api.ok("GET", f"/runs/{run_id}/report")
    first = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {})
    c = first
    assert first["appended"] and first["model_requests"] == 0
    assert (c["verified_count"], c["changed_count"], c["unverifiable_count"]) == (14, 0, 0) and c["qualified"]
    assert abs(c["old_known_cost_usd"] - before["summary"]["targets"][0]["cost_usd"]) < 1e-12
    again = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {})
    assert again["appended"] is False and again["cache_hit"] is True
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert rep["accounting_correction"]["digest"] == c["digest"]
    assert rep["summary"]["targets"][0]["cost_usd"] == before["summary"]["targets"][0]["cost_usd"]

    # a newer metering reads the same evidence differently: one more output token per call
    real = rc.parse_usage

    def plus_one(raw):
        u = real(raw)
        return None if u is None else Usage(input=u.input, cached_input=u.cached_input, cache_write=u.cache_write,
                                             output=u.output + 1)
    monkeypatch.setattr(rc, "parse_usage", plus_one)
    monkeypatch.setattr(rc, "METERING_VERSION", "sr-bench-metering-test")
    calls_before = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
    changed = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {})
    cc = changed
    assert changed["appended"] and cc["changed_count"] == 14 and cc["digest"] != c["digest"]
    assert abs(cc["new_known_cost_usd"] - cc["old_known_cost_usd"] - 14 * PRICE["output"] / 1e6) < 1e-12
    rep2 = api.ok("GET", f"/runs/{run_id}/report")
    t = rep2["summary"]["targets"][0]
    assert abs(t["cost_usd"] - cc["new_known_cost_usd"]) < 1e-12
    assert t["tokens"]["output"] == before["summary"]["targets"][0]["tokens"]["output"] + 14
    assert rep2["accounting_correction"]["changed_count"] == 14
    # raw call records are untouched
    assert api.ok("GET", f"/runs/{run_id}/calls")["calls"] == calls_before


def test_reconcile_leaves_composite_mom_calls_unknown(api, sim, prepare) -> None:
    ds = prepare("mmlu-pro")
    api.error("POST", "/runs/run-nope/reconcile-usage", {}, 404)
    api.ok("POST", "/targets", {"targets": [
        {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "config_hash": "sim-config-v1",
         "max_inference_calls": 1, "prices": {"sim-strong": PRICE, "sim-weak": PRICE}}]})
    composite = Fault(headers={"x-vsr-inference-call-count": "2"}, label="composite")
    sim.set_fault(lambda body: composite if "math" in body["messages"][-1]["content"] else None)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "mom"}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    n_composite = sum(e["fault"] == "composite" for e in sim.log)
    assert n_composite >= 1
    c = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {})
    assert c["unverifiable_count"] == n_composite and c["verified_count"] == 14 - n_composite
    assert c["qualified"] is False
    assert all("never inferred" in r["reason"] for r in c["rows"] if r["status"] == "unverifiable")
    t = api.ok("GET", f"/runs/{run_id}/report")["summary"]["targets"][0]
    assert t["cost_usd"] is None and t["cost_complete"] is False   # unknown, never zero
