"""What sharing a run through a team's object store answers (service/team/sync.py): a push and a pull."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

_ANSWER = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Pushed(BaseModel):
    """A run pushed: its bundle named ``runs/<run id>`` in the remote store, its objects copied there."""

    model_config = _ANSWER
    run_id: str
    """The run."""
    bundle: str
    """The bundle's digest in the remote store."""
    objects: int
    """Objects the bundle lists."""
    copied: int
    """Objects copied now (the others were there already)."""
    cells: int
    """The run's cells in the bundle."""
    model_requests: Literal[0]
    """No model is called."""


class Pulled(BaseModel):
    """A run pulled from the remote store into this one (or found pulled before)."""

    model_config = _ANSWER
    run_id: str
    """The run."""
    bundle: str
    """The bundle it came from."""
    imported: bool
    """Its rows were imported now (false: it was pulled before)."""
    copied: int
    """Objects copied now."""
    cells: int | None = None
    """The run's cells (absent when the run was pulled before)."""
    model_requests: Literal[0]
    """No model is called."""
