"""Names claimed once (create-if-absent): O_EXCL-style on a local store, If-None-Match on S3. Racing
writers all see one winner, and garbage collection keeps what a name holds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from srbench.cas import ObjectStore
from srbench.errors import InvalidInput


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return ObjectStore(str(tmp_path / "cas"))
    return ObjectStore(request.getfixturevalue("s3") + "/names-test")


def test_racing_claims_have_one_winner(store: ObjectStore) -> None:
    digests = [store.put_bytes(f"candidate {i}".encode()) for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        bound = list(pool.map(lambda d: store.claim_name("runs/run-race", d), digests))
    assert len(set(bound)) == 1 and bound[0] in digests
    assert store.read_name("runs/run-race") == bound[0]
    assert store.claim_name("runs/run-race", digests[0] if bound[0] != digests[0] else digests[1]) == bound[0]
    assert store.read_name("runs/run-nobody") is None
    assert store.list_names("runs") == ["runs/run-race"]
    assert dict(store.iter_names()) == {"runs/run-race": bound[0]}


@pytest.mark.parametrize("name", ["../escape", "runs/../../x", "/abs", "runs/", "Runs/x", "runs/a b", "x" * 300])
def test_names_are_checked(tmp_path: Path, name: str) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    with pytest.raises(InvalidInput):
        store.claim_name(name, store.put_bytes(b"x"))


def test_gc_keeps_what_a_name_holds_and_what_it_reaches(tmp_path: Path) -> None:
    from srbench.service.journal.writer import Journal
    from srbench.service.store.gc import gc

    store = ObjectStore(str(tmp_path / "cas"))
    journal = Journal(str(tmp_path / "journal.sqlite3"))
    try:
        leaf = store.put_bytes(b"leaf")
        bundle = store.put_json({"kind": "run-bundle", "objects": [leaf]})
        junk = store.put_bytes(b"junk")
        store.claim_name("runs/run-kept", bundle)
        result = gc(store, journal, dry_run=False, grace_s=0)
        assert result.deleted == 1 and not store.has(junk)
        assert store.has(bundle) and store.has(leaf)
    finally:
        journal.close()
