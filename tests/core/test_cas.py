"""cas: digests, canonical JSON, atomic idempotent puts, verify-on-read from shared backends."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import subprocess
import sys
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srbench.cas import ObjectStore, canonical_json, digest_bytes, digest_json, files, is_digest, localfs
from srbench.errors import DamagedObject, IntegrityError, NotFound


def test_canonical_json_is_sorted_compact_and_integral_floats_are_ints() -> None:
    assert canonical_json({"b": 1.0, "a": [2.5, "é"]}) == '{"a":[2.5,"é"],"b":1}'.encode()
    assert digest_json({"x": 1}) == digest_json({"x": 1.0})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    with pytest.raises(TypeError):
        canonical_json({1: "non-string key"})


def test_canonical_json_bytes_are_json_dumps_of_the_normalised_value() -> None:
    """Issue 31 (item 5): the encoder made once writes exactly what json.dumps with the canonical options
    writes (the bytes every stored object is addressed by)."""
    value = {"z": [1.0, 2.5, -0.0, 1e300, 1.5e-7, 2**60, True, None, {}], "é": "ü😀\n\"\\\u0001", "a": {"b": {"c": []}}}
    expected = json.dumps({"z": [1, 2.5, 0, 1e300, 1.5e-7, 2**60, True, None, {}], "é": "ü😀\n\"\\\u0001",
                           "a": {"b": {"c": []}}}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected.encode()
    assert canonical_json("plain") == b'"plain"' and canonical_json([]) == b"[]"


_JSON_KEYS = st.text(max_size=6)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 2.0**53, 2.0**53 + 2, 1e-5, 0.02, 1e300])
_SCALARS = st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | _FLOATS | st.text()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                       | st.dictionaries(_JSON_KEYS, inner, max_size=4), max_leaves=24)


@settings(max_examples=600, deadline=None)
@given(_VALUES)
def test_canonical_json_fast_path_writes_the_json_encoders_bytes(value) -> None:
    """Issue 42 (item 2): canonical JSON is written by orjson where it writes the same bytes (floats outside
    [1e-4, 1e16) in exponent form, integers beyond 64 bits and subclasses go to the json encoder): every value
    gives exactly the bytes json.dumps with the canonical options gives for it."""
    from srbench.cas.digest import _normalise

    expected = json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    assert canonical_json(value) == expected.encode()


def test_canonical_json_of_a_report_row_is_written_by_orjson(monkeypatch) -> None:
    """A report row (strings, small ints, floats such as 0.02, nested usage) takes the fast path."""
    from srbench.cas import digest

    monkeypatch.setattr(digest, "_ENCODE", None)
    row = {"seq": 3, "usage": {"input": 122, "output": 6}, "latency_s": 0.02, "judge_cost_usd": 0.0,
           "correct": False, "grade": None, "priced_models": ["t00"], "text": "é\n\"😀"}
    assert canonical_json(row) == (
        '{"correct":false,"grade":null,"judge_cost_usd":0,"latency_s":0.02,"priced_models":["t00"],"seq":3,'
        '"text":"é\\n\\"😀","usage":{"input":122,"output":6}}').encode()


def test_get_json_reads_what_json_loads_reads(tmp_path) -> None:
    """Issue 42 (item 2): objects are read by orjson (a report row reads four), and what orjson reads
    otherwise goes to json: an integer beyond 64 bits (orjson made it a float), a lone surrogate, NaN."""
    store = ObjectStore(str(tmp_path / "s"))
    for data in (b'{"n":123456789012345678901234567890,"m":-99999999999999999999}', b'["\\ud800"]', b"[NaN,1e400]",
                 b'{"a":[1.0,-0.0,0.1,18446744073709551615],"b":{"c":null,"d":"\\u00e9"}}'):
        got = store.get_json(store.put_bytes(data))
        assert repr(got) == repr(json.loads(data))


def test_digest_format_and_known_value() -> None:
    d = digest_bytes(b"")
    assert is_digest(d)
    # BLAKE3 of the empty input (from the BLAKE3 test vectors)
    assert d == "b3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"


def test_local_put_get_is_atomic_idempotent_and_read_only(tmp_path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    d = store.put_json({"kind": "x", "v": 1})
    assert store.put_json({"v": 1, "kind": "x"}) == d
    assert store.get_json(d) == {"kind": "x", "v": 1}
    path = store.path_of(d)
    assert oct(os.stat(path).st_mode & 0o777) == "0o444"
    assert not [p for p in os.listdir(os.path.dirname(path)) if p.startswith(".tmp-")]
    assert list(store.iter_digests()) == [d]


def test_a_local_store_reads_and_writes_without_fsspec(tmp_path) -> None:
    """Issue 42 (item 3): a local store's reads and writes go through cas/localfs.py, so a process that only
    reads and writes objects (the report-rows worker) never imports fsspec (~13 MiB with what it pulls in);
    the root is fsspec's (a relative path made absolute, ``file://`` dropped), and `fs` is still there when a
    listing asks for it."""
    code = (
        "import os, sys\n"
        "from srbench.cas import ObjectStore\n"
        "s = ObjectStore('file://' + sys.argv[1])\n"
        "d = s.put_bytes(b'one')\n"
        "many = s.put_many([b'two', b'three'])\n"
        "assert s.get_bytes(d) == b'one' and [s.get_bytes(x) for x in many] == [b'two', b'three'] and s.has(many[0])\n"
        "s.sync()\n"
        "os.chdir(sys.argv[1])\n"
        "again = ObjectStore('.', create=False)\n"
        "assert again.root == sys.argv[1] and again.local and again.get_bytes(many[1]) == b'three'\n"
        "assert 'fsspec' not in sys.modules, 'fsspec imported'\n"
        "assert sorted(again.iter_digests()) == sorted([d, *many]) and 'fsspec' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    with pytest.raises(NotFound):
        ObjectStore(str(tmp_path / "absent"), create=False)


def test_missing_object_is_not_found(tmp_path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    with pytest.raises(NotFound):
        store.get_bytes("b3:" + "0" * 64)


def test_shared_backend_verifies_reads() -> None:
    store = ObjectStore(f"memory://cas-{uuid.uuid4().hex}")
    d = store.put_bytes(b"hello")
    assert store.get_bytes(d) == b"hello"
    store.fs.pipe_file(store.path_of(d), b"tampered")
    with pytest.raises(IntegrityError):
        store.get_bytes(d)
    assert store.verify(d) is False


def _stored_then_damaged(tmp_path, data: bytes, damaged: bytes) -> tuple[ObjectStore, str]:
    """An object put whole, then its file overwritten as a crash or a disk fault could leave it."""
    store = ObjectStore(str(tmp_path / "cas"))
    d = store.put_bytes(data)
    os.chmod(store.path_of(d), 0o644)
    with open(store.path_of(d), "wb") as fh:
        fh.write(damaged)
    return store, d


def test_local_corruption_is_caught_by_verify(tmp_path) -> None:
    store, d = _stored_then_damaged(tmp_path, b"payload", b"other")
    assert store.verify(d) is False


@pytest.mark.parametrize("damaged", [
    b"",                                   # cut short: what a power loss before the barrier can leave
    b"\0" * len(b"complete payload"),      # the right size, blocks allocated, data never written
])
def test_a_damaged_object_is_rewritten_by_the_next_put(tmp_path, damaged: bytes) -> None:
    store, d = _stored_then_damaged(tmp_path, b"complete payload", damaged)
    assert store.verify(d) is False
    assert store.put_bytes(b"complete payload") == d
    assert store.get_bytes(d, verify=True) == b"complete payload"


@pytest.mark.parametrize("damaged", [b'{"status":"complated"}', b'{"status":"compl'])
def test_local_reads_are_verified(tmp_path, damaged: bytes) -> None:
    """A local store never hands back bytes that do not hash to their name (valid JSON or not)."""
    store, d = _stored_then_damaged(tmp_path, b'{"status":"completed"}', damaged)
    with pytest.raises(DamagedObject, match=f"damaged object {d}.*sr-bench store verify"):
        store.get_bytes(d)
    with pytest.raises(DamagedObject):
        store.get_json(d)
    assert store.get_bytes(d, verify=False) == damaged      # maintenance reads raw bytes on purpose


def test_a_new_object_is_named_only_once_whole_and_the_rename_path_takes_over_when_refused(tmp_path,
                                                                                         monkeypatch) -> None:
    """Issue 31 (item 5): on Linux a new object is an unnamed file linked in once written; a system that
    refuses (AT_EMPTY_PATH without the capability: ENOENT) falls back to a temporary name and a rename,
    from then on, with the same stored bytes either way."""
    store = ObjectStore(str(tmp_path / "cas"))
    d = store.put_bytes(b"linked whole")
    assert store.get_bytes(d, verify=True) == b"linked whole"
    assert oct(os.stat(store.path_of(d)).st_mode & 0o777) == "0o444"
    calls: list[bytes] = []

    def refused(fd: int, empty: bytes, dirfd: int, path: bytes, flags: int) -> int:
        calls.append(path)
        ctypes.set_errno(errno.ENOENT)
        return -1
    monkeypatch.setattr(localfs, "_LINKAT", refused)
    monkeypatch.setattr(localfs, "_TMPFILE_OFF", [])
    if not hasattr(os, "O_TMPFILE"):
        pytest.skip("no O_TMPFILE here: the rename path is the only one")
    for n in range(3):
        data = f"renamed {n}".encode()
        d = store.put_bytes(data)
        assert store.get_bytes(d, verify=True) == data
        assert oct(os.stat(store.path_of(d)).st_mode & 0o777) == "0o444"
        assert not [p for p in os.listdir(os.path.dirname(store.path_of(d))) if p.startswith(".tmp-")]
    assert len(calls) == 1 and localfs._TMPFILE_OFF == [errno.ENOENT]     # asked once, then not again


def test_an_object_gets_a_suffixed_name_that_is_its_own_file(tmp_path) -> None:
    """Issue 39: a dataset's answered path ends in .jsonl (upstream parses by suffix): a hard link to the object,
    made idempotently, remade over a stale name, invisible to the store's listing and removed with the object."""
    store = ObjectStore(str(tmp_path))
    data = b'{"id": "c1"}\n{"id": "c2"}\n'
    digest = store.put_bytes(data)
    path = files.suffixed(store, digest, ".jsonl")
    assert path == os.path.join(store.root, "files", digest[3:] + ".jsonl")
    assert os.path.samefile(path, store.path_of(digest)) and open(path, "rb").read() == data
    assert files.suffixed(store, digest, ".jsonl") == path and os.path.samefile(path, store.path_of(digest))
    assert list(store.iter_digests()) == [digest]                 # content addressing sees one object
    os.unlink(path)
    with open(path, "wb") as f:                                   # a stale name (other bytes) is replaced whole
        f.write(b"stale")
    assert os.path.samefile(files.suffixed(store, digest, ".jsonl"), store.path_of(digest))
    assert not [n for n in os.listdir(os.path.dirname(path)) if n.startswith(".tmp")]
    store.delete_many([digest])
    assert not os.path.exists(path) and not store.has(digest)


def test_a_packed_object_gets_its_suffixed_name_from_its_loose_file(tmp_path) -> None:
    store = ObjectStore(str(tmp_path))
    first, second = store.put_many([b"one\n", b"two\n"])
    path = files.suffixed(store, second, ".jsonl")
    assert open(path, "rb").read() == b"two\n" and os.path.samefile(path, store.path_of(second))
    assert store.get_bytes(first) == b"one\n"


@pytest.mark.parametrize("folder", ["packs", "objects", "names", "files"])
def test_a_file_where_a_store_folder_belongs_is_named_at_opening(tmp_path, folder) -> None:
    """A file where cas/packs belongs made every read 'internal error: NotADirectoryError' (one where objects/
    belongs 'File exists'): opening the store names it, for every folder of the layout, and changes nothing."""
    root = tmp_path / "cas"
    store = ObjectStore(str(root))
    digest = store.put_bytes(b"kept")
    where = root / folder
    if not where.is_dir():
        where.mkdir()
    os.rename(where, tmp_path / "aside")
    where.write_bytes(b"not a folder")
    with pytest.raises(IntegrityError) as err:
        ObjectStore(str(root))
    assert err.value.message == (f"{where} is not a folder: the object store is damaged; restore it from a copy of "
                                 "the store, or give another --store (nothing was changed)")
    assert where.read_bytes() == b"not a folder"
    where.unlink()
    os.rename(tmp_path / "aside", where)
    assert ObjectStore(str(root)).get_bytes(digest) == b"kept"


def test_a_store_url_that_names_a_file_is_not_a_folder(tmp_path) -> None:
    """(the caller names what it was given: SR_BENCH_OBJECTS_URL, a remote, a repair source)"""
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(NotADirectoryError):
        ObjectStore(str(tmp_path / "file"))


def test_a_missing_object_names_the_fix(tmp_path) -> None:
    """A deleted pack made report, export, show --results, compare and recover-plan say only 'object b3:… is not
    in the store': the line names the command that lists what is missing and puts it back."""
    missing = digest_bytes(b"never stored")
    with pytest.raises(NotFound) as err:
        ObjectStore(str(tmp_path / "cas")).get_bytes(missing)
    assert err.value.message == (f"object {missing} is not in the store; if a run names it, `sr-bench store verify` "
                                 "lists what is missing (with `--repair` to fetch a good copy from "
                                 "SR_BENCH_REPAIR_FROM)")
