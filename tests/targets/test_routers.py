"""Router adapters by hand: each router kind's evidence → served model, calls, retries/fallbacks and cost.

Costs are hand-computed from the four buckets and the target's price table (USD per million tokens).
"""

from __future__ import annotations

import json

import pytest

from srbench.errors import InvalidInput
from srbench.schemas.target import Target
from srbench.targets import routers
from srbench.targets.accounting import call_cost
from srbench.targets.failures import systematic_kind

A = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25, "output": 4.0}
B = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
USAGE = {"input": 1000, "cached_input": 200, "cache_write": 0, "output": 100}
# at A: 1000·1 + 200·0.1 + 100·4 = 1420 → 0.00142; at B: 3000 + 60 + 1500 = 4560 → 0.00456
COST_A, COST_B = 0.00142, 0.00456


def mom(router: str | None = None, **extra) -> Target:
    fields = {"id": "r", "kind": "mom", "base_url": "http://127.0.0.1:1/v1", "model": "auto",
              "prices": {"openai/dep-a": A, "openai/dep-b": B, "vendor/a": A, "vendor/b": B}, **extra}
    if router is not None:
        fields["router"] = router
    return Target(**fields)


def record(headers: dict[str, str], model: str | None = "auto", usage: dict | None = USAGE, usage_raw=None) -> dict:
    return {"headers": headers, "response_model": model, "usage": usage, "usage_raw": usage_raw}


LITELLM_OK = {"x-litellm-model-name": "openai/dep-b", "x-litellm-model-id": "dep-b-id", "x-litellm-model-group": "grp",
              "x-litellm-attempted-retries": "0", "x-litellm-attempted-fallbacks": "0",
              "x-litellm-response-cost": "0.00456", "x-litellm-version": "1.0"}


def test_registry_names_and_default():
    assert routers.names() == ["vllm-sr", "litellm", "body-model"]
    assert routers.for_target(mom()).name == "vllm-sr"            # targets without the field keep their meaning
    with pytest.raises(InvalidInput, match="unknown router 'nope'; known: vllm-sr, litellm, body-model"):
        routers.get("nope")
    assert routers.router_problem(mom("nope")) is not None
    assert "preview_url" in routers.router_problem(mom("litellm", preview_url="http://127.0.0.1:1/p"))
    assert routers.router_problem(mom("vllm-sr", preview_url="http://127.0.0.1:1/p")) is None


def test_router_field_is_mom_only_and_left_out_when_absent():
    assert "router" not in mom().model_dump(mode="json")
    assert mom("litellm").model_dump(mode="json")["router"] == "litellm"
    with pytest.raises(ValueError, match="router applies only to kind 'mom'"):
        Target(id="s", kind="single", base_url="http://127.0.0.1:1/v1", model="m", router="litellm")


def test_vllm_sr_direct_and_composite_as_before():
    direct = {"x-vsr-inference-call-count": "1", "x-vsr-selected-model": "vendor/b", "x-vsr-config-hash": "h"}
    c = call_cost(mom(), record(direct))
    assert (c.basis, c.models, c.cost_usd) == ("mom-direct", ["vendor/b"], pytest.approx(COST_B, abs=1e-15))
    assert c.attribution.config_hash == "h" and c.attribution.retries is None and c.attribution.fallbacks is None
    usage = {"version": 1, "complete": True, "calls": [
        {"model": "vendor/a", "usage": {"prompt_tokens": 1200, "completion_tokens": 100,
                                        "prompt_tokens_details": {"cached_tokens": 200}}},
        {"model": "vendor/b", "usage": {"prompt_tokens": 1200, "completion_tokens": 100,
                                        "prompt_tokens_details": {"cached_tokens": 200}}}]}
    c = call_cost(mom(), record({"x-vsr-model-usage": json.dumps(usage), "x-vsr-selected-model": "vendor/b"}))
    assert c.basis == "mom-model-usage" and c.models == ["vendor/a", "vendor/b"]
    assert c.cost_usd == pytest.approx(COST_A + COST_B, abs=1e-15)
    assert c.attribution.served_models() == ["vendor/a", "vendor/b"] and c.attribution.selected_model == "vendor/b"
    two = call_cost(mom(), record({"x-vsr-inference-call-count": "2", "x-vsr-selected-model": "vendor/b"}))
    assert two.cost_usd is None and two.reason == "composite or undeclared router call: no single model to price it at"
    assert two.attribution.inference_calls == 2
    bad = call_cost(mom(), record({"x-vsr-model-usage": "{"}))
    assert bad.basis == "unknown" and bad.reason.startswith("bad x-vsr-model-usage")


def test_vllm_sr_headers_are_not_read_by_another_router():
    direct = {"x-vsr-inference-call-count": "1", "x-vsr-selected-model": "vendor/b"}
    assert call_cost(mom("litellm"), record(direct)).cost_usd is None
    assert call_cost(mom(), record(LITELLM_OK)).cost_usd is None        # and the other way round


def test_litellm_one_attempt_is_priced_at_the_deployment_model():
    c = call_cost(mom("litellm"), record(LITELLM_OK))
    assert (c.basis, c.models) == ("mom-direct", ["openai/dep-b"])
    assert c.cost_usd == pytest.approx(COST_B, abs=1e-15)
    a = c.attribution
    assert (a.router, a.selected_model, a.deployment, a.group) == ("litellm", "openai/dep-b", "dep-b-id", "grp")
    assert (a.retries, a.fallbacks, a.inference_calls) == (0, 0, 1)
    assert a.reported_cost_usd == 0.00456 and a.evidence["x-litellm-version"] == "1.0"


@pytest.mark.parametrize("retries, fallbacks, calls", [("1", "0", 2), ("0", "1", 2), ("2", "1", 4)])
def test_litellm_retries_and_fallbacks_are_extra_inference_calls(retries, fallbacks, calls):
    h = {**LITELLM_OK, "x-litellm-attempted-retries": retries, "x-litellm-attempted-fallbacks": fallbacks}
    c = call_cost(mom("litellm"), record(h))
    assert c.attribution.inference_calls == calls and c.attribution.selected_model == "openai/dep-b"
    assert c.cost_usd is None and "only the answering call is metered" in c.reason   # never the answer's price alone


@pytest.mark.parametrize("drop, why", [("x-litellm-model-name", "named no deployment model"),
                                       ("x-litellm-attempted-retries", "did not report its attempts"),
                                       ("x-litellm-attempted-fallbacks", "did not report its attempts")])
def test_litellm_missing_evidence_is_unknown(drop, why):
    h = {k: v for k, v in LITELLM_OK.items() if k != drop}
    c = call_cost(mom("litellm"), record(h, model="openai/dep-b"))     # the body's model is not guessed from
    assert c.basis == "unknown" and c.cost_usd is None and why in c.reason


def test_litellm_contradicting_counts_are_a_problem():
    c = call_cost(mom("litellm"), record({**LITELLM_OK, "x-litellm-attempted-retries": "-1"}))
    assert c.basis == "unknown" and "not a non-negative integer" in c.reason


def test_litellm_unpriced_deployment_is_unknown_and_outside_the_pool():
    h = {**LITELLM_OK, "x-litellm-model-name": "openai/dep-z"}
    c = call_cost(mom("litellm", models=["openai/dep-a", "openai/dep-b"]), record(h))
    assert c.cost_usd is None and c.reason == "no prices for model openai/dep-z" and c.outside_pool == ["openai/dep-z"]


def test_body_model():
    c = call_cost(mom("body-model"), record({}, model="vendor/a", usage_raw={"prompt_tokens": 1, "cost": 0.5}))
    assert (c.basis, c.models) == ("mom-direct", ["vendor/a"]) and c.cost_usd == pytest.approx(COST_A, abs=1e-15)
    assert c.attribution.reported_cost_usd == 0.5 and c.attribution.inference_calls == 1
    echoed = call_cost(mom("body-model"), record({}, model="auto"))
    assert echoed.cost_usd is None and "echoes the requested name" in echoed.reason
    missing = call_cost(mom("body-model"), record({}, model=None))
    assert missing.cost_usd is None and missing.reason == "the response body named no model"


@pytest.mark.parametrize("status, body, kind", [
    (401, "", "auth"),
    (403, "forbidden", "auth"),
    (402, '{"error": {"message": "Insufficient credits"}}', "auth"),
    (400, '{"error":{"message":"No connected db.","type":"no_db_connection","param":null,"code":"400"}}', "auth"),
    (400, '{"error": {"message": "Authentication Error, Invalid proxy server token passed."}}', "auth"),
    (400, '{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key."}}', "auth"),
    (400, '{"error": {"message": "Incorrect API key provided: sk-***"}}', "auth"),
    (429, '{"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}', "quota"),
    (404, '{"error": {"message": "The model `m` does not exist"}}', "unknown_model"),
    (404, "404: Not Found", "not_found"),                  # a wrong path (/v2), not a missing model
    (400, '{"error": {"message": "/chat/completions: Invalid model name passed in model=nope."}}', "unknown_model"),
    (400, '{"error": {"code": "DeploymentNotFound", "message": "The API deployment for this resource does not '
          'exist."}}', "no_deployment"),
    (422, "no such deployment: grp-2", "no_deployment"),
    (307, "", "redirect"),
])
def test_systematic_forms(status, body, kind):
    assert systematic_kind(status, body) == kind


@pytest.mark.parametrize("status, body", [
    (429, '{"error": {"message": "Rate limit reached, retry in 2s"}}'),
    (400, '{"error": {"message": "max_tokens is too large"}}'),
    (500, '{"error": {"message": "No connected db."}}'),
    (503, "unauthorized"),
    (408, "Invalid API key"),
])
def test_passing_failures_are_not_systematic(status, body):
    assert systematic_kind(status, body) is None
