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
