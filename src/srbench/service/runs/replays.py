"""Create replay runs (IT-4): a completed run in mode `replay` built from saved answers, 0 requests."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

from srbench.schemas.event_data import Created, ReplayOf, RunEnded
from srbench.schemas.plan import Plan
from srbench.service.api.actors import record_owner
from srbench.service.journal import runs as jruns
from srbench.service.journal.cell_rows import CellRow, run_cells
from srbench.service.journal.writer import add_event
from srbench.service.runs.manager import RunManager, cell_id
from srbench.service.runs.state import RunState
from srbench.stages.derived import replay as rp
from srbench.stages.plan.freeze import plan_sha256


def _cells(manager: RunManager, run_id: str) -> list[CellRow]:
    return run_cells(manager.journal, run_id, ordered=True)


def create_replay(manager: RunManager, baseline_id: str, preview_id: str, owner: str = "local"
                  ) -> tuple[RunState, bool]:
    """Returns (run, created). The same (baseline, preview) pair always binds the same replay run (per
    owner: `owner` owns the replay it creates)."""
    key = f"replay:{baseline_id}:{preview_id}" if owner == "local" else f"replay:{owner}\x1f{baseline_id}:{preview_id}"
    existing = jruns.idem_binding(manager.journal, key)
    if existing is not None:
        return manager.get(existing.run_id), False
    store = manager.store
    baseline, preview = manager.get(baseline_id), manager.get(preview_id)
    bplan, pplan = store.get_json(baseline.plan), store.get_json(preview.plan)
    rp.check_runs(baseline, Plan.model_validate(bplan), preview, Plan.model_validate(pplan))
    digest, _hit, _why = rp.build_replay(manager.engine, baseline, _cells(manager, baseline_id), preview,
                                         _cells(manager, preview_id))
    result = store.get_json(digest)
    plan = dict(pplan)
    plan.update(mode="replay", name=f"replay of {preview_id} on {baseline_id}",
                auxiliary_targets=bplan.get("auxiliary_targets", {}),
                benchmark_options=bplan.get("benchmark_options", {}),
                replay={**result["receipt"], "object": digest})
    plan["notices"] = [*pplan.get("notices", []), "replay: an offline estimate, not a measurement (IT-4)"]
    plan["plan_sha256"] = plan_sha256(plan)
    plan_digest = store.put_json(plan)
    run_id = "run-" + uuid.uuid4().hex[:20]
    now = time.time()
    rows = [(run_id, cell_id(c["case_id"], c["target_id"]), seq, c["case_id"], c["target_id"], "completed",
             c["request"], c["call"], c["judge_call"], now) for seq, c in enumerate(result["cells"])]
    target_ids = [pt["target"]["id"] for pt in plan["targets"]]

    def w(c: sqlite3.Connection) -> str:
        bound = jruns.bound_run(c, key)
        if bound is not None:
            return bound.run_id
        jruns.insert_run(c, jruns.RunRow(
            id=run_id, name=plan["name"], mode="replay", profile=plan["profile"], plan=plan_digest,
            plan_sha256=plan["plan_sha256"], status="completed", idem_key=key, parent=None, total=len(rows),
            targets=json.dumps(target_ids), created_at=now, started_at=now, finished_at=now, updated_at=now,
            error=None, cancel_requested=0, extra=json.dumps({"replay": {"baseline": baseline_id, "preview": preview_id}})))
        jruns.insert_finished_cells(c, rows)
        add_event(c, run_id, "created", Created(replay_of=ReplayOf(baseline=baseline_id, preview=preview_id),
                                                 model_requests=0))
        add_event(c, run_id, "completed", RunEnded())
        record_owner(c, run_id, owner)
        return run_id
    got = manager.journal.submit_sync(w)
    return manager.get(got), got == run_id
