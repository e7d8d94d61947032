"""A report's result rows, stored in fixed-size pages (stages/report/results.py, stages/report/stream.py):
the index (kind ``results``, schema 2) names the pages; each page (kind ``results_page``) holds up
to `page_rows` report rows in sequence order. A schema-1 index (older reports) held the rows itself;
the readers in stages/report/results.py still read it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
