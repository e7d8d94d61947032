"""`plan` warns before money is spent (issue 29, item 3): one test per warning, on frozen-plan shapes."""

from __future__ import annotations

from srbench.cli.plan_checks import plan_warnings

PRICE = {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}


def mom(**over):
    t = {"id": "mom", "kind": "mom", "model": "MoM", "config_hash": "h1", "preview_url": "http://r/preview",
         "models": ["a", "b"], "prices": {"a": PRICE, "b": PRICE}}
    return {**t, **over}


def plan(targets, **over):
    return {"targets": targets, "limits": {"max_cost_usd": 5.0}, **over}


def test_a_clean_plan_has_no_warning() -> None:
    assert plan_warnings(plan([mom(), {"id": "s", "kind": "single", "model": "a", "prices": {"a": PRICE}}]),
                         {"upper_cost_usd": {"total": 4.99}}) == []


def test_a_mom_without_preview_url_will_have_its_claim_blocked() -> None:
    [w] = plan_warnings(plan([mom(preview_url=None)]), None)
    assert w.startswith("target mom: its claim will be blocked") and "no preview_url" in w and "h1" in w
    assert "\n" not in w


def test_an_estimate_above_max_cost_usd() -> None:
    [w] = plan_warnings(plan([mom()]), {"upper_cost_usd": {"total": 72.0}})
    assert "72.00 USD is above limits.max_cost_usd 5 USD" in w and "raise limits.max_cost_usd" in w
    assert plan_warnings(plan([mom()]), {"upper_cost_usd": {"total": None}}) == []     # unknown: nothing to say


def test_a_pool_model_without_a_price() -> None:
    [w] = plan_warnings(plan([mom(models=["a", "b", "c"])]), None)
    assert w.startswith("target mom: pool model(s) c have no price")
    [w] = plan_warnings(plan([mom(models=None)]), None)                  # no pool: nothing can be checked
    assert w.startswith("target mom: declares no model pool (models)") and "priced: a, b" in w


def test_a_judge_or_simulator_without_a_pin() -> None:
    aux = {"j": {"id": "j", "kind": "mom", "model": "MoM", "prices": {}},
           "u": {"id": "u", "kind": "single", "model": "gpt-latest", "prices": {"gpt-latest": PRICE}},
           "k": {"id": "k", "kind": "single", "model": "m-2025", "prices": {}},
           "ok": {"id": "ok", "kind": "single", "model": "m-2025", "prices": {"m-2025": PRICE}}}
    opts = {"hle": {"judge": "j"}, "tau3": {"user_simulator": "u", "judge": "ok"}, "simpleqa-verified": {"judge": "k"}}
    ws = plan_warnings(plan([], auxiliary_targets=aux, benchmark_options=opts), None)
    assert len(ws) == 3, ws
    assert any(w.startswith("hle judge 'j' is a router (MoM): not pinned to one model") for w in ws)
    assert any(w.startswith("tau3 user simulator 'u' uses the floating alias gpt-latest") for w in ws)
    assert any(w.startswith("simpleqa-verified judge 'k' has no price for m-2025") for w in ws)
