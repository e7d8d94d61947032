"""A cell's and a run's state in the journal (``cells.state``, ``calls.state``, ``runs.status``): closed
sets, not bare strings.

A cell is `pending` until its request is journaled (`dispatching`); a judged cell is then
`judge_dispatching` while its judge call is out; it ends `completed`, `failed`, `cancelled` or
`ambiguous` (a request that may have been sent when the process stopped: never resent, never
counted as an answer). One model call of a multi-call cell (``calls.state``) goes from
`dispatching` to one of the same four ends. The stored text is the value itself.
"""

from __future__ import annotations

from typing import Literal, get_args

CellState = Literal["pending", "dispatching", "judge_dispatching", "completed", "failed", "cancelled", "ambiguous"]
TerminalCellState = Literal["completed", "failed", "cancelled", "ambiguous"]
CallState = Literal["dispatching", "completed", "failed", "cancelled", "ambiguous"]
RunStatus = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted", "stopped_early"]
TerminalRunStatus = Literal["completed", "failed", "cancelled", "interrupted", "stopped_early"]
# a run's status as the API answers it: upstream's six, which its CLI and Dashboard know (a run stopped early
# by its plan's rule is `completed` there, with `stopped_early: true` and its early-stop block beside it)
WireRunStatus = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted"]

CELL_STATES: tuple[CellState, ...] = get_args(CellState)
TERMINAL_CELL_STATES: tuple[TerminalCellState, ...] = get_args(TerminalCellState)
CALL_STATES: tuple[CallState, ...] = get_args(CallState)
# the ends that are not a completed call: never credited, counted as failures
UNSUCCESSFUL_CELL_STATES: tuple[TerminalCellState, ...] = ("failed", "cancelled", "ambiguous")
# A cell in flight when its run ends becomes ambiguous (its call may have been sent and billed), with this
# error class: the one rule the run's end writes (`service.journal.run_end`) and every view of a run whose
# end is not recorded yet shows (`service.runs.end.Endings`: the run view's progress, the calls pages).
IN_FLIGHT: dict[CellState, str] = {"dispatching": "ambiguous_dispatch", "judge_dispatching": "ambiguous_judge_dispatch"}
CALL_IN_FLIGHT: dict[CallState, str] = {"dispatching": "ambiguous_dispatch"}      # one call of a conversation


def wire_status(status: RunStatus) -> WireRunStatus:
    """A run's status at the wire (upstream's set): `stopped_early` is `completed` — a deliberate, final end
    (the plan's stopping rule settled its claim); everything else is itself."""
    return "completed" if status == "stopped_early" else status


def call_state(status: str) -> TerminalCellState:
    """The terminal state of a cell or call whose record ended with `status` (completed, cancelled;
    anything else failed)."""
    return "completed" if status == "completed" else "cancelled" if status == "cancelled" else "failed"
