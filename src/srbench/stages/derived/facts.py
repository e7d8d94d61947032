"""What a rule over a finished run reads of the run itself — its id, status, mode and plan digest — and of
its cells. The service's run (service/runs/state.py `RunState`) and cell rows (service/journal/cell_rows.py
`CellRow`) have them; a stage never imports the service, so it names them as protocols."""

from __future__ import annotations

from typing import Protocol

from srbench.schemas.cell import CellState


class RunFacts(Protocol):
    """A run as stages/derived reads it."""

    @property
    def id(self) -> str:
        """The run's id."""
        ...

    @property
    def status(self) -> str:
        """Its status (schemas/cell.py RunStatus)."""
        ...

    @property
    def mode(self) -> str:
        """Its plan's mode (live, preview, replay)."""
        ...

    @property
    def plan(self) -> str:
        """The digest of its frozen plan."""
        ...


class CellFacts(Protocol):
    """A run's cell as stages/derived reads it (service/journal/cell_rows.py `CellRow` has these)."""

    @property
    def cell_id(self) -> str:
        """The cell."""
        ...

    @property
    def seq(self) -> int:
        """Its position in the run."""
        ...

    @property
    def case_id(self) -> str:
        """The case."""
        ...

    @property
    def target_id(self) -> str:
        """The target."""
        ...

    @property
    def state(self) -> CellState:
        """The cell's state."""
        ...

    @property
    def request(self) -> str | None:
        """Digest of its request object."""
        ...

    @property
    def call(self) -> str | None:
        """Digest of its call record (a conversation record for a multi-call cell)."""
        ...

    @property
    def judge_call(self) -> str | None:
        """Digest of its judge call record."""
        ...
