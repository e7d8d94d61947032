"""Costs by hand: the four-bucket cost, the cache-neutral cost, reservation bounds, priced model."""

from __future__ import annotations

import json

import pytest

from srbench.errors import InvalidInput
from srbench.schemas.call import Usage
from srbench.schemas.target import Prices, Target
from srbench.service.store import target_registry
from srbench.targets.pricing import (
    cache_neutral_cost_usd,
    cost_usd,
    max_rates,
    price_problem,
    priced_model,
    reservation_usd,
    sum_known,
    sum_or_none,
)

P = Prices(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
USAGE = Usage(input=1000, cached_input=2000, cache_write=400, output=300)


def test_cost_four_buckets():
    # 1000·2 + 2000·0.5 + 400·2.5 + 300·8 = 2000 + 1000 + 1000 + 2400 = 6400 → 6400 / 1e6
    assert cost_usd(USAGE, P) == pytest.approx(0.0064, abs=1e-15)


def test_cache_neutral_cost():
    # (1000 + 2000 + 400)·2 + 300·8 = 6800 + 2400 = 9200 → 9200 / 1e6
    assert cache_neutral_cost_usd(USAGE, P) == pytest.approx(0.0092, abs=1e-15)


def test_unknown_stays_unknown():
    assert cost_usd(None, P) is None
    assert cost_usd(USAGE, None) is None
    assert cache_neutral_cost_usd(None, P) is None
    assert cache_neutral_cost_usd(USAGE, None) is None


def test_zero_usage_is_a_known_zero():
    assert cost_usd(Usage(input=0, cached_input=0, cache_write=0, output=0), P) == 0.0


def test_sums():
    assert sum_or_none([0.5, 0.25]) == 0.75
    assert sum_or_none([0.5, None]) is None
    assert sum_or_none([]) == 0.0
    assert sum_known([0.5, None, 0.25]) == 0.75


A = Prices(input=1.0, cached_input=0.1, cache_write=1.25, output=4.0)
B = Prices(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)


def test_max_rates():
    assert max_rates({"a": A, "b": B}) == (3.75, 15.0)
    assert max_rates([A]) == (1.25, 4.0)
    assert max_rates([]) is None


def test_reservation_single():
    # B = 1000 + 64·2 + 256 = 1384; 1384·3.75 + 100·15 = 5190 + 1500 = 6690 → 6690 / 1e6
    r = reservation_usd(body_bytes=1000, message_count=2, max_tokens=100, max_output_chars=1000,
                        prices={"a": A, "b": B})
    assert r == pytest.approx(0.00669, abs=1e-15)


def test_reservation_mom_two_calls():
    # B = 1384 + (2 − 1)·4·1000 = 5384; 2·(5384·3.75 + 1500) = 2·21690 = 43380 → 43380 / 1e6
    r = reservation_usd(body_bytes=1000, message_count=2, max_tokens=100, max_output_chars=1000,
                        prices=[A, B], max_inference_calls=2)
    assert r == pytest.approx(0.04338, abs=1e-15)
    assert reservation_usd(body_bytes=1, message_count=1, max_tokens=1, max_output_chars=1, prices={}) is None


def _target(kind: str) -> Target:
    extra = {"config_hash": "h1"} if kind == "mom" else {}
    return Target(id="t", kind=kind, base_url="http://127.0.0.1:1/v1", model="MoM" if kind == "mom" else "m1",
                  prices={"m1": A}, **extra)


def test_priced_model_single():
    t = _target("single")
    assert priced_model(t, "m1-2024", {}) == "m1-2024"          # the model actually returned
    assert priced_model(t, None, {}) == "m1"


def test_priced_model_mom():
    t = _target("mom")
    one = {"x-vsr-inference-call-count": "1", "x-vsr-selected-model": "m1"}
    assert priced_model(t, "m1", one) == "m1"
    assert priced_model(t, "m1", {"X-VSR-Inference-Call-Count": "1", "X-VSR-Selected-Model": "m2"}) == "m2"
    assert priced_model(t, "m1", {**one, "x-vsr-inference-call-count": "2"}) is None
    assert priced_model(t, "m1", {"x-vsr-selected-model": "m1"}) is None
    assert priced_model(t, "m1", {**one, "x-vsr-model-usage": "{}"}) is None
    assert priced_model(t, "m1", {"x-vsr-inference-call-count": "1"}) is None



@pytest.mark.parametrize("price", [1e308, 1_000_000.01])
def test_a_price_above_a_dollar_a_token_is_not_registered(price):
    """A price of 1e308 was registered, then every plan died on 'benchmark arc-agi-2 needs a positive upper cost
    per case to size by cost, got inf'. Registering names the price (POST /targets and the registry file);
    a target stored before still reads (the model keeps no bound)."""
    entry = {"id": "t", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "m",
             "prices": {"m": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": price}}}
    target = Target.model_validate(entry)
    assert price_problem(target) == (f"prices.m.output: {price:g} USD per million tokens is above 1,000,000 (a "
                                     "dollar a token); give the price per million tokens")
    with pytest.raises(InvalidInput) as err:
        target_registry.parse(json.dumps([entry]).encode())
    assert err.value.message.startswith("the store's targets.json: targets[0].prices.m.output: "), err.value.message
    entry["prices"]["m"]["output"] = 1_000_000
    assert price_problem(Target.model_validate(entry)) is None
