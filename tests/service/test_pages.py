"""Paged reads (issue 11, item 1): keyset cursors over results, calls, events and the runs list; the
journal's maintained counters agree with a recount; the report head answers an unchanged report and
is replaced when anything it depends on changes; results are pages of rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from srbench.cas import ObjectStore
from srbench.service.journal import evidence as jev
from srbench.service.journal.writer import Journal
from srbench.stages.report.results import PAGE_ROWS, all_rows, page, write_results

from .helpers import PRICE, Api, freeze, manifest, single


def _run(api: Api, sim: Any, ds: dict[str, Any], name: str = "pages") -> str:
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong", prices={"sim-strong": PRICE}),
                                            single("weak", sim.v1_url, "sim-weak", prices={"sim-weak": PRICE})]})
    m = manifest(ds, [{"id": "strong"}, {"id": "weak"}])
    m["name"] = name
    rid = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
    assert api.wait(rid)["status"] == "completed"
    return rid


def _walk(api: Api, path: str, key: str, limit: int) -> list[dict[str, Any]]:
    out, cursor = [], None
    while True:
        q = f"?limit={limit}" + (f"&after={cursor}" if cursor is not None else "")
        body = api.ok("GET", path + q)
        out += body[key]
        cursor = body["next_cursor"]
        assert len(body[key]) <= limit
        if cursor is None:
            return out


def test_cursors_walk_every_row_once_in_order(api, sim, prepare) -> None:
    ds = prepare("mmlu-pro")
    rid = _run(api, sim, ds)
    full = api.ok("GET", f"/runs/{rid}/results?limit=100")
    assert full["total"] == 28 and full["next_cursor"] is None
    walked = _walk(api, f"/runs/{rid}/results", "results", 5)
    assert [r["seq"] for r in walked] == list(range(28))
    assert walked == full["results"]
    assert api.ok("GET", f"/runs/{rid}/results?limit=3&offset=7")["results"] == walked[7:10]
    calls = _walk(api, f"/runs/{rid}/calls", "calls", 3)
    assert [c["seq"] for c in calls] == list(range(28))
    assert api.ok("GET", f"/runs/{rid}/calls?limit=3")["total"] == 28
    for k in (0, 1, 2, 7, 13, 25, 27, 28, 40):       # an offset is a cursor (issue 42, item 5): the same rows
        assert api.ok("GET", f"/runs/{rid}/calls?limit=3&offset={k}")["calls"] == calls[k:k + 3], k
    after = api.ok("GET", f"/runs/{rid}/results?limit=4&after=10")["results"]
    assert [r["seq"] for r in after] == [10, 11, 12, 13]
    ev = api.ok("GET", f"/runs/{rid}/events")
    assert ev["total"] == len(ev["events"]) >= 2


def test_runs_list_newest_first_with_counted_progress(api, sim, prepare, service) -> None:
    ds = prepare("mmlu-pro", limit=2)
    ids = [_run(api, sim, ds, name=f"r{i}") for i in range(3)]
    assert [r.id for r in service.service.runs.list(2)] == ids[:0:-1]
    older = service.service.runs.list(2, (service.service.runs.get(ids[1]).created_at, ids[1]))
    assert [r.id for r in older] == ids[:1]
    assert all(r.progress.completed == 4 for r in service.service.runs.list())


def test_counters_match_a_recount_and_an_old_store_is_counted(api, sim, prepare, service, tmp_path) -> None:
    ds = prepare("mmlu-pro")
    rid = _run(api, sim, ds)
    db = service.service.journal.path
    conn = sqlite3.connect(db)
    recount = dict(conn.execute("SELECT state, COUNT(*) FROM cells WHERE run_id=? GROUP BY state", (rid,)).fetchall())
    kept = dict(conn.execute("SELECT state, n FROM cell_counts WHERE run_id=? AND n>0", (rid,)).fetchall())
    assert kept == recount == {"completed": 28}
    assert conn.execute("SELECT judge_calls FROM run_stats WHERE run_id=?", (rid,)).fetchone()[0] == 0
    events = conn.execute("SELECT COUNT(*) FROM events WHERE run_id=?", (rid,)).fetchone()[0]
    assert conn.execute("SELECT events FROM run_stats WHERE run_id=?", (rid,)).fetchone()[0] == events
    conn.close()
    # a journal made before the counters: drop them, reopen, and they are counted once
    copy = tmp_path / "old.sqlite"
    src = sqlite3.connect(db)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    for name in ("cells_counted_insert", "cells_counted_update", "cells_counted_delete", "events_counted",
                 "cells_judge_counted", "cells_judge_counted_insert", "cells_judge_counted_delete"):
        dst.execute(f"DROP TRIGGER {name}")
    dst.execute("DROP TABLE cell_counts")
    dst.execute("DROP TABLE run_stats")
    dst.execute("PRAGMA user_version = 0")      # and before the schema carried a version
    dst.commit()
    dst.close()
    j = Journal(str(copy))
    try:
        assert {r["state"]: r["n"] for r in j.query("SELECT state, n FROM cell_counts WHERE run_id=?", (rid,))} \
            == {"completed": 28}
        j.submit_sync(lambda c: c.execute("UPDATE cells SET state='failed' WHERE run_id=? AND seq=0", (rid,)))
        assert {r["state"]: r["n"] for r in j.query("SELECT state, n FROM cell_counts WHERE run_id=? AND n>0",
                                                    (rid,))} == {"completed": 27, "failed": 1}
        j.submit_sync(lambda c: c.execute("UPDATE cells SET judge_request=request WHERE run_id=? AND seq<3", (rid,)))
        assert j.one("SELECT judge_calls FROM run_stats WHERE run_id=?", (rid,))["judge_calls"] == 3
        j.submit_sync(lambda c: c.execute("UPDATE cells SET judge_request=NULL WHERE run_id=? AND seq=0", (rid,)))
        assert j.one("SELECT judge_calls FROM run_stats WHERE run_id=?", (rid,))["judge_calls"] == 2
    finally:
        j.close()


def test_report_head_answers_unchanged_and_follows_a_change(api, sim, prepare, service) -> None:
    ds = prepare("mmlu-pro")
    rid = _run(api, sim, ds)
    first = api.ok("GET", f"/runs/{rid}/report")
    again = api.ok("GET", f"/runs/{rid}/report")
    assert again["cache_hit"] is True and again["report_digest"] == first["report_digest"]
    # a cell changes (here by hand, as no route changes a finished run's cells): the head is stale
    service.service.journal.submit_sync(lambda c: c.execute(
        "UPDATE cells SET state='failed', error_class='x' WHERE run_id=? AND seq=0", (rid,)))
    changed = api.ok("GET", f"/runs/{rid}/report")
    assert changed["cache_hit"] is False and changed["report_digest"] != first["report_digest"]
    assert api.ok("GET", f"/runs/{rid}/results?limit=1")["results"][0]["state"] == "failed"
    # a price correction is an input too
    api.ok("POST", f"/runs/{rid}/reprice", {"prices": {"strong": {"sim-strong": PRICE | {"output": 8.0}}},
                                             "reason": "new list price"})
    assert api.ok("GET", f"/runs/{rid}/report")["report_digest"] != changed["report_digest"]


def test_results_pages_round_trip(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    rows = [{"seq": i, "v": i * i} for i in range(PAGE_ROWS * 2 + 7)]
    digest = write_results(store, iter(rows))
    assert all_rows(store, digest) == rows
    got, total = page(store, digest, after=PAGE_ROWS - 3, limit=10)
    assert total == len(rows) and [r["seq"] for r in got] == list(range(PAGE_ROWS - 2, PAGE_ROWS + 8))
    got, _ = page(store, digest, offset=PAGE_ROWS * 2 + 5, limit=10)
    assert [r["seq"] for r in got] == [PAGE_ROWS * 2 + 5, PAGE_ROWS * 2 + 6]
    assert page(store, digest, after=10**9, limit=10)[0] == []
    old = store.put_json({"kind": "results", "schema": 1, "rows": rows[:5]})   # written before pages
    assert page(store, old, after=1, limit=2)[0] == rows[2:4] and all_rows(store, old) == rows[:5]


def test_a_calls_offset_is_found_by_one_query_as_the_listing_has_it(tmp_path: Path) -> None:
    """Issue 42, item 5: `call_row_at` (one indexed query) names the row the calls page lists at every offset —
    sent cells in sequence order, a judged cell's judge row right after its subject row, pending cells left
    out — against that listing made in Python (the walk `_cursor_at` used to do)."""
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        rows = []
        for seq in range(300):
            state = ("pending" if seq % 7 == 3 else "judge_dispatching" if seq % 11 == 5 else
                     "ambiguous" if seq % 13 == 6 else "completed")
            judged = state == "judge_dispatching" or seq % 3 == 0 and state != "pending"
            error_class = "ambiguous_judge_dispatch" if state == "ambiguous" and seq % 2 else None
            rows.append((f"c{seq}", seq, state, "b3:j" if judged and state == "completed" else None, error_class))

        def insert(c: sqlite3.Connection) -> None:
            for run in ("other", "r"):
                c.executemany("INSERT INTO cells(run_id, cell_id, seq, case_id, target_id, state, judge_request, "
                              "error_class, updated_at) VALUES(?, ?, ?, 'k', 't', ?, ?, ?, 0)",
                              [(run, *r) for r in rows])
        j.submit_sync(insert)
        listing = []
        for _, seq, state, judge, error_class in rows:
            if state == "pending":
                continue
            listing.append((seq, 0))
            if judge or state == "judge_dispatching" or error_class == "ambiguous_judge_dispatch":
                listing.append((seq, 1))
        assert len(listing) > 300
        assert [jev.call_row_at(j, "r", k) for k in range(len(listing) + 3)] == listing + [None] * 3
    finally:
        j.close()
