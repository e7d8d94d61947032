"""Create replay runs (IT-4): a completed run in mode `replay` built from saved answers, 0 requests."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from typing import Any

from srbench.service.api.actors import record_owner
from srbench.service.journal.writer import add_event
from srbench.service.runs.manager import RunManager, cell_id
from srbench.stages.derived import replay as rp
from srbench.stages.plan.freeze import plan_sha256


def _cells(manager: RunManager, run_id: str) -> list[dict[str, Any]]:
    return [dict(r) for r in manager.journal.query("SELECT * FROM cells WHERE run_id=? ORDER BY seq", (run_id,))]


def create_replay(manager: RunManager, baseline_id: str, preview_id: str, owner: str = "local"
                  ) -> tuple[dict[str, Any], bool]:
    """Returns (run, created). The same (baseline, preview) pair always binds the same replay run (per
    owner: `owner` owns the replay it creates)."""
    key = f"replay:{baseline_id}:{preview_id}" if owner == "local" else f"replay:{owner}\x1f{baseline_id}:{preview_id}"
    existing = manager.journal.one("SELECT id FROM runs WHERE idem_key=?", (key,))
    if existing is not None:
        return manager.get(existing["id"]), False
    store = manager.store
    baseline, preview = manager.get(baseline_id), manager.get(preview_id)
    bplan, pplan = store.get_json(baseline["plan"]), store.get_json(preview["plan"])
    rp.check_runs(baseline, bplan, preview, pplan)
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
        row = c.execute("SELECT id FROM runs WHERE idem_key=?", (key,)).fetchone()
        if row is not None:
            return row["id"]
        c.execute("INSERT INTO runs(id,name,mode,profile,plan,plan_sha256,status,idem_key,parent,total,targets,"
                  "created_at,started_at,finished_at,updated_at,extra) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (run_id, plan["name"], "replay", plan["profile"], plan_digest, plan["plan_sha256"], "completed",
                   key, None, len(rows), json.dumps(target_ids), now, now, now, now,
                   json.dumps({"replay": {"baseline": baseline_id, "preview": preview_id}})))
        c.executemany("INSERT INTO cells(run_id,cell_id,seq,case_id,target_id,state,request,call,judge_call,"
                      "updated_at) VALUES(?,?,?,?,?,?,?,?,?,?)", rows)
        add_event(c, run_id, "created", {"replay_of": {"baseline": baseline_id, "preview": preview_id},
                                         "model_requests": 0})
        add_event(c, run_id, "completed", {})
        record_owner(c, run_id, owner)
        return run_id
    got = manager.journal.submit_sync(w)
    return manager.get(got), got == run_id
