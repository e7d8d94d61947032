"""What a rule over a finished run reads of the run itself: its id, status, mode and plan digest. The
service's run (service/runs/state.py `RunState`) has them; a stage never imports the service, so it
names them as a protocol."""

from __future__ import annotations

from typing import Protocol


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
