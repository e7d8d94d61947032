"""Issue 38, items 2–4 on a finished store: every read tries every copy (a second pack naming the same digests
with wrong bytes hides nothing), a misnamed pack entry is named by `store verify` and its bytes repair the
object they are, and a FIFO or symbolic link in the store is skipped and named, never read."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from click.testing import CliRunner

from srbench.cas import ObjectStore, canonical_json, digest_bytes
from srbench.cas.packs import encode, read_index
from srbench.cli import output
from srbench.cli.main import cli

from .helpers import settled, within
from .test_store import _files, _gc


def _biggest_pack(service: Any) -> Path:
    packs = sorted((service.store_dir / "cas" / "packs").glob("*.pack"), key=lambda p: len(read_index(str(p))))
    return packs[-1]


def _verify_cli(service: Any) -> Any:
    """`sr-bench store verify` as a person on a terminal sees it (a pipe gets the JSON answer)."""
    with patch.object(output, "human", lambda: True):
        return CliRunner().invoke(cli, ["store", "verify"], env={"SR_BENCH_URL": service.url,
                                                                "SR_BENCH_TOKEN": service.token})


def test_a_second_pack_with_wrong_bytes_hides_no_good_copy(api, ran, service) -> None:
    settled(service)
    run_id = ran["run_id"]
    good = _biggest_pack(service)
    digests = [d for d, _, _ in read_index(str(good))]
    assert len(digests) >= 3
    _, data, _ = encode({d: b'{"not":"it"}' for d in digests})
    shadow = good.parent / ("0" * 64 + ".pack")
    shadow.write_bytes(data)
    os.utime(good.parent)                                   # (the service lists packs/ again on a miss)
    service.service.objects.packs.refresh(force=True)
    page = api.ok("GET", f"/runs/{run_id}/calls")
    assert not [r for r in page["calls"] if r["damaged"]], page
    for row in page["calls"]:
        assert api.get(f"/runs/{run_id}/calls/{row['cell_id']}")[0] == 200
    for d in digests:
        assert api.get(f"/objects/{d}")[0] in (200, 404)       # (404: a kind the API does not serve, never 503)
        assert service.service.objects.get_bytes(d) != b'{"not":"it"}'
        assert ObjectStore(str(service.store_dir / "cas")).verify(d)        # another process, either order
    res = api.ok("POST", "/store/verify", {})
    assert res["corrupt"] == [] and res["missing"] == [], res
    named = {(b["digest"], b["where"].split(" ")[0]) for b in res["bad_copies"]}
    assert named == {(d, f"packs/{shadow.name}") for d in digests}
    assert res["problems"] == len(digests) and res["ok"] is False
    out = _verify_cli(service)
    assert out.exit_code == 1 and f"bad copy: {digests[0]} at packs/{shadow.name} at " in out.stderr, out.output
    assert f"{len(digests)} bad copies" in out.stdout
    # gc drops the bad copies only: every object keeps its good copy, and the store verifies clean
    before = _files(service)
    dry = _gc(api, grace_s=0)
    assert dry["refused"] is None and {(b["digest"], b["action"]) for b in dry["bad_copies"]} == \
        {(d, "drop") for d in digests}
    done = _gc(api, apply=True, grace_s=0)
    assert {b["action"] for b in done["bad_copies"]} == {"dropped"} and not shadow.exists()
    assert set(digests) <= _files(service) and (before - _files(service)) <= {i["digest"] for i in done["items"]}
    assert api.ok("POST", "/store/verify", {})["ok"] is True


def test_a_misnamed_entry_is_kept_named_and_repairs_the_object_it_holds(api, ran, service) -> None:
    """Item 2: one bit of an entry's digest flipped. The real object is missing (gc deletes nothing), the
    misnamed entry is never collected nor its pack removed, verify names it and --repair uses its bytes."""
    settled(service)
    call = ran["calls"][0]["call"]
    place = service.service.objects.packs.get(call)
    assert place is not None
    pack = Path(place.pack)
    entries = read_index(str(pack))
    at = 12 + 48 * [d for d, _, _ in entries].index(call)          # its index entry: digest, offset, length
    raw = bytearray(pack.read_bytes())
    raw[at] ^= 0x01
    pack.chmod(0o644)
    pack.write_bytes(bytes(raw))
    wrong = "b3:" + bytes(raw[at:at + 32]).hex()
    before = _files(service)
    for apply in (False, True):
        res = _gc(api, apply=apply, grace_s=0)
        assert res["refused"] and call in res["refused"] and res["deleted"] == 0, res
        assert {i["digest"]: i["action"] for i in res["items"]}.get(wrong) in (None, "keep_damaged")
    assert _files(service) == before and pack.exists()
    res = api.ok("POST", "/store/verify", {})
    assert [m["digest"] for m in res["missing"]] == [call] and wrong in res["corrupt"]
    (bad,) = [b for b in res["bad_copies"] if b["digest"] == wrong]
    assert bad["problem"] == f"misnamed entry: bytes hash to {call}"
    out = _verify_cli(service)
    assert f"misnamed entry: bytes hash to {call}" in out.stderr
    fixed = api.ok("POST", "/store/verify", {"repair": True})
    assert fixed["repaired"] == [call] and fixed["missing"] == []
    assert api.ok("GET", f"/runs/{ran['run_id']}/calls/{ran['calls'][0]['cell_id']}")["record"]["status"]
    # the misnamed entry now holds a copy of an object the store has: gc may drop it, and only it
    done = _gc(api, apply=True, grace_s=0)
    assert done["refused"] is None, done
    assert [(b["digest"], b["action"]) for b in done["bad_copies"]] == [(wrong, "dropped")]
    assert api.ok("POST", "/store/verify", {})["ok"] is True


def test_a_misnamed_entry_nothing_names_is_never_collected(api, ran, service) -> None:
    """Item 2 without a reachable victim: old unreachable objects in one pack, one entry's digest damaged.
    gc is not blocked, yet the misnamed entry and the pack holding it stay."""
    settled(service)
    objects = service.service.objects
    junk = objects.put_many([b'{"kind":"junk","n":%d}' % i for i in range(3)])
    pack = Path(objects.packs.places(junk[0])[0].pack)
    raw = bytearray(pack.read_bytes())
    at = 12 + 48 * [d for d, _, _ in read_index(str(pack))].index(junk[1])
    raw[at + 5] ^= 0x10
    pack.chmod(0o644)
    pack.write_bytes(bytes(raw))
    os.utime(pack, (1, 1))
    objects.packs.forget(str(pack))
    res = _gc(api, apply=True, grace_s=0)
    assert res["refused"] is None, res
    wrong = "b3:" + bytes(raw[at:at + 32]).hex()
    assert {i["digest"]: i["action"] for i in res["items"]}[wrong] == "keep_damaged"
    assert pack.exists() and wrong in {d for d, _, _ in read_index(str(pack))}
    assert api.ok("POST", "/store/verify", {})["corrupt"] == [wrong]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_symlink_in_the_store_blocks_no_request_and_is_named(api, ran, service) -> None:
    """Item 4: a FIFO named `*.pack` blocked the pack listing, and with it the calls page."""
    settled(service)
    run_id, cell = ran["run_id"], ran["calls"][1]
    packs = service.store_dir / "cas" / "packs"
    target = _biggest_pack(service)
    os.mkfifo(packs / ("a" * 64 + ".pack"))
    os.symlink(str(target), packs / ("b" * 64 + ".pack"))
    loose = Path(service.service.objects.path_of(cell["call"]))
    loose.unlink()
    os.mkfifo(loose)
    res = within(20, lambda: api.ok("POST", "/store/verify", {}))          # lists packs/ afresh
    assert res["corrupt"] == [cell["call"]]
    assert [(b["digest"], b["problem"]) for b in res["bad_copies"]] == [(cell["call"], "not a regular file (a FIFO)")]
    assert sorted(f["problem"] for f in res["bad_files"]) == ["not a regular file (a FIFO)",
                                                              "not a regular file (a symbolic link)"]
    page = within(20, lambda: api.ok("GET", f"/runs/{run_id}/calls"))
    assert [r["cell_id"] for r in page["calls"] if r["damaged"]] == [cell["cell_id"]]
    status, body = within(20, lambda: api.get(f"/runs/{run_id}/calls/{cell['cell_id']}"))
    assert status == 503 and "not a regular file" in body["error"], body
    fresh = ObjectStore(str(service.store_dir / "cas"))                   # another process
    assert within(20, lambda: len(list(fresh.iter_digests()))) == res["objects"]
    res = within(20, lambda: _gc(api, apply=True, grace_s=0))
    assert res["refused"] and cell["call"] in res["refused"]              # the call is unreadable: nothing goes


def test_gc_removes_old_unreadable_pack_files_and_merges_small_packs(api, ran, service) -> None:
    """Item 5: a pack whose index a crash lost was never removed, and a store grew one pack per group commit.
    gc --apply removes the unreadable pack files past the grace period (never a FIFO, never a young one, never
    while the mark is blocked) and merges the small packs; the store still verifies and serves its report."""
    settled(service)
    objects = service.service.objects
    for i in range(6):                  # more group commits' worth of packs, kept (a name reaches each group)
        blobs = [b'{"kind":"junk","g":%d,"n":%d}' % (i, n) for n in range(2)]
        top = canonical_json({"kind": "junk", "names": [digest_bytes(b) for b in blobs]})
        objects.put_many([*blobs, top])
        objects.claim_name(f"junk/g{i}", digest_bytes(top))
    packs = service.store_dir / "cas" / "packs"
    for pack in packs.glob("*.pack"):                         # past the grace period: a young pack waits
        os.utime(pack, (time.time() - 7200, time.time() - 7200))
    lost, young = packs / ("c" * 64 + ".pack"), packs / ("d" * 64 + ".pack")
    lost.write_bytes(b"SRBPACK1\x00\x00\x00\x09 cut short by a crash")
    young.write_bytes(b"garbage")
    os.utime(lost, (1, 1))
    os.mkfifo(packs / ("e" * 64 + ".pack"))          # (never opened, never removed)
    before = len(list(packs.glob("*.pack")))
    dry = _gc(api, grace_s=3600)
    upkeep = dry["packs"]
    assert {f["where"]: f["action"] for f in upkeep["unreadable"]} == {f"packs/{lost.name}": "remove",
                                                                      f"packs/{young.name}": "keep_young"}
    assert upkeep["merged"] >= 7 and upkeep["packs_after"] == 1 and lost.exists()
    assert len(list(packs.glob("*.pack"))) == before
    with patch.object(output, "human", lambda: True):
        out = CliRunner().invoke(cli, ["store", "gc", "--apply"], env={"SR_BENCH_URL": service.url,
                                                                      "SR_BENCH_TOKEN": service.token})
    assert out.exit_code == 0 and re.search(r"; packs \d+ → 1 \(merged\), 1 unreadable pack file\(s\) removed$",
                                            out.stdout.strip()), out.output
    res = api.ok("POST", "/store/gc", {})
    assert res["packs"]["packs"] == 1 and not lost.exists() and young.exists()
    assert (packs / ("e" * 64 + ".pack")).is_fifo()
    verified = api.ok("POST", "/store/verify", {})
    assert verified["corrupt"] == [] and verified["missing"] == [] and verified["bad_copies"] == []
    assert sorted(f["where"] for f in verified["bad_files"]) == [f"packs/{young.name}", f"packs/{'e' * 64}.pack"]
    assert api.ok("GET", f"/runs/{ran['run_id']}/report")["report_digest"] == ran["report"]["report_digest"]
    fresh = ObjectStore(str(service.store_dir / "cas"))
    assert all(fresh.verify(c["call"]) for c in ran["calls"])
