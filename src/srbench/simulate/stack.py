"""The demo's simulated stack, in one place: two single models and a router, their prices, the scripted
roles, and the targets that point at them (used by `sr-bench demo` and `sr-bench simulate`).

- ``sim-large`` (skill 0.85, a quarter of the prompt cached) and ``sim-small`` (skill 0.45), both writing
  multiple-choice answers in the styles real replies vary between;
- the router ``MoM``: the large model for long prompts or science keywords, else the small one; its
  preview endpoint and config API answer as vllm-sr's do (simulate/preview.py, simulate/router_config.py);
- the script hook: τ³'s roles (tau_script.py), then the Terminal-Bench toy agent (terminal_tasks.py).
Prices are USD per million tokens in the four buckets; nothing here is a real model's.
"""

from __future__ import annotations

from srbench.schemas.wire import WireJSON
from srbench.simulate.behaviour import RouterRule, SimModel
from srbench.simulate.scripted import ScriptHook, first_of
from srbench.simulate.tau_script import script_hook
from srbench.simulate.terminal_tasks import agent_script

STYLES = ("answer_colon", "answer_is", "answer_colon", "option", "second_thought")     # real replies vary
PRICES: dict[str, dict[str, float]] = {
    "sim-large": {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0},
    "sim-small": {"input": 0.15, "cached_input": 0.075, "cache_write": 0.15, "output": 0.6}}


def models() -> list[SimModel]:
    return [SimModel("sim-large", skill=0.85, latency_s=0.02, cached_fraction=0.25, mcq_styles=STYLES),
            SimModel("sim-small", skill=0.45, latency_s=0.01, mcq_styles=STYLES)]


def router() -> RouterRule:
    return RouterRule(strong="sim-large", weak="sim-small", long_prompt_chars=1500,
                      keywords=("math", "physics", "chemistry", "engineering", "quantum", "organic"))


def script(rule: RouterRule) -> ScriptHook:
    """τ³'s roles (the large model is the careful agent), then the terminal agent (large solves, small fails)."""
    return first_of(script_hook({"sim-large"}, rule), agent_script({"sim-large": "solve", "sim-small": "fail"},
                                                                   router=rule))


def targets(url: str, rule: RouterRule, *, aux: tuple[str, ...] = ("judge",),
            api_key_env: str | None = None) -> list[WireJSON]:
    """The targets at a simulator whose base URL (no /v1) is `url`: ``large``, ``small``, the router
    ``mom`` (preview URL, pinned config hash, priced pool), then one single ``sim-large`` target per `aux`
    id (a pinned judge, a user simulator)."""
    key = {"api_key_env": api_key_env} if api_key_env else {}
    v1, routed = url + "/v1", url + "/router/v1"

    def single(tid: str, model: str) -> WireJSON:
        return {"id": tid, "kind": "single", "base_url": v1, "model": model, **key,
                "prices": {model: PRICES[model]}}

    return [single("large", "sim-large"), single("small", "sim-small"),
            {"id": "mom", "kind": "mom", "base_url": routed, "model": rule.name, **key, "prices": PRICES,
             "config_hash": rule.config_hash, "max_inference_calls": 1, "preview_url": routed + "/preview",
             "capture_recipe": True, "models": sorted(PRICES)},
            *(single(a, "sim-large") for a in aux)]
