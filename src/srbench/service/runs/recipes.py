"""UI-7 recipes in a run: capture each `capture_recipe: true` MoM target's configuration from the
router's own API before the run, check it again after, and read the captures back.

Before dispatch (live and preview runs) every such target's capture (`targets/router_config.py`) is
stored in the CAS and named by a `recipe_captured` event of the run; after a run that was not stopped
from outside, `recipe_checked` records whether the hash and the config's ETag were still the same.
A capture that did not hold, or a configuration that changed during the run, is a named limitation
(in the report and on the Recipe tab). A run without a capture says "unavailable": it never borrows
a capture taken later or by another run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp

from srbench.cas import ObjectStore
from srbench.schemas.event import EventType
from srbench.schemas.event_data import EventData, RecipeCaptured, RecipeChecked
from srbench.schemas.plan import Plan
from srbench.schemas.recipe import RecipeCapture, RecipeSummary
from srbench.schemas.target import Target
from srbench.service.api.workflow import RecipeCheck, RecipeView
from srbench.service.journal.evidence import events_of_types
from srbench.service.journal.writer import Journal
from srbench.targets.router_config import capture_recipe, check_unchanged

EventSink = Callable[[EventType, EventData], Awaitable[None]]
"""Records one event of the run (the run journal's `event`)."""
CAPTURED: EventType = "recipe_captured"
CHECKED: EventType = "recipe_checked"
TIMEOUT_S = 10.0


def _capturing(plan: Plan) -> list[Target]:
    if plan.mode not in ("live", "preview"):
        return []
    targets = [pt.target for pt in plan.targets]
    return [t for t in targets if t.kind == "mom" and t.capture_recipe]


async def capture_before(client: aiohttp.ClientSession, plan: Plan, store: ObjectStore,
                         event: EventSink) -> dict[str, RecipeCapture]:
    """Capture every capturing target; `event(type, data)` records it. Returns target id → capture."""
    out = {}
    for t in _capturing(plan):
        doc = await capture_recipe(client, t, min(TIMEOUT_S, plan.limits.total_timeout_s))
        digest = store.put_json(doc.model_dump(mode="json", by_alias=True))
        await event(CAPTURED, RecipeCaptured(target_id=t.id, capture=digest, captured=doc.captured,
                                              projection_hash=doc.projection_hash, limitation=doc.limitation))
        out[t.id] = doc
    return out


async def check_after(client: aiohttp.ClientSession, plan: Plan, captures: dict[str, RecipeCapture],
                      event: EventSink) -> None:
    for t in _capturing(plan):
        doc = captures.get(t.id)
        if doc is None or not doc.captured:
            continue
        res = await check_unchanged(client, t, doc, min(TIMEOUT_S, plan.limits.total_timeout_s))
        await event(CHECKED, res)


def _events(journal: Journal, run_id: str) -> list[EventData]:
    return events_of_types(journal, run_id, (CAPTURED, CHECKED))


def summary(journal: Journal, run_id: str) -> dict[str, RecipeSummary]:
    """Per capturing target: status (captured | not_captured), projection hash and the limitation."""
    out: dict[str, RecipeSummary] = {}
    for d in _events(journal, run_id):
        if isinstance(d, RecipeCaptured):
            out[d.target_id] = RecipeSummary(status="captured" if d.captured else "not_captured",
                                             capture=d.capture, projection_hash=d.projection_hash,
                                             limitation=d.limitation, held_during_run=None)
        elif isinstance(d, RecipeChecked) and d.target_id in out:
            held = d.unchanged
            found = out[d.target_id]
            out[d.target_id] = found.model_copy(update={"held_during_run": held, "limitation": found.limitation
                                                        if held else d.problem})
    return out


def recipes_view(journal: Journal, store: ObjectStore, run_id: str, plan: Plan) -> list[RecipeView]:
    """Every MoM target of the run with its capture (the stored object, already redacted) or why there
    is none."""
    found = summary(journal, run_id)
    checks = {d.target_id: RecipeCheck.model_validate(d.model_dump()) for d in _events(journal, run_id)
              if isinstance(d, RecipeChecked)}
    out: list[RecipeView] = []
    for pt in plan.targets:
        t = pt.target
        if t.kind != "mom":
            continue
        s = found.get(t.id)
        if s is None:
            why = ("capture_recipe is not set for this target" if not t.capture_recipe else
                   "this run holds no capture (it started before recipes were captured, or was not dispatched)")
            out.append(RecipeView(target_id=t.id, status="unavailable", limitation=why, capture=None, after=None,
                                  projection_hash=None, held_during_run=None))
            continue
        out.append(RecipeView(target_id=t.id, status=s.status, limitation=s.limitation,
                              capture=RecipeCapture.model_validate(store.get_json(s.capture)),
                              capture_digest=s.capture, after=checks.get(t.id),
                              projection_hash=s.projection_hash, held_during_run=s.held_during_run))
    return out

