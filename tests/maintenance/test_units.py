"""`verify` and `gc` called directly on a journal and a non-local (``memory://``) object store: nested
references, blobs that name nothing, times from a backend that reports datetimes, and the refusals."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from srbench.cas import ObjectStore, canonical_json
from srbench.errors import Conflict, InvalidInput
from srbench.service.journal.writer import Journal
from srbench.service.store import gc as upkeep
from srbench.service.store import maintenance, references


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(str(tmp_path / "journal.sqlite3"))
    yield j
    j.close()


@pytest.fixture
def objects() -> ObjectStore:
    return ObjectStore(f"memory://maintenance-{uuid.uuid4().hex}")


def test_references_are_string_values_of_json_objects_only() -> None:
    a, b = "b3:" + "a" * 64, "b3:" + "b" * 64
    doc = canonical_json({"kind": "results", "rows": [{"call": a, "note": "b3:short"}], a: "key", "x": {"y": b}})
    assert sorted(references.references_in(doc)) == [(a, "rows[0].call"), (b, "x.y")]
    jsonl = canonical_json({"ref": a}) + b"\n" + canonical_json({"ref": b}) + b"\n"
    assert references.references_in(jsonl) == []                    # a dataset (JSON Lines) is a blob
    assert references.references_in(b"data: {\"ref\": \"" + a.encode() + b"\"}\n\n") == []   # SSE
    assert references.references_in(canonical_json([a])) == []      # only objects name things
    # a recipe capture's projection_hash digests its own inline config, never a stored object: every
    # store with a captured recipe (the demo's) failed `store verify` with "1 missing"
    capture = canonical_json({"kind": "recipe_capture", "projection_hash": a, "recipes": {"mom": {"projection_hash": b}}})
    assert references.references_in(capture) == []


def test_verify_and_gc_follow_nested_references_on_a_memory_store(objects: ObjectStore, journal: Journal) -> None:
    leaf = objects.put_bytes(b"a blob the middle object names")
    middle = objects.put_json({"kind": "call", "schema": 1, "sse": leaf})
    top = objects.put_json({"kind": "report", "schema": 1, "results": middle})
    garbage = objects.put_json({"kind": "junk", "schema": 1, "names": leaf})
    journal.set_ref_sync("test", "top", {"object": top})

    res = maintenance.verify(objects, journal)
    assert res.ok and res.objects == 4 and res.reachable == 3, res

    dry = upkeep.gc(objects, journal, grace_s=0)
    assert dry.dry_run and [i.digest for i in dry.items] == [garbage]
    kept = upkeep.gc(objects, journal, dry_run=False)           # memory:// reports datetimes: age 0 s
    assert kept.young == 1 and kept.deleted == 0 and objects.has(garbage)
    done = upkeep.gc(objects, journal, dry_run=False, grace_s=0)
    assert done.deleted == 1 and not objects.has(garbage)
    assert [(i.digest, i.action) for i in done.items] == [(garbage, "deleted")]
    assert all(objects.has(d) for d in (top, middle, leaf))

    objects.delete(leaf)
    res = maintenance.verify(objects, journal)
    assert [m.model_dump() for m in res.missing] == [{"digest": leaf, "referenced_from": [f"{middle} sse"],
                                                      "references": 1}]


def test_mtime_reads_what_backends_report() -> None:
    t = time.time()
    assert upkeep._mtime({"mtime": t}) == t
    assert upkeep._mtime({"created": dt.datetime.fromtimestamp(t, tz=dt.UTC)}) == pytest.approx(t)
    assert upkeep._mtime({"LastModified": "2024-01-02T03:04:05Z"}) == dt.datetime(
        2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC).timestamp()
    assert upkeep._mtime({"size": 3}) is None                   # unknown age: never collected


def test_gc_refuses_during_active_runs_another_gc_and_bad_grace(objects: ObjectStore, journal: Journal) -> None:
    with pytest.raises(InvalidInput):
        upkeep.gc(objects, journal, grace_s=-1)
    lock = upkeep._store_lock(objects)
    with lock, pytest.raises(Conflict) as info:
        upkeep.gc(objects, journal)
    assert info.value.code == "gc_running"
    now = time.time()
    journal.submit_sync(lambda c: c.execute(
        "INSERT INTO runs(id,name,mode,plan,plan_sha256,status,total,targets,created_at,updated_at) "
        "VALUES('run-1','n','live','b3:x','s','running',0,'[]',?,?)", (now, now)))
    assert upkeep.active_runs(journal) == ["run-1"]
    with pytest.raises(Conflict) as info:
        upkeep.gc(objects, journal, dry_run=False, grace_s=0)
    assert info.value.code == "runs_active" and "run-1" in info.value.message


def test_a_sandbox_receipts_harness_digest_is_not_a_reference(objects: ObjectStore, journal: Journal) -> None:
    """A code grade's receipt names the grading harness by the digest of its sources, which ship with sr-bench and
    are never stored: verify must not call a fresh store that graded code "missing" an object, nor push copy it."""
    from srbench.sandbox.base import harness_digest

    harness = harness_digest()
    assert not objects.has(harness)
    grade = objects.put_json({"kind": "grade", "schema": 1, "sandbox": {"harness_digest": harness}})
    report = objects.put_json({"kind": "report", "schema": 1, "grade": grade,
                               "provenance": {"sandbox_receipts": [{"harness_digest": harness}]}})
    journal.set_ref_sync("test", "report", {"object": report})
    res = maintenance.verify(objects, journal)
    assert res.ok and res.missing == [] and res.reachable == 2, res
    assert [d for d, _ in references.digests_in({"sandbox": {"harness_digest": harness}})] == []
