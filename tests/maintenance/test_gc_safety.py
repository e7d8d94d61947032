"""Issue 38: `store gc` never deletes what a damaged object hides. A finished store is damaged as the issue's
attack round did (a call record's JSON broken, a pack cut short, a journal cell damaged); gc's mark meets a
reference it cannot follow, and gc — dry run or `--apply` — deletes nothing and says so in one line naming the
digests and the fix; once `store verify --repair` puts a good copy back, gc runs again and keeps what the
undamaged store reaches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from unittest.mock import patch

from click.testing import CliRunner

from srbench.cli import output
from srbench.cli.main import cli

from .helpers import settled
from .test_store import _files, _gc


def _cli(service: Any, *args: str, terminal: bool = True) -> Any:
    """`sr-bench store ARGS` as a person on a terminal sees it (a pipe gets the JSON answer: issue 40)."""
    with patch.object(output, "human", lambda: terminal):
        return CliRunner().invoke(cli, ["store", *args], env={"SR_BENCH_URL": service.url,
                                                              "SR_BENCH_TOKEN": service.token})


def _assert_refused(api: Any, service: Any, named: set[str]) -> dict[str, Any]:
    """A dry run and an apply both refuse, name `named` (digests or journal cells) and delete nothing."""
    before = _files(service)
    dry = _gc(api, grace_s=0)
    assert dry["refused"] and "deleted nothing" in dry["refused"], dry
    assert named <= {u["digest"] or u["where"] for u in dry["unreadable"]}, dry["unreadable"]
    assert all(i["action"] in ("blocked", "keep_young") for i in dry["items"]), dry["items"]
    res = _gc(api, apply=True, grace_s=0)
    assert res["deleted"] == 0 and res["refused"] == dry["refused"], res
    assert _files(service) == before
    out = _cli(service, "gc", "--apply", "--grace-s", "0")
    assert out.exit_code == 1 and out.stdout.count("\n") == 1, out.output
    line = out.stdout
    assert line.startswith("store gc: ") and "deleted nothing" in line and "sr-bench store verify --repair" in line
    assert all(n in line for n in list(named)[:5]), line
    piped = _cli(service, "gc", "--apply", "--grace-s", "0", terminal=False)
    assert piped.exit_code == 1 and json.loads(piped.stdout)["refused"] == dry["refused"]
    assert _files(service) == before
    return res


def test_a_damaged_call_record_blocks_gc_and_its_transcript_survives(api, ran, service, tmp_path, monkeypatch) -> None:
    settled(service)
    objects = service.service.objects
    backup = tmp_path / "backup"
    shutil.copytree(service.store_dir / "cas", backup)
    call = ran["calls"][1]["call"]
    sse = objects.get_json(call)["sse"]
    assert sse not in {i["digest"] for i in _gc(api, grace_s=0)["items"]}     # reachable through the call only
    path = Path(objects.path_of(call))          # unpacked: the call's siblings are loose now, as after gc thinned
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-7])    # its JSON broken
    res = _assert_refused(api, service, {call})
    assert [(u["digest"], u["where"].split(" ")[0]) for u in res["unreadable"]] == [(call, "cells.call")] \
        or call in {u["digest"] for u in res["unreadable"]}
    assert objects.has(sse) and objects.verify(sse)
    # the fix the line names: a good copy back, then gc again keeps the transcript
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", str(backup))
    assert api.ok("POST", "/store/verify", {"repair": True})["repaired"] == [call]
    done = _gc(api, apply=True, grace_s=0)
    assert done["refused"] is None and done["deleted"] >= 1
    assert objects.verify(sse) and objects.verify(call)
    assert api.ok("POST", "/store/verify", {})["ok"] is True


def test_a_pack_cut_short_blocks_gc(api, ran, service) -> None:
    settled(service)
    objects = service.service.objects
    call = ran["calls"][0]["call"]
    place = objects.packs.get(call)
    assert place is not None
    pack = Path(place.pack)
    pack.chmod(0o644)
    pack.write_bytes(pack.read_bytes()[: place.offset + 1])      # the call record and what follows it: gone
    _assert_refused(api, service, {call})


def test_a_damaged_journal_reference_blocks_gc(api, ran, service) -> None:
    settled(service)
    run_id, cell = ran["run_id"], ran["calls"][2]
    journal = service.service.journal
    # a byte of a call digest changed to a non-hex byte: no longer a digest
    journal.submit_sync(lambda c: c.execute("UPDATE cells SET request = substr(request, 1, 66) || 'g' "
                                            "WHERE run_id = ? AND cell_id = ?", (run_id, cell["cell_id"])))
    _assert_refused(api, service, {f"cells.request {run_id}/{cell['cell_id']}"})


def test_a_journal_reference_to_an_absent_object_or_a_cut_document_blocks_gc(api, ran, service) -> None:
    settled(service)
    run_id, cell = ran["run_id"], ran["calls"][3]
    journal = service.service.journal
    absent = "b3:" + "0" * 64
    journal.submit_sync(lambda c: c.execute("UPDATE cells SET call = ? WHERE run_id = ? AND cell_id = ?",
                                            (absent, run_id, cell["cell_id"])))
    journal.submit_sync(lambda c: c.execute("UPDATE refs SET value = substr(value, 1, length(value) - 3) "
                                            "WHERE kind = 'dataset'"))
    res = _assert_refused(api, service, {absent})
    assert any(u["digest"] is None and u["where"].startswith("refs.value dataset/") for u in res["unreadable"]), res


def test_a_damaged_index_offset_blocks_gc(api, ran, service) -> None:
    """A pack's index entry for a call record points at another object's bytes: the call has no copy that
    verifies (a fresh listing reads the damaged index), so what it names is unknown and gc deletes nothing."""
    import struct

    from srbench.cas.packs import read_index

    settled(service)
    call = ran["calls"][2]["call"]
    place = service.service.objects.packs.get(call)
    assert place is not None
    pack = Path(place.pack)
    entries = read_index(str(pack))
    i = [d for d, _, _ in entries].index(call)
    other = entries[(i + 1) % len(entries)]
    raw = bytearray(pack.read_bytes())
    struct.pack_into(">Q", raw, 12 + 48 * i + 32, other[1])          # its offset: the next entry's
    pack.chmod(0o644)
    pack.write_bytes(bytes(raw))
    _assert_refused(api, service, {call})
