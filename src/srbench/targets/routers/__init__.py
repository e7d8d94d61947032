"""The router-adapter registry: the one place that names the router kinds a MoM target may declare.

A MoM target's ``router`` field names its adapter (absent: ``vllm-sr``, so targets registered before
the field existed keep their meaning). To add a router kind, write one module with a
:class:`~srbench.targets.routers.base.RouterAdapter` subclass and add one line to ``_ADAPTERS``.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from srbench.errors import InvalidInput
from srbench.schemas.call import MeteredCall, MeteredView
from srbench.schemas.target import Target
from srbench.targets.routers import body_model, litellm, vllm_sr
from srbench.targets.routers.base import Attribution, ChildCall, RouterAdapter

__all__ = ["Attribution", "ChildCall", "RouterAdapter", "DEFAULT_ROUTER", "get", "names", "for_target",
           "attribute", "router_problem", "selected_model"]

DEFAULT_ROUTER = "vllm-sr"

_ADAPTERS: tuple[RouterAdapter, ...] = (
    vllm_sr.VllmSemanticRouter(),
    litellm.LiteLLM(),
    body_model.BodyModel(),
)

REGISTRY: dict[str, RouterAdapter] = {a.name: a for a in _ADAPTERS}
if len(REGISTRY) != len(_ADAPTERS):
    raise RuntimeError("two registered router adapters share a name")


def get(name: str | None) -> RouterAdapter:
    """The registered adapter `name` (None: the default); InvalidInput naming the known ones otherwise."""
    try:
        return REGISTRY[name or DEFAULT_ROUTER]
    except KeyError:
        raise InvalidInput(f"unknown router {name!r}; known: {', '.join(REGISTRY)}", code="unknown_router") from None


def names() -> list[str]:
    return list(REGISTRY)


def for_target(target: Target) -> RouterAdapter:
    return get(target.router)


def attribute(target: Target, call: MeteredCall | Mapping[str, JsonValue]) -> Attribution:
    """The attribution of one call of MoM `target`: a call record, or a stored one's JSON (read as `MeteredView`)."""
    c = MeteredView.of(call)
    return for_target(target).attribute(target, c.headers, c.response_model, c.usage_raw)


def selected_model(target: Target | None, call: MeteredCall | Mapping[str, JsonValue]) -> str | None:
    """The model that served a subject call, as the report's rows say it: MoM `target`'s router adapter
    (vLLM-SR's header, LiteLLM's served model, …), else the router header, else None."""
    c = MeteredView.of(call)
    return attribute(target, c).selected_model if target is not None else c.headers.get("x-vsr-selected-model")


def router_problem(target: Target) -> str | None:
    """Why `target`'s router field cannot be used, or None."""
    if target.router is None:
        return None
    if target.router not in REGISTRY:
        return f"unknown router {target.router!r}; known: {', '.join(REGISTRY)}"
    if target.preview_url and target.router != DEFAULT_ROUTER:
        return f"preview_url is a vLLM Semantic Router endpoint; router {target.router} has none"
    return None
