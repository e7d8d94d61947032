"""Issue 11 (item 3): multi-call (conversation) cells get their report rows as they finish, and the
end-of-run report built from them is the same object as a cold rebuild (tests/service/test_incremental_report.py)."""

from __future__ import annotations

from service.helpers import freeze, manifest
from service.test_incremental_report import MemoHits, assert_same, cold_rebuild, memo_count, settled

from .conftest import pin_simulator, toy_targets


def test_conversation_rows_as_cells_finish(api, service, toy_dataset, agent_sim, monkeypatch) -> None:
    ds = toy_dataset()
    api.ok("POST", "/targets", {"targets": toy_targets(agent_sim.v1_url)})
    pin_simulator(service.store_dir)
    hits = MemoHits(monkeypatch)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "agent"}]))})["id"]
    run = api.wait(run_id)
    assert run["status"] == "completed", run
    settled(service)
    assert hits.hits == run["progress"]["total"] == 2 and memo_count(service, run_id, gone=True) == 0
    first, cold = cold_rebuild(api, service, run_id)
    assert first["cache_hit"] is True
    t = first["summary"]["targets"][0]
    assert t["request_count"] == 2 and t.get("tokens_by_role"), t
    assert_same(service, first, cold)
