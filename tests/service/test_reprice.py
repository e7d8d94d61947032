"""Repricing a finished run from its stored calls: no model call; reports and comparisons use it."""

from __future__ import annotations

from .helpers import PRICE, freeze, manifest, single

DOUBLE = {k: 2 * v for k, v in PRICE.items()}


def test_reprice_doubles_cost_and_compare_sees_it(api, sim, prepare) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("weak", sim.v1_url, "sim-weak")]})
    base = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}, {"id": "weak"}]))})["id"]
    cand = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "weak"}]))})["id"]
    assert api.wait(base)["status"] == "completed" and api.wait(cand)["status"] == "completed"
    n = len(sim.log)
    before = api.ok("GET", f"/runs/{base}/report")
    calls = api.ok("GET", f"/runs/{base}/calls")["calls"]
    api.error("POST", f"/runs/{base}/reprice", {"prices": {"nobody": {"x": PRICE}}}, 400)
    api.error("POST", f"/runs/{base}/reprice", {"prices": {"weak": {"sim-weak": {"input": -1}}}}, 400)
    res = api.ok("POST", f"/runs/{base}/reprice", {"prices": {"weak": {"sim-weak": DOUBLE}}, "reason": "list price"})
    assert res["appended"] and res["model_requests"] == 0
    assert api.ok("POST", f"/runs/{base}/reprice", {"prices": {"weak": {"sim-weak": DOUBLE}},
                                                   "reason": "list price"})["appended"] is False
    after = api.ok("GET", f"/runs/{base}/report")
    old = {t["target_id"]: t["cost_usd"] for t in before["summary"]["targets"]}
    new = {t["target_id"]: t["cost_usd"] for t in after["summary"]["targets"]}
    assert abs(new["weak"] - 2 * old["weak"]) < 1e-12 and new["strong"] == old["strong"]
    assert after["price_correction"]["targets"] == ["weak"] and after["price_correction"]["reason"] == "list price"
    assert api.ok("GET", f"/runs/{base}/calls")["calls"] == calls and len(sim.log) == n
    # the candidate still has the old price for the same model: not comparable until it is repriced too
    msg = api.error("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand}, 400, "not_comparable")
    assert "protocol_mismatch" in msg or "price" in msg
    api.ok("POST", f"/runs/{cand}/reprice", {"prices": {"weak": {"sim-weak": DOUBLE}}})
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand})
    c = cmp["candidates"][0]
    assert abs(c["savings"]["principal"]["candidate_usd"] - new["weak"]) < 1e-12
