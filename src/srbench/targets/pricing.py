"""Pricing: USD cost of metered calls, the cache-neutral cost, and the bounds budget reservation needs.

Prices are USD per million tokens for the four buckets of :class:`~srbench.schemas.call.Usage`.
Unknown stays unknown: every function returns ``None`` when the usage or the price is unknown,
never 0 (RUN-8). The costs here are token-equivalent estimates, not a provider bill.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from srbench.schemas.call import Usage
from srbench.schemas.target import Prices, Target
from srbench.targets import routers

__all__ = [
    "cost_usd", "cache_neutral_cost_usd", "sum_or_none", "sum_known", "max_rates",
    "reservation_usd", "priced_model",
]

PER_TOKENS = 1_000_000


MAX_PRICE = 1_000_000.0      # USD per million tokens: a dollar a token


def price_problem(target: Target) -> str | None:
    """Why `target`'s prices cannot be registered, or None: a price above `MAX_PRICE` is a typo, and 1e308 made
    every cost estimate of a plan infinite ('needs a positive upper cost per case to size by cost, got inf').
    Checked where targets are registered (`POST /targets`, the registry file), not on stored targets."""
    for model, prices in target.prices.items():
        for bucket, value in prices.model_dump().items():
            if value > MAX_PRICE:
                return (f"prices.{model}.{bucket}: {value:g} USD per million tokens is above {MAX_PRICE:,.0f} (a "
                        "dollar a token); give the price per million tokens")
    return None


def cost_usd(usage: Usage | None, prices: Prices | None) -> float | None:
    """Measured four-bucket cost.

    cost = (input·π.input + cached_input·π.cached_input + cache_write·π.cache_write
            + output·π.output) / 10⁶;  None when `usage` or `prices` is None.
    """
    if usage is None or prices is None:
        return None
    return (usage.input * prices.input + usage.cached_input * prices.cached_input
            + usage.cache_write * prices.cache_write + usage.output * prices.output) / PER_TOKENS


def cache_neutral_cost_usd(usage: Usage | None, prices: Prices | None) -> float | None:
    """Cost as if no cache existed (REP-3): every prompt token at the plain input price.

    cost = ((input + cached_input + cache_write)·π.input + output·π.output) / 10⁶;
    None when `usage` or `prices` is None. It exposes cache warm-up between runs; it is not a bill.
    """
    if usage is None or prices is None:
        return None
    return (usage.total_input() * prices.input + usage.output * prices.output) / PER_TOKENS


def sum_or_none(costs: Iterable[float | None]) -> float | None:
    """Σ costs, or None as soon as one part is unknown (an empty sum is 0.0)."""
    total = 0.0
    for c in costs:
        if c is None:
            return None
        total += c
    return total


def sum_known(costs: Iterable[float | None]) -> float:
    """Σ of the known costs only (the report's `known_cost_usd`)."""
    return sum(c for c in costs if c is not None)


def max_rates(prices: Iterable[Prices] | Mapping[str, Prices]) -> tuple[float, float] | None:
    """(max over models of max(π.input, π.cached_input, π.cache_write), max over models of π.output).

    The worst-case rate of one prompt token and of one output token across every model a call may
    be priced at (for a MoM: every priced model of its pool). None when no price is given.
    """
    items = list(prices.values()) if isinstance(prices, Mapping) else list(prices)
    if not items:
        return None
    prompt_rate = max(max(p.input, p.cached_input, p.cache_write) for p in items)
    return prompt_rate, max(p.output for p in items)


def reservation_usd(*, body_bytes: int, message_count: int, max_tokens: int, max_output_chars: int,
                    prices: Iterable[Prices] | Mapping[str, Prices],
                    max_inference_calls: int = 1) -> float | None:
    """Upper estimate of one call's cost, held against the run's USD cap before it is sent.

    m = max_inference_calls (1 for a single model);
    B = body_bytes + 64·message_count + 256 + (m − 1)·4·max_output_chars   (prompt tokens ≤ bytes);
    reservation = m·(B·max prompt rate + max_tokens·max output rate) / 10⁶   (rates from max_rates).
    None when no price is known. An estimate: providers do not enforce it (RUN-8).
    """
    rates = max_rates(prices)
    if rates is None:
        return None
    m = max_inference_calls
    bound = body_bytes + 64 * message_count + 256 + (m - 1) * 4 * max_output_chars
    return m * (bound * rates[0] + max_tokens * rates[1]) / PER_TOKENS


def priced_model(target: Target, response_model: str | None, headers: Mapping[str, str]) -> str | None:
    """Name of the model a call is priced at, or None when it cannot be priced from one stream.

    - single: the model the response names, else the target's model;
    - mom: the model that answered, as the target's router adapter reads it, only for a proven direct
      route of exactly one inference call (for vLLM Semantic Router: ``x-vsr-selected-model`` when
      ``x-vsr-inference-call-count`` is exactly "1"). A composite route, retries, fallbacks or an
      undeclared count give None: the final model never stands in for unmetered calls (TG-3).
    """
    if target.kind == "single":
        return response_model or target.model
    attr = routers.for_target(target).attribute(target, headers, response_model, None)
    if attr.problem or attr.children is not None or attr.unknown_reason or attr.inference_calls != 1:
        return None
    return attr.selected_model
