"""Corrections of a finished run, each appended once to the run's history in one transaction:
usage corrections from the retained SSE (REP-2) and price corrections (reprice). Zero model calls.
"""

from __future__ import annotations

import time

from pydantic import JsonValue

from srbench.schemas.corrections import PriceCorrection
from srbench.service.journal import refs
from srbench.service.journal.cell_rows import run_cells
from srbench.service.runs.manager import RunManager
from srbench.stages.datasets.build import decode_cases
from srbench.stages.derived.reconcile import reconcile as build_correction
from srbench.stages.derived.reprice import price_correction


def reconcile(manager: RunManager, run_id: str,
              routers: dict[str, str] | None = None) -> tuple[dict[str, JsonValue], bool, str, bool]:
    """REP-2: build the usage correction and append it once. Returns (the correction's stored JSON with its
    digest, for the wire's receipt fields; hit, why, appended).
    `routers` ({MoM target id: router kind}) re-attributes those targets' calls from their stored headers."""
    run = manager.get(run_id)
    plan = manager.plans.get(run.plan)
    cases = {c.id: c.benchmark for c in decode_cases(manager.store.get_bytes(plan.dataset.object))}
    cells = run_cells(manager.journal, run_id)
    prices = refs.history(manager.journal, "price-correction", run_id)
    digest, hit, why = build_correction(manager.engine, run, cells, cases, prices[-1].digest if prices else None,
                                        routers)
    body = manager.store.get_json(digest)
    entry = refs.HistoryEntry.model_validate({"digest": digest, "at": time.time(), "verified_count": body["verified_count"],
             "changed_count": body["changed_count"], "unverifiable_count": body["unverifiable_count"],
             "old_known_cost_usd": body["old_known_cost_usd"], "new_known_cost_usd": body["new_known_cost_usd"]})
    appended = append_once(manager, "correction", run_id, entry, anywhere=True)
    return body | {"digest": digest}, hit, why, appended

def append_once(manager: RunManager, kind: refs.CorrectionKind, run_id: str, entry: refs.HistoryEntry, *,
                anywhere: bool) -> bool:
    """Append `entry` to the ref's history in one transaction unless its digest is already there
    (`anywhere`) or is the latest (otherwise). Returns whether it was appended."""
    return bool(manager.journal.submit_sync(lambda c: refs.append_once(c, kind, run_id, entry, anywhere=anywhere)))

def reprice(manager: RunManager, run_id: str, prices: object,
            reason: str | None) -> tuple[PriceCorrection, str, bool]:
    """Append a price correction once per distinct content. Returns (correction, its digest, appended)."""
    run = manager.get(run_id)
    correction = price_correction(run, manager.plans.get(run.plan), prices, reason)
    digest = manager.store.put_json(correction.model_dump(mode="json", by_alias=True))
    appended = append_once(manager, "price-correction", run_id, refs.HistoryEntry(digest=digest, at=time.time()),
                                 anywhere=False)
    return correction, digest, appended
