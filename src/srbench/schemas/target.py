"""Targets (TG-1..TG-5): an endpoint, a model identity and the four prices per actual model."""

from __future__ import annotations

import re
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from srbench.schemas.generation import GenerationParams, ReasoningEffort
from srbench.schemas.wire import JSONObject

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

# Generation fields a manifest's sampling or a target's request_params may set, and the reasoning efforts:
# those of GenerationParams (schemas/generation.py), the model that types them.
GENERATION_FIELDS = frozenset(GenerationParams.model_fields)
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)


class Prices(BaseModel):
    """USD per million tokens for each of the four mutually exclusive buckets."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    input: float = Field(ge=0)
    cached_input: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    output: float = Field(ge=0)


def check_url(value: str, what: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} must be an http(s) URL")
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError(f"{what} must not contain spaces or control characters")
    try:
        _ = parts.port                      # (a port outside 0–65535 or not a number raises)
    except ValueError:
        raise ValueError(f"{what} has an invalid port (0–65535)") from None
    if parts.username or parts.password:
        raise ValueError(f"{what} must not carry credentials")
    if parts.query or parts.fragment:
        raise ValueError(f"{what} must not have a query or fragment")
    return value.rstrip("/")


def check_types(params: dict[str, JsonValue], what: str) -> dict[str, JsonValue]:
    """Where a user writes generation fields (a manifest's sampling, a target's request_params), each has
    its own JSON type, checked strictly: ``true`` for a number or ``"7"`` for a seed is refused by name,
    never rewritten (GenerationParams itself would read them as 1 and 7). A stored plan is read as it is."""
    try:
        GenerationParams.model_validate(params, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"][:1])
        raise ValueError(f"{what}.{field} has the wrong type ({first['msg'].lower()}): {params.get(field)!r}") from None
    return params


def check_generation_params(params: dict[str, JsonValue], what: str) -> dict[str, JsonValue]:
    unknown = sorted(set(params) - GENERATION_FIELDS)
    if unknown:
        raise ValueError(f"{what} has unsupported field(s): {', '.join(unknown)}")
    if params.get("n", 1) != 1:
        raise ValueError(f"{what}.n must be 1")
    t = params.get("temperature")
    if t is not None and not (isinstance(t, int | float) and 0 <= t <= 2):
        raise ValueError(f"{what}.temperature must be within [0, 2]")
    for key in ("top_p", "min_p"):
        v = params.get(key)
        if v is not None and not (isinstance(v, int | float) and 0 <= v <= 1):
            raise ValueError(f"{what}.{key} must be within [0, 1]")
    for key in ("presence_penalty", "frequency_penalty"):
        v = params.get(key)
        if v is not None and not (isinstance(v, int | float) and -2 <= v <= 2):
            raise ValueError(f"{what}.{key} must be within [-2, 2]")
    mt = params.get("max_tokens")
    if mt is not None and not (isinstance(mt, int) and not isinstance(mt, bool) and mt >= 1):
        raise ValueError(f"{what}.max_tokens must be a positive integer")
    mn = params.get("min_tokens")
    if mn is not None and mt is not None:
        if not isinstance(mn, int | float):     # (compared below; was a TypeError traceback)
            raise ValueError(f"{what}.min_tokens must be a number")
        if mn > mt:
            raise ValueError(f"{what}.min_tokens must not exceed max_tokens")
    tk = params.get("top_k")
    if tk is not None and not (tk == -1 or (isinstance(tk, int) and tk >= 1)):
        raise ValueError(f"{what}.top_k must be -1 or >= 1")
    re_ = params.get("reasoning_effort")
    if re_ is not None and re_ not in REASONING_EFFORTS:
        raise ValueError(f"{what}.reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}")
    return params


class Target(BaseModel):
    """A single model or a MoM router. Secrets are never stored: `api_key_env` names a variable."""

    model_config = ConfigDict(extra="forbid")
    id: str
    kind: Literal["single", "mom"]
    base_url: str
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    prices: dict[str, Prices] = Field(default_factory=dict)
    request_params: JSONObject = Field(default_factory=dict)
    # MoM only
    config_hash: str | None = None
    preview_url: str | None = None
    preview_api_key_env: str | None = None
    max_inference_calls: int | None = Field(default=None, ge=1, le=256)
    models: list[str] | None = Field(default=None, description="declared pool of models a MoM may serve")
    capture_recipe: bool = False
    expected_response_model: str | None = None
    # absent means vLLM Semantic Router; left out of the dump then, so earlier plans keep their sha256
    router: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", exclude_if=lambda v: v is None,
                               description="MoM only: the router adapter that attributes served models "
                                           "(vllm-sr when absent; litellm, body-model)")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.fullmatch(v):            # fullmatch: `$` alone lets a trailing newline through ('nl\n')
            raise ValueError("id must be 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter "
                             "or digit")
        return v

    @field_validator("base_url")
    @classmethod
    def _base(cls, v: str) -> str:
        return check_url(v, "base_url")

    @field_validator("preview_url")
    @classmethod
    def _preview(cls, v: str | None) -> str | None:
        return None if v is None else check_url(v, "preview_url")

    @field_validator("api_key_env", "preview_api_key_env")
    @classmethod
    def _env(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and not _ENV.fullmatch(v):
            raise ValueError(f"{info.field_name} must be the NAME of an environment variable, not a key")
        if v is not None and v.upper().startswith("SR_BENCH_"):
            raise ValueError(f"{info.field_name} {v} is one of sr-bench's own variables (the service token is "
                             "never sent to a model endpoint); use the model's own variable (SVC-6)")
        return v

    @field_validator("request_params")
    @classmethod
    def _params(cls, v: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return check_types(check_generation_params(v, "request_params"), "request_params")

    @model_validator(mode="after")
    def _kind_rules(self) -> Target:
        if self.kind == "single":
            for name in ("config_hash", "preview_url", "max_inference_calls", "models", "router"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name} applies only to kind 'mom'")
            if self.capture_recipe:
                raise ValueError("capture_recipe applies only to kind 'mom'")
        return self

    def price_for(self, model: str | None) -> Prices | None:
        """Prices of the model that actually answered (None when unknown or unpriced)."""
        if model is None:
            return None
        return self.prices.get(model)


class TargetRegistryFile(BaseModel):
    """`target register --file`: either a list of targets or {"targets": [...]}."""

    model_config = ConfigDict(extra="forbid")
    targets: list[Target]
