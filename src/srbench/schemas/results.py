"""A report's result rows, stored in fixed-size pages (stages/report/results.py, stages/report/stream.py):
the index (kind ``results``, schema 2) names the pages; each page (kind ``results_page``) holds up
to `page_rows` report rows in sequence order. A schema-1 index (older reports) held the rows itself;
the readers in stages/report/results.py still read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.call import Usage
from srbench.schemas.cell import CellState


class ResultsIndex(BaseModel):
    """The index of a report's result pages."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["results"] = "results"
    """What this object is."""
    schema_: Literal[2] = Field(default=2, alias="schema")
    """The layout of this object (2: paged)."""
    total: int
    """Rows in all pages."""
    page_rows: int
    """Rows per page (the last may hold fewer)."""
    starts: list[int]
    """The first row's sequence number of each page (for keyset paging)."""
    pages: list[str]
    """Digests of the pages, in order."""


_ROW = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


class TurnRouting(BaseModel):
    """What a router adapter read from one routed call: a conversation's subject turn, or a single call's
    row (stages/report/routing.py counts them)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    has_call: bool
    """Whether there is a call record."""
    http_status: int | None
    """The HTTP status of the response, None without one."""
    selected_model: str | None
    """The model the router chose, None when the call names none."""
    deployment: str | None
    """The deployment the router named."""
    inference_calls: int | None
    """Inference calls behind the call, None when it did not report them."""
    retries: int | None
    """The router's retries, None when it did not report them."""
    fallbacks: int | None
    """The router's fallbacks, None when it did not report them."""


class ResultRow(BaseModel):
    """One planned cell's row of a report (stages/report/cells.py `cell_row`), stored in the result pages.
    The first fields are in every row; the others only where the cell has them (a single call, a router's
    attribution, a conversation, a preview, a grade) and are not written otherwise (`dump`). A benchmark's
    own figures of a conversation cell (`Benchmark.conversation_row`) are extra fields."""

    model_config = _ROW
    cell_id: str
    """The cell."""
    seq: int
    """Its position in the plan."""
    case_id: str
    """The case."""
    target_id: str
    """The target."""
    benchmark: str
    """The case's benchmark."""
    stratum: str | None
    """The case's stratum."""
    state: CellState
    """The cell's state (a sandbox fault or a failed judge makes a completed answer `failed`)."""
    error_class: str | None
    """Why it did not complete, or None."""
    call: str | None
    """Digest of its call record (a conversation record for a multi-call cell), or None."""
    has_call: bool
    """Whether it has a call record."""
    correct: bool | None
    """Its grade's verdict; None when not graded."""
    grade: str | None
    """Digest of its grade, or None."""
    grade_status: str | None
    """The grade's status, or None."""
    usage: Usage | None
    """The four token buckets of its (subject) calls; None when one is unmetered."""
    cost_usd: float | None
    """Principal cost; None when unknown."""
    cache_neutral_cost_usd: float | None
    """Principal cost with every cached token priced as input."""
    latency_s: float | None
    """Its call's latency (a conversation: every call's duration summed)."""
    ttft_s: float | None
    """Time to first token (a conversation: its first subject call's)."""
    selected_model: str | None
    """The model a router chose (x-vsr-selected-model or its adapter's reading)."""
    response_model: str | None
    """The model the response names."""
    decision: str | None
    """A router's decision (x-vsr-selected-decision)."""
    finish_reason: str | None
    """The (last subject) call's finish reason."""
    judge_call: str | None
    """Digest of its judge call record, or None."""
    judge_cost_usd: float | None
    """The judge call's cost (0 without one; None when a judge call in flight may have been billed)."""
    published_score: float | None
    """The published rule's score of its answer (benchmarks/published.py)."""
    config_hash_seen: str | None
    """The router config hash its response(s) carried (stages/compare/evidence.py)."""
    judge_usage: Usage | None = None
    """The judge call's four token buckets (a judged cell)."""
    routing: dict[str, JsonValue] | None = None
    """Preview: the routing record the router returned (its own payload)."""
    needs_real_run: str | None = None
    """Preview: why the route cannot be replayed from saved answers (stages/derived/replay.py), or None."""
    conversation: bool | None = None
    """A multi-call cell (a conversation record)."""
    calls: int | None = None
    """A conversation's recorded calls (None: no record)."""
    calls_by_role: dict[str, int] | None = None
    """A conversation's calls per role."""
    tokens_by_role: dict[str, Usage | None] | None = None
    """A conversation's four token buckets per role (None when one call of the role is unmetered)."""
    simulator_cost_usd: float | None = None
    """A conversation's user-simulator cost."""
    scaffolding_cost_usd: float | None = None
    """A conversation's scaffolding cost."""
    error: str | None = None
    """A conversation's error, one line."""
    trajectory: str | None = None
    """Digest of a conversation's stored trajectory, if any."""
    cost_basis: str | None = None
    """How the principal cost was priced (targets/accounting.py)."""
    cost_unknown_reason: str | None = None
    """Why the principal cost is unknown."""
    priced_models: list[str] | None = None
    """The models whose prices priced it."""
    outside_pool: list[str] | None = None
    """Models that answered although the target's pool does not declare them."""
    http_status: int | None = None
    """The (last subject) call's HTTP status."""
    router: str | None = None
    """The router adapter that read the call(s) (a MoM target)."""
    served_models: list[str] | None = None
    """The models that served the call, as its router reports them."""
    deployment: str | None = None
    """The deployment the router named."""
    inference_calls: int | None = None
    """Inference calls behind the call."""
    retries: int | None = None
    """The router's retries."""
    fallbacks: int | None = None
    """The router's fallbacks."""
    router_reported_cost_usd: float | None = None
    """The cost the router reported for the call."""
    turn_models: list[str | None] | None = None
    """A router's conversation: the model it chose for each subject turn."""
    turn_routing: list[TurnRouting] | None = None
    """A router's conversation: each subject turn's routing."""
    grade_error: str | None = None
    """Why a sandbox fault left the answer ungraded."""

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON: the fields it has (set), extras included."""
        return self.model_dump(mode="json", exclude_unset=True)

    def own_routing(self) -> TurnRouting:
        """The routing of the row's own call (a single call's row)."""
        return TurnRouting(has_call=self.has_call, http_status=self.http_status, selected_model=self.selected_model,
                           deployment=self.deployment, inference_calls=self.inference_calls, retries=self.retries,
                           fallbacks=self.fallbacks)


class RunCells(BaseModel):
    """The index of a finished run's cells for its report (kind ``run_cells``, stages/report/stream.py
    `write_run_cells`): one `RunCellsPart` per target, so a build holds one target's cells at a time."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["run_cells"] = "run_cells"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    targets: dict[str, str]
    """Per target: the digest of its part."""


class RunCellsPart(BaseModel):
    """One target's cells of a `RunCells` index (kind ``run_cells_part``), in seq order."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["run_cells_part"] = "run_cells_part"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    target_id: str
    """The target."""
    cells: list[list[JsonValue]]
    """Each cell as the journal lists it: (cell id, seq, case id, target id, state, call, error class, judge
    call, ...)."""


StoredRow = dict[str, JsonValue]
"""A result row as stored: `ResultRow.dump()` (its fields set, extras included), handed on as JSON by the
readers (a report of an earlier layout may lack a field the model now requires)."""


class ResultsPage(BaseModel):
    """One page of a report's result rows (kind ``results_page``), up to `ResultsIndex.page_rows` rows in
    sequence order."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["results_page"] = "results_page"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    rows: list[StoredRow]
    """The rows, as stored."""


class InlineResults(BaseModel):
    """A report's result rows held in the index itself (kind ``results``, schema 1: written before pages
    existed; still read)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object (1: inline)."""
    rows: list[StoredRow]
    """Every row, in sequence order."""


def read_results(data: Mapping[str, object]) -> ResultsIndex | InlineResults:
    """A stored results object's JSON as its model (a paged index, or the inline rows of schema 1)."""
    return (ResultsIndex if data.get("schema", 1) == 2 else InlineResults).model_validate(data)
