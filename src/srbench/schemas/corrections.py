"""Corrections of a terminated run (zero model calls, TG-2, REP-2), stored content-addressed.

`PriceCorrection` (stages/derived/reprice.py): new four-bucket prices per target and model; the report
prices the stored call records with them. `UsageCorrection` (stages/derived/reconcile.py, the rule
``reconcile-usage``): every call's usage re-derived from its retained SSE transcript, one
`UsageRow` per call. The frozen plan and the raw call records never change; reports, comparisons
and exports name the correction in force. The models serialise (``model_dump(mode="json",
by_alias=True)``) to the bytes the dict literals they replace stored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.target import Prices

UsageRowStatus = Literal["verified", "changed", "unverifiable"]


class PriceCorrection(BaseModel):
    """New prices for some targets of one run (the others keep the plan's)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["price-correction"] = "price-correction"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    version: str
    """The repricing rules' version (``sr-bench-price-correction-v1``)."""
    run_id: str
    """The run it corrects."""
    plan_sha256: str
    """The frozen plan of that run."""
    prices: dict[str, dict[str, Prices]]
    """{target id: {model: USD per million tokens in each bucket}}."""
    reason: str | None
    """Why, as the operator gave it."""
    model_requests: Literal[0] = 0
    """Model calls the correction made: none."""


class UsageRow(BaseModel):
    """One call's reconciliation. The router fields are present only for a MoM target's call, `index`
    only for a call of a multi-call cell (a field absent from the stored row is left unset)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    cell_id: str
    """The cell the call belongs to."""
    role: str
    """subject, judge, user_simulator …"""
    call: str
    """Digest of the call record."""
    old_usage: dict[str, int] | None
    """The recorded four buckets (None: unknown)."""
    old_cost_usd: float | None
    """The recorded call's cost at the plan's (or the corrected) prices."""
    new_usage: dict[str, int] | None
    """The buckets the transcript proves (None: no proof)."""
    new_cost_usd: float | None
    """The cost of the proven buckets."""
    sse_sha256: str | None
    """SHA-256 of the transcript read."""
    status: UsageRowStatus
    """verified (same buckets), changed (new buckets from the evidence) or unverifiable."""
    reason: str | None
    """Why the row is unverifiable."""
    router: str | None = None
    """The router adapter that read a MoM call's headers."""
    served_models: list[str] | None = None
    """The models that adapter says served the call."""
    retries: int | None = None
    """Retries the router reported."""
    fallbacks: int | None = None
    """Fallbacks the router reported."""
    index: int | None = None
    """The call's position in its multi-call cell."""


class UsageCorrection(BaseModel):
    """A run's usage reconciled call by call from the retained transcripts."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["usage-correction"] = "usage-correction"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    version: str
    """The accounting rules' version."""
    metering_version: str
    """The usage parser's version."""
    run_id: str
    """The run it corrects."""
    plan: str
    """Digest of that run's frozen plan."""
    rows: list[UsageRow]
    """One row per call, in cell order."""
    verified_count: int
    """Rows whose evidence confirms the recorded buckets."""
    changed_count: int
    """Rows whose evidence gives other buckets."""
    unverifiable_count: int
    """Rows without usable evidence (their cost stays as recorded)."""
    old_known_cost_usd: float
    """The known cost before."""
    new_known_cost_usd: float
    """The known cost after (an unverifiable row keeps its old cost)."""
    qualified: bool
    """Every row was verified or changed."""
    model_requests: Literal[0] = 0
    """Model calls the correction made: none."""
    routers: dict[str, str] | None = Field(default=None, exclude_if=lambda v: v is None)
    """{MoM target id: router adapter} the calls were re-attributed with (absent when none)."""
    evidence: str
    """SHA-256 of the rows' JSON."""

    def stored(self) -> dict[str, JsonValue]:
        """The stored object: a row's optional fields that were not given stay absent."""
        data = self.model_dump(mode="json", by_alias=True, exclude={"rows"})
        data["rows"] = [r.model_dump(mode="json", exclude_unset=True) for r in self.rows]
        return data
