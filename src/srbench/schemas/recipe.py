"""A MoM target's captured routing recipe (kind ``recipe_capture``, targets/router_config.py): the
router's configuration and recipes read from its API before the run, credentials redacted, or why
nothing was captured."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.wire import JSONObject


class RecipeCapture(BaseModel):
    """One target's capture, as stored."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["recipe_capture"] = "recipe_capture"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    target_id: str
    """The MoM target."""
    pinned_config_hash: str | None
    """The config hash the target pins."""
    captured_at: float
    """Unix time of the capture."""
    captured: bool
    """A recipe was captured (False: see `limitation`)."""
    limitation: str | None
    """Why nothing was captured."""
    hash_before: JSONObject | None
    """The router's config hash view before reading the config."""
    hash_after: JSONObject | None
    """That view after reading it (must equal `hash_before`)."""
    config_etag: str | None
    """The ETag of the router's config."""
    recipes_etag: str | None
    """The ETag the recipes were read under (must equal `config_etag`)."""
    config: Any
    """The router's configuration, redacted."""
    recipes: Any
    """Its recipes, redacted."""
    redacted: list[str]
    """The paths whose values were redacted."""
    projection_hash: str | None
    """Digest of the redacted config and recipes."""


class RecipeSummary(BaseModel):
    """A capturing target's recipe in a run, from the run's events only (what the report shows)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    status: Literal["captured", "not_captured"]
    """A recipe was captured before the run."""
    capture: str
    """The capture object's digest."""
    projection_hash: str | None
    """Digest of the redacted config and recipes."""
    limitation: str | None
    """Why it was not captured, or does not hold for the whole run."""
    held_during_run: bool | None
    """The configuration did not change during the run (null: not checked)."""
