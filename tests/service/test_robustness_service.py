"""Robustness at zero inference cost (issue 43, item 4) through the service: a simulated router with a known
policy (a prompt naming "review" goes to the strong model) is previewed as the prompts are and once per
perturbation kind; every decision, and so every flip, is predicted from the policy and the documented
perturbations — the irrelevant preamble names "review", so it flips every case the router sent to the weak one."""

from __future__ import annotations

from typing import get_args

from srbench.schemas.plan import Perturbation
from srbench.service.route_table import ROUTES
from srbench.simulate.behaviour import RouterRule, SimModel
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases
from srbench.stages.dispatch.perturb import perturb_messages

from .helpers import freeze, manifest

KINDS = get_args(Perturbation)


def test_flip_rates_of_a_known_policy(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    cases = decode_cases(open(ds["path"], "rb").read())
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=10**9, keywords=("review",), config_hash="c-43")
    with SimulatorThread(models=[SimModel("strong", skill=0.8), SimModel("weak", skill=0.4)], router=router) as sim:
        api.ok("POST", "/targets", {"targets": [
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "config_hash": "c-43",
             "preview_url": sim.router_url + "/preview", "max_inference_calls": 1, "models": ["strong", "weak"]}]})
        runs = {}
        for kind in (None, *KINDS):
            m = manifest(ds, [{"id": "mom"}], mode="preview", **({"perturbation": kind} if kind else {}))
            runs[kind] = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
            assert api.wait(runs[kind])["status"] == "completed"
        inferences = [e for e in sim.log if e.get("endpoint") in ("router", "single")]
    assert inferences == [], "robustness asks the preview endpoint only"
    perturbed = ",".join(runs[k] for k in KINDS)
    out = api.ok("GET", f"/runs/{runs[None]}/robustness?perturbed={perturbed}")
    next(r for r in ROUTES if r.name == "robustness_run").answer.model_validate(out)
    (t,) = out["targets"]

    def chosen(case, kind):
        return router.route(perturb_messages([m.model_dump() for m in case.messages], kind, ds["seed"], case.id))[0]
    flips = sorted((c.id, k) for c in cases for k in KINDS if chosen(c, k) != chosen(c, None))
    assert sorted((f["case_id"], f["perturbation"]) for f in t["flips"]) == flips
    assert {k for _, k in flips} >= {"preamble"}, "the preamble flips the weak-routed cases"
    by_kind = {r["scope"]: r for r in t["perturbations"]}
    for k in KINDS:
        assert by_kind[k]["pairs"] == len(cases) and by_kind[k]["flips"] == sum(1 for _, x in flips if x == k)
    assert t["overall"]["pairs"] == len(cases) * len(KINDS) and t["overall"]["flips"] == len(flips)
    assert t["overall"]["flip_rate"] == len(flips) / (len(cases) * len(KINDS))
    assert out["perturbed_runs"] == {k: runs[k] for k in KINDS} and out["cache_hit"] is False
    assert api.ok("GET", f"/runs/{runs[None]}/robustness?perturbed={perturbed}")["cache_hit"] is True

    # a perturbed prompt never reaches a model: a live manifest with a perturbation is refused by name
    message = api.error("POST", "/plans", {"manifest": manifest(ds, [{"id": "mom"}], perturbation="typo")}, 400)
    assert "perturbation typo" in message and "mode: preview" in message
    wrong = api.error("GET", f"/runs/{runs['typo']}/robustness?perturbed={runs['case']}", None, 400)
    assert "itself perturbed" in wrong
