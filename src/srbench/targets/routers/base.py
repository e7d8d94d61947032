"""What a router adapter is: it reads one stored response and says which model(s) served it.

An adapter sees only what a call left behind — its response headers (credentials masked), the
``model`` its body named and its raw usage object — so attribution can be re-derived offline from a
stored call record at any time, with zero model calls. Evidence that is missing stays unknown
(``None``); evidence that contradicts itself sets ``problem`` and the call's cost is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from srbench.schemas.call import Usage
from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON


@dataclass(frozen=True)
class ChildCall:
    """One inference call a composite route made, with its own usage (None: unmetered)."""

    model: str
    usage: Usage | None


@dataclass
class Attribution:
    """Who served one call, as far as the router's own evidence says.

    `children` is the router's own list of every inference call with its usage (a composite route);
    None when the router lists none. `inference_calls` is how many inference calls were made in all
    (retries and fallbacks included), None when the router does not say. `selected_model` is the
    model that produced the answer the caller got.
    """

    router: str
    selected_model: str | None = None
    inference_calls: int | None = None
    children: list[ChildCall] | None = None
    complete: bool = False                  # `children` covers every call
    retries: int | None = None
    fallbacks: int | None = None
    deployment: str | None = None           # the router's own id of the deployment that answered
    group: str | None = None                # the router's name of the pool / model group
    config_hash: str | None = None
    reported_cost_usd: float | None = None  # what the router itself claims (evidence, never priced)
    problem: str | None = None              # the evidence contradicts itself
    unknown_reason: str | None = None       # why no single model can be priced, when that is so
    evidence: dict[str, str] = field(default_factory=dict)

    def served_models(self) -> list[str]:
        """Every model that served a metered part of the call (in order; may repeat)."""
        if self.children is not None:
            return [c.model for c in self.children]
        return [self.selected_model] if self.selected_model else []


class RouterAdapter:
    """One router kind. Subclasses set `name`, `title` and override `attribute`."""

    name: str = ""
    title: str = ""
    reports_config_hash: bool = False       # whether a pinned config_hash can be checked from responses
    header_names: tuple[str, ...] = ()      # names of the headers `request_headers` may send

    def attribute(self, target: Target, headers: Mapping[str, str], response_model: str | None,
                  usage_raw: WireJSON | None) -> Attribution:
        raise NotImplementedError

    def request_headers(self, target: Target) -> dict[str, str]:
        """Extra request headers this router needs to expose its evidence (never a secret)."""
        return {}


def lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def header_count(headers: Mapping[str, str], name: str) -> tuple[int | None, str | None]:
    """(a non-negative integer header, problem): (None, None) when absent."""
    raw = headers.get(name)
    if raw is None:
        return None, None
    text = raw.strip()
    if not text.isdigit() or not text.isascii():
        return None, f"{name} is not a non-negative integer: {raw[:40]!r}"
    return int(text), None


def header_usd(headers: Mapping[str, str], name: str) -> float | None:
    """A router's own cost claim, when it is a finite non-negative number (else None: not evidence)."""
    raw = headers.get(name)
    try:
        value = float(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def usage_cost(usage_raw: WireJSON | None) -> float | None:
    """A ``cost`` a router or gateway adds to the usage object (OpenRouter, LiteLLM), when it is a
    finite non-negative number: its own figure, kept as evidence."""
    cost = (usage_raw or {}).get("cost") if isinstance(usage_raw, dict) else None
    if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0:
        return float(cost)
    return None
