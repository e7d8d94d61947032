"""The kinds of a run's events (the journal's ``events.type``): a closed set, not bare strings.

A run's life (`created`, `running`, then its terminal status), its cells' ends other than an answer
(`cell_failed`, `cell_cancelled`, `cell_ambiguous`; `cell_completed` is not recorded as an event),
budget refusals, cancellation, early stopping, faults of the store, a report that could not be built,
a bundle pulled from another store, a target's dispatch stopped, and router-recipe checks. The stored
text is the value itself; the event's data is a JSON object whose keys depend on the kind.
"""

from __future__ import annotations

from typing import Literal, get_args

EventType = Literal[
    "created", "running", "completed", "failed", "cancelled", "interrupted", "stopped_early",
    "cell_completed", "cell_failed", "cell_cancelled", "cell_ambiguous", "budget_refused",
    "cancellation_requested", "early_stop", "early_stop_recorded", "storage_fault", "object_damaged",
    "report_failed", "pulled", "dispatch_stopped", "recipe_captured", "recipe_checked", "config_hash_checked",
]
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)

CELL_EVENTS: dict[str, EventType] = {"completed": "cell_completed", "failed": "cell_failed",
                                     "cancelled": "cell_cancelled", "ambiguous": "cell_ambiguous"}
"""The event a cell's terminal state records."""
