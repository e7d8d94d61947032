"""journal: group commit from many threads, one writer, errors isolated per write."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from srbench.rules import CacheEntry
from srbench.service.journal.writer import Journal, JournalActionCache


def test_group_commit_and_isolated_failures(tmp_path) -> None:
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        def insert(i: int) -> None:
            j.submit_sync(lambda c: c.execute("INSERT INTO refs VALUES('k', ?, '1', 0)", (str(i),)))
        threads = [threading.Thread(target=insert, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(j.list_refs("k")) == 50
        assert j.commits <= 50
        with pytest.raises(sqlite3.IntegrityError):
            j.submit_sync(lambda c: c.execute("INSERT INTO refs VALUES('k', '1', '1', 0)"))  # duplicate key
        j.set_ref_sync("k", "x", {"a": 1})
        assert j.get_ref("k", "x") == {"a": 1}
    finally:
        j.close()


def test_action_cache_persists_across_reopen(tmp_path) -> None:
    path = str(tmp_path / "j.sqlite3")
    j = Journal(path)
    JournalActionCache(j).record("r", "s", CacheEntry("k1", "b3:" + "1" * 64, {"a": "x"}, {}, "1"))
    j.close()
    j2 = Journal(path)
    try:
        cache = JournalActionCache(j2)
        assert cache.lookup("k1") == "b3:" + "1" * 64
        last = cache.last("r", "s")
        assert last is not None and last.inputs == {"a": "x"}
    finally:
        j2.close()


def test_a_runs_pending_cells_take_under_200_bytes_each(tmp_path) -> None:
    """Issue 42 (item 3): a run holds its pending cells while it dispatches (100k at once): each is a slotted
    `Cell` whose case and target ids are the strings its case's and target's other cells hold (~330 bytes a
    cell before: a dict per cell and a new string per id read), read as the query streams them (the whole
    result was fetched first: a peak of ~3x what is kept)."""
    import tracemalloc

    from srbench.service.journal.runs import pending_cells
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        j.submit_sync(lambda c: c.executemany(
            "INSERT INTO cells(run_id, cell_id, seq, case_id, target_id, state, updated_at) VALUES(?,?,?,?,?,?,0)",
            [("r", f"{i:024x}", 1000 + i, f"mmlu-pro/{i % 500}", f"target-{i % 20:02d}", "pending")
             for i in range(20_000)]))
        tracemalloc.start()
        try:
            cells = pending_cells(j, "r")
            held, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        j.close()
    assert len(cells) == 20_000 and cells[7].case_id == "mmlu-pro/7" and cells[7].seq == 1007
    assert held / len(cells) < 200, f"{held / len(cells):.0f} bytes a cell"
    assert peak < 1.3 * held, f"read at a peak of {peak / held:.1f}x what is kept"      # streamed, not fetched whole


def test_a_reader_connection_keeps_a_small_page_cache(tmp_path) -> None:
    """Issue 42 (item 3): each thread's reader connection keeps 512 KiB of pages, not SQLite's 2 MiB (the service
    has one a thread: ~10 MiB held at a 10k-cell run's report); the writer's is SQLite's own."""
    journal = Journal(str(tmp_path / "journal.sqlite3"))
    try:
        assert journal.reader().execute("PRAGMA cache_size").fetchone()[0] == -512
    finally:
        journal.close()
