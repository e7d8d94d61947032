"""Paged reads (issue 11, item 1): keyset cursors over results, calls, events and the runs list; the
journal's maintained counters agree with a recount; the report head answers an unchanged report and
is replaced when anything it depends on changes; results are pages of rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from srbench.cas import ObjectStore
from srbench.service.journal import evidence as jev
from srbench.service.journal.schema import CALL_BLOCK
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


def _cell_rows(n: int) -> list[tuple[str, int, str, str | None, str | None]]:
    """`n` cells (cell id, seq, state, judge request, error class): pending, judged, in flight to the judge,
    ambiguous (some ambiguous at the judge) and completed ones, mixed."""
    rows = []
    for seq in range(n):
        state = ("pending" if seq % 7 == 3 else "judge_dispatching" if seq % 11 == 5 else
                 "ambiguous" if seq % 13 == 6 else "completed")
        judged = state == "judge_dispatching" or seq % 3 == 0 and state != "pending"
        error_class = "ambiguous_judge_dispatch" if state == "ambiguous" and seq % 2 else None
        rows.append((f"c{seq}", seq, state, "b3:j" if judged and state == "completed" else None, error_class))
    return rows


def _insert_cells(j: Journal, run: str, rows: list[tuple[str, int, str, str | None, str | None]]) -> None:
    """The cells inserted pending, then moved to their states (the triggers see inserts and updates)."""
    def insert(c: sqlite3.Connection) -> None:
        c.executemany("INSERT INTO cells(run_id, cell_id, seq, case_id, target_id, state, updated_at) "
                      "VALUES(?, ?, ?, 'k', 't', 'pending', 0)", [(run, cid, seq) for cid, seq, *_ in rows])
        c.executemany("UPDATE cells SET state=?, judge_request=?, error_class=? WHERE run_id=? AND cell_id=?",
                      [(state, judge, error_class, run, cid) for cid, _, state, judge, error_class in rows])
    j.submit_sync(insert)


def test_a_calls_offset_is_found_by_one_query_as_the_listing_has_it(tmp_path: Path) -> None:
    """Issue 42, item 5: `call_row_at` (one indexed query over the maintained block counts) names the row the calls
    page lists at every offset — sent cells in sequence order, a judged cell's judge row right after its subject
    row, pending cells left out — against that listing made in Python, over several blocks, after inserts,
    updates and deletes; the block counts agree with a recount."""
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        rows = _cell_rows(1400)
        for run in ("other", "r"):
            _insert_cells(j, run, rows)
        gone = {"c600", "c601", "c1030"}
        j.submit_sync(lambda c: c.executemany("DELETE FROM cells WHERE run_id='r' AND cell_id=?", [(g,) for g in gone]))
        listing = []
        for cid, seq, state, judge, error_class in rows:
            if state == "pending" or cid in gone:
                continue
            listing.append((seq, 0))
            if judge or state == "judge_dispatching" or error_class == "ambiguous_judge_dispatch":
                listing.append((seq, 1))
        assert len(listing) > 1400
        assert [jev.call_row_at(j, "r", k) for k in range(len(listing) + 3)] == listing + [None] * 3
        counted: dict[int, int] = {}
        for seq, _ in listing:
            counted[seq // CALL_BLOCK] = counted.get(seq // CALL_BLOCK, 0) + 1
        assert dict(j.query("SELECT block, n FROM call_blocks WHERE run_id='r' AND n > 0")) == counted
    finally:
        j.close()


def test_a_calls_offset_reads_one_state_while_a_judge_call_starts(tmp_path: Path) -> None:
    """`call_row_at` reads the judge counter, then the rows: a run's first judge call starting between the two
    reads (the writer commits meanwhile) made the one-arm query count rows by blocks that already held the judge
    row — a wrong row at that offset. Both reads are one snapshot: the answer is the listing before the change."""
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        _insert_cells(j, "r", [(f"c{seq}", seq, "completed", None, None) for seq in range(CALL_BLOCK + 6)])
        real_one = Journal.one
        calls = 0

        def one_then_a_judge_call(self: Journal, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Row | None:
            nonlocal calls
            row = real_one(self, sql, args)
            calls += 1
            if calls == 1:                      # between the counter and the rows: cell 1 goes to its judge
                self.submit_sync(lambda c: c.execute("UPDATE cells SET judge_request='b3:j' WHERE seq=1"))
            return row
        Journal.one = one_then_a_judge_call     # type: ignore[method-assign]
        try:
            at = jev.call_row_at(j, "r", CALL_BLOCK)     # the first row of the second block
        finally:
            Journal.one = real_one              # type: ignore[method-assign]
        assert at == (CALL_BLOCK, 0)            # as the state before the judge call lists it (not None, nor another)
        assert jev.call_row_at(j, "r", CALL_BLOCK) == (CALL_BLOCK - 1, 0)    # after it, one row later
    finally:
        j.close()


def test_a_calls_offset_steps_over_no_row_before_it(tmp_path: Path) -> None:
    """Issue 42, item 5: finding the calls page's row at an offset costs the same at the run's end as at its start
    — SQLite's own count of the instructions it executes (a progress handler called at each) stays far below
    the rows before a deep offset, where an OFFSET over the run's index (or a walk over its cells in Python)
    steps over every one of them."""
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        rows = _cell_rows(20_000)
        _insert_cells(j, "r", rows)
        total = j.one("SELECT SUM(n) FROM call_blocks WHERE run_id='r'")[0]
        assert total > 20_000
        steps = [0]

        def step() -> int:
            steps[0] += 1
            return 0

        def cost(offset: int) -> int:
            steps[0] = 0
            j.reader().set_progress_handler(step, 1)
            try:
                assert jev.call_row_at(j, "r", offset) is not None
            finally:
                j.reader().set_progress_handler(None, 1)
            return steps[0]

        first, deep = cost(0), cost(total - 1)
        assert deep < total / 4, (first, deep, total)
    finally:
        j.close()


def test_every_page_reads_the_journal_by_index_searches_only(api, sim, prepare, service, monkeypatch) -> None:
    """Issue 42, item 5: behind the runs list, results, calls (by offset at the first, middle and last row, and by
    cursor) and events pages, every journal query is planned as an index search or an index read stopped by its
    LIMIT (EXPLAIN QUERY PLAN: no SCAN of a table), and a page fetches no more of the run's cells than twice the rows it shows (with the one that says another
    page follows) — no walk over them, in SQL or in Python, to find where a page starts."""
    ds = prepare("mmlu-pro")
    rids = [_run(api, sim, ds, name=f"p{i}") for i in range(2)]
    rid = rids[-1]
    pages = ["/runs?limit=1", f"/runs?limit=1&after={api.ok('GET', '/runs?limit=1')['next_cursor']}",
             f"/runs/{rid}/calls?after=40&limit=2", f"/runs/{rid}/events?after=1&limit=2",
             *(f"/runs/{rid}/{kind}?offset={k}&limit=2" for kind in ("calls", "results") for k in (0, 13, 26))]
    for path in pages:                  # a first read may build what pages read later (a report head)
        api.ok("GET", path)
    seen: list[tuple[str, tuple[object, ...], int]] = []
    query, one = Journal.query, Journal.one

    def recorded_query(self: Journal, sql: str, args: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        rows = query(self, sql, args)
        seen.append((sql, args, len(rows)))
        return rows

    def recorded_one(self: Journal, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Row | None:
        row = one(self, sql, args)
        seen.append((sql, args, int(row is not None)))
        return row

    monkeypatch.setattr(Journal, "query", recorded_query)
    monkeypatch.setattr(Journal, "one", recorded_one)
    journal = service.service.journal
    for path in pages:
        seen.clear()
        api.ok("GET", path)
        assert seen, path
        cells = sum(n for sql, _, n in seen if " FROM cells " in sql)
        assert cells <= 2 * (2 + 1), (path, [(sql[:90], n) for sql, _, n in seen])    # twice a page and the next row
        for sql, args, _ in seen:
            plan = [r[3] for r in query(journal, "EXPLAIN QUERY PLAN " + sql, args)]
            assert not [step for step in plan if _walks(step, sql)], (path, sql, plan)


def _walks(step: str, sql: str) -> bool:
    """A plan step that reads a table whole: a scan of its rows, or a scan of an index that no LIMIT stops (a
    first page read in an index's order, ``ORDER BY … LIMIT ?``, is O(page)); a SEARCH reads the rows its key
    range holds (a sort after it sorts those), a SCAN of a subquery or a CTE the rows it made."""
    if not step.startswith("SCAN ") or step.startswith(("SCAN (", "SCAN at", "SCAN CONSTANT")):
        return False
    return "INDEX" not in step or "LIMIT" not in sql
