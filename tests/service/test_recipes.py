"""UI-7: a router's recipes captured from its own config API (the simulated router serves /config/hash,
/config/router and /config/router/recipes), stored with the run, redacted, and a named limitation
whenever the capture does not hold or the configuration changes during the run."""

from __future__ import annotations

import json

from srbench.simulate.behaviour import RouterRule, SimModel
from srbench.simulate.thread import SimulatorThread
from srbench.targets.router_config import redact

from .helpers import PRICE, freeze, manifest

MODELS = [SimModel("strong", skill=0.9), SimModel("weak", skill=0.4)]


def _mom(sim: SimulatorThread, **extra: object) -> dict:
    return {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM",
            "prices": {"strong": PRICE, "weak": PRICE}, "config_hash": "cfg-7", "max_inference_calls": 1,
            "preview_url": sim.router_url + "/preview", "capture_recipe": True, **extra}


def _run(api, ds, sim, **target: object) -> tuple[str, dict]:
    api.ok("POST", "/targets", {"targets": [_mom(sim, **target)]})
    rid = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "mom"}]))})["id"]
    api.wait(rid)
    return rid, api.ok("GET", f"/runs/{rid}/recipes")


def test_a_capture_that_holds_is_stored_redacted_and_named_in_the_report(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="strong", weak="weak", config_hash="cfg-7")
    with SimulatorThread(models=MODELS, router=router) as sim:
        rid, got = _run(api, ds, sim)
        reads = list(sim.server.router_config.reads)
    assert reads[:4] == ["/config/hash", "/config/router", "/config/router/recipes", "/config/hash"]
    assert reads[4:] == ["/config/hash", "/config/router"]                 # the check after the run
    (r,) = got["recipes"]
    cap = r["capture"]
    assert r["status"] == "captured" and r["limitation"] is None and r["held_during_run"] is True
    assert cap["hash_before"] == {"hash": "cfg-7", "runtime_hash": "cfg-7", "active_hash": "cfg-7", "status": "active"}
    assert [x["name"] for x in cap["recipes"]] == ["escalate-hard-prompts", "default-cheap"]
    text = json.dumps(cap)
    assert "sk-sim-secret-key" not in text and "***" not in text and "127.0.0.1" not in text   # no secret, no address
    assert "config.vllm_endpoints[0].api_key" in cap["redacted"] and "config.vllm_endpoints[1].port" in cap["redacted"]
    assert cap["config"]["decisions"][0]["model"] == "strong" and cap["projection_hash"].startswith("b3:")
    rep = api.ok("GET", f"/runs/{rid}/report")
    assert rep["recipes"]["mom"]["status"] == "captured"
    assert rep["recipes"]["mom"]["projection_hash"] == cap["projection_hash"]
    assert not any("Recipe of target" in line for line in rep["limitations"])


def test_pending_status_changed_hash_and_failing_routes_are_named_limitations(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="strong", weak="weak", config_hash="cfg-7")
    with SimulatorThread(models=MODELS, router=router) as sim:
        state = sim.server.router_config
        state.status = "pending"
        _, got = _run(api, ds, sim)
        assert got["recipes"][0]["status"] == "not_captured" and got["recipes"][0]["capture"]["config"] is None
        assert "status 'pending', not 'active'" in got["recipes"][0]["limitation"]

        state.status, state.change_after_config = "active", True          # the source changes mid-capture
        _, got = _run(api, ds, sim)
        lim = got["recipes"][0]["limitation"]
        assert "changed during the capture" in lim and "ETag" in lim
        state.revision = 0

        state.runtime_hash = "cfg-other"                                   # the runtime runs another config
        _, got = _run(api, ds, sim)
        assert "runtime_hash cfg-other" in got["recipes"][0]["limitation"]
        state.runtime_hash = None

        state.failing["/config/router/recipes"] = 403
        rid, got = _run(api, ds, sim)
        assert got["recipes"][0]["limitation"] == ("no recipe was captured: the router's config API: "
                                                   "GET /config/router/recipes answered HTTP 403")
        rep = api.ok("GET", f"/runs/{rid}/report")
        assert any(line.startswith("Recipe of target mom (UI-7): no recipe was captured") for line in rep["limitations"])
        assert api.ok("GET", f"/runs/{rid}")["status"] == "completed"     # a capture never stops the run


def test_a_configuration_changed_during_the_run_is_named(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    router = RouterRule(strong="strong", weak="weak", config_hash="cfg-7")
    with SimulatorThread(models=MODELS, router=router) as sim:
        state = sim.server.router_config

        def bump_once(request: dict) -> None:
            if state.revision == 0:
                state.bump()
        api.ok("POST", "/targets", {"targets": [_mom(sim)]})
        m = manifest(ds, [{"id": "mom"}])
        m["limits"]["concurrency"] = 1
        plan = freeze(api, m)
        sim.set_fault(lambda entry: bump_once(entry) or None)
        rid = api.ok("POST", "/runs", {"manifest": plan})["id"]
        api.wait(rid)
        sim.set_fault(None)
        got = api.ok("GET", f"/runs/{rid}/recipes")["recipes"][0]
    assert got["status"] == "captured" and got["held_during_run"] is False
    assert "changed during the run" in got["limitation"]


def test_no_capture_without_the_flag_and_redaction_by_name() -> None:
    value, paths = redact({"a": {"api_key": "k", "nested": [{"base_url": "http://x", "model": "m"}]}, "port": 1})
    assert value == {"a": {"api_key": "[redacted]", "nested": [{"base_url": "[redacted]", "model": "m"}]},
                     "port": "[redacted]"}
    assert paths == ["a.api_key", "a.nested[0].base_url", "port"]


def test_a_router_without_capture_recipe_is_unavailable(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    with SimulatorThread(models=MODELS, router=RouterRule(strong="strong", weak="weak", config_hash="cfg-7")) as sim:
        _, got = _run(api, ds, sim, capture_recipe=False)
        assert sim.server.router_config.reads == []
    assert got["recipes"] == [{"target_id": "mom", "status": "unavailable", "capture": None, "after": None,
                               "projection_hash": None, "held_during_run": None,
                               "limitation": "capture_recipe is not set for this target"}]
