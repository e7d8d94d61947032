"""A full disk is a fault like any other (issue 10, item 1): dispatch stops, the cells in flight end
ambiguous and the rest stay not dispatched, the run ends `failed` naming the cause, every write route
answers a named 507 while reads keep working, and once space is back the run's end is recorded and the run
is recovered by a child run, without a restart and without sending any question twice.

Two layers make the disk full: a fault-injecting layer under the object store and the journal (every
object write fails with ENOSPC, every journal commit with SQLite's "database or disk is full"), and — as
root, where loop devices work — a real 24 MiB ext4 filesystem filled to the last blocks.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import REVISIONS, Api, freeze, manifest, single
from srbench.cas import store as store_module
from srbench.client.embedded import EmbeddedService
from srbench.service.journal.writer import Journal
from srbench.simulate.behaviour import SimModel
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

SLOW = Fault(chunk_delay_s=0.15, label="slow")          # about 0.8 s a call: several are in flight at once
LIMITS = {"concurrency": 4, "total_timeout_s": 10, "idle_timeout_s": 5, "case_timeout_s": 10,
          "max_run_seconds": 60}


class FullDisk:
    """The fault-injecting layer: while `full`, object writes raise ENOSPC and journal commits raise
    sqlite3.OperationalError('database or disk is full'), as a full ext4 and SQLite on it answer."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        self.refused = Counter[str]()
        write, commit = store_module._atomic_local_write, Journal._commit

        def full_write(path: str, data: bytes, *, durable: bool) -> None:
            if self.full:
                self.refused["object"] += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
            write(path, data, durable=durable)

        def full_commit(journal: Journal, conn: sqlite3.Connection, batch: list[Any]) -> None:
            if self.full:
                self.refused["journal"] += 1
                raise sqlite3.OperationalError("database or disk is full")
            commit(journal, conn, batch)

        monkeypatch.setattr(store_module, "_atomic_local_write", full_write)
        monkeypatch.setattr(Journal, "_commit", full_commit)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(models=[SimModel("sim-strong", skill=0.9)], fault=lambda body: SLOW) as s:
        yield s


def _journal(store: Path, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"file:{store / 'journal.sqlite3'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _wait(api: Api, run_id: str, until: Any, timeout: float = 60) -> dict[str, Any]:
    return api.wait(run_id, timeout=timeout, until=until)


def _start_and_fill(api: Api, sim: SimulatorThread, dataset: dict[str, Any], fill: Any) -> tuple[str, dict]:
    """A 14-cell run; the disk fills while at least two calls are in flight and two are done."""
    api.ok("POST", "/targets", {"targets": [single("slow", sim.v1_url, "sim-strong")]})
    m = manifest(dataset, [{"id": "slow"}])
    m["limits"] = dict(LIMITS)
    plan = freeze(api, m)
    sim.server.log.clear()
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    at_fill = _wait(api, run_id, lambda r: r["progress"]["completed"] >= 2 and r["progress"]["running"] >= 2)
    fill()
    return run_id, at_fill


def _check_stopped_run(api: Api, run_id: str, code: str = "insufficient_storage") -> dict[str, Any]:
    run = _wait(api, run_id, lambda r: r["status"] == "failed")
    assert "out of space" in run["error"] and "recover-plan" in run["error"], run["error"]
    # reads keep working while the disk is full
    for path in ("/health", "/runs", f"/runs/{run_id}", f"/runs/{run_id}/calls", f"/runs/{run_id}/events"):
        status, body = api.get(path)
        assert status == 200, (path, status, body)
    return run


def _calls_agree_with_the_run_view(api: Api, run_id: str) -> Counter[str]:
    """Issue 38, item 9: the calls page (every page) and the run view say the same of every cell — while the
    disk is full too, when the run's end waits for its retry (its cells in flight still dispatching in the
    journal, both show them ambiguous, as the end will record them)."""
    rows, after = [], 0
    while True:
        page = api.ok("GET", f"/runs/{run_id}/calls?after={after}&limit=5")
        rows += page["calls"]
        if page["next_cursor"] is None:
            break
        after = page["next_cursor"]
    progress = api.ok("GET", f"/runs/{run_id}")["progress"]
    subject = Counter(r["state"] for r in rows if r["role"] == "subject")
    shown = Counter({"running": subject.pop("dispatching", 0) + subject.pop("judge_dispatching", 0), **subject})
    counted = Counter({k: progress[k] for k in ("completed", "failed", "cancelled", "ambiguous", "running")})
    assert +shown == +counted, (shown, progress)
    assert progress["running"] > 0 or not any(r["status"] == "sent" for r in rows), rows
    active = api.ok("GET", f"/runs/{run_id}/calls?active=true")["calls"]
    assert len(active) == progress["running"], (active, progress)
    return shown


def _check_recovered(api: Api, sim: SimulatorThread, store: Path, run_id: str, dataset: dict[str, Any]) -> None:
    run = _wait(api, run_id, lambda r: r["end_recorded"] and r["status"] == "failed")
    states = Counter(r["state"] for r in _journal(store, "SELECT state FROM cells WHERE run_id=?", (run_id,)))
    assert states["dispatching"] == 0 and states["judge_dispatching"] == 0, states
    assert states["ambiguous"] >= 1 and states["pending"] >= 1 and states["completed"] >= 2, states
    assert sum(states.values()) == 14 and set(states) <= {"completed", "ambiguous", "pending"}, states
    recorded = _journal(store, "SELECT status, error FROM runs WHERE id=?", (run_id,))[0]
    assert recorded["status"] == "failed" and "out of space" in recorded["error"], dict(recorded)
    events = api.ok("GET", f"/runs/{run_id}/events")["events"]
    fault = [e for e in events if e["kind"] == "storage_fault"]
    assert len(fault) == 1 and fault[0]["data"]["code"] == "insufficient_storage", fault
    assert fault[0]["data"]["ambiguous"] == states["ambiguous"]
    assert fault[0]["data"]["not_dispatched"] == states["pending"]
    assert run["progress"]["pending"] == states["pending"]
    # the journal names only objects that exist and hash right
    check = api.ok("POST", "/store/verify", {})
    assert check["ok"] is True, check
    # recovered without a restart: the never-sent cells run in a child; the ambiguous ones are never resent
    review = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
    assert len(review["eligible"]) == states["pending"], review["excluded_counts"]
    assert review["excluded_counts"].get("ambiguous_dispatch") == states["ambiguous"], review["excluded_counts"]
    child = api.ok("POST", f"/runs/{run_id}/recover", {"plan": review, "idempotency_key": f"after-{run_id}"})
    done = _wait(api, child["id"], lambda r: r["status"] in ("completed", "failed", "cancelled", "interrupted"))
    assert done["status"] == "completed" and done["progress"]["completed"] == states["pending"], done
    sent = Counter(entry["messages_digest"] for entry in sim.log)
    assert len(sent) == 14 and set(sent.values()) == {1}, sent       # every question sent exactly once


def test_a_full_disk_stops_the_run_and_it_recovers_once_space_is_back(api, service, sim, dataset, sources,
                                                                       monkeypatch) -> None:
    disk = FullDisk(monkeypatch)
    run_id, at_fill = _start_and_fill(api, sim, dataset, lambda: setattr(disk, "full", True))
    try:
        run = _check_stopped_run(api, run_id)
        # the end cannot be written yet: shown as it will be recorded, and said so
        assert run["end_recorded"] is False, run
        assert _journal(service.store_dir, "SELECT status FROM runs WHERE id=?", (run_id,))[0]["status"] == "running"
        # every write route answers a named 507, never a bare 500
        status, body = api.post("/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "smoke", "seed": 99,
                                                      "source_path": str(sources["mmlu-pro"]),
                                                      "revision": REVISIONS["mmlu-pro"]})
        assert status == 507 and body["code"] == "insufficient_storage", (status, body)
        assert "No space left on device" in body["error"], body
        status, body = api.post("/targets", {"targets": [single("other", sim.v1_url, "sim-strong")]})
        assert status == 507 and body["code"] == "insufficient_storage", (status, body)
        assert "out of space" in body["error"] and "database or disk is full" in body["error"]
        status, body = api.post("/runs/" + run_id + "/recover-plan", {"mode": "undispatched"})
        assert status in (200, 507), (status, body)
        assert disk.refused["object"] >= 1 and disk.refused["journal"] >= 1, disk.refused
        _calls_agree_with_the_run_view(api, run_id)
    finally:
        disk.full = False                              # space is back: no restart follows
    _check_recovered(api, sim, service.store_dir, run_id, dataset)
    _calls_agree_with_the_run_view(api, run_id)


def test_the_first_recover_right_after_space_returns_works(api, service, sim, dataset, monkeypatch) -> None:
    """Issue 25, item 4: recover-plan and recover asked the moment space is back (the run's end still
    waiting for its retry, its in-flight cells still dispatching) settle that end first: the plan they
    review is the one recover finds, so the first recover succeeds (it was a 409 reviewed_plan_changed)."""
    disk = FullDisk(monkeypatch)
    run_id, _ = _start_and_fill(api, sim, dataset, lambda: setattr(disk, "full", True))
    try:
        run = _check_stopped_run(api, run_id)
        assert run["end_recorded"] is False, run
        in_flight = _journal(service.store_dir, "SELECT COUNT(*) AS n FROM cells WHERE run_id=? AND "
                             "state='dispatching'", (run_id,))[0]["n"]
        assert in_flight >= 1 and run["progress"]["running"] == 0, run["progress"]     # shown as it will be
        assert run["progress"]["ambiguous"] >= in_flight, run["progress"]
        assert _calls_agree_with_the_run_view(api, run_id)["ambiguous"] >= in_flight
    finally:
        disk.full = False                              # space is back; ask at once, without waiting
    review = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
    status, child = api.post(f"/runs/{run_id}/recover", {"plan": review, "idempotency_key": f"first-{run_id}"})
    assert status == 201, (status, child)
    assert review["excluded_counts"].get("ambiguous_dispatch", 0) >= 1, review["excluded_counts"]
    parent = api.ok("GET", f"/runs/{run_id}")
    assert parent["end_recorded"] is True and parent["progress"]["running"] == 0, parent["progress"]
    done = _wait(api, child["id"], lambda r: r["status"] in ("completed", "failed", "cancelled", "interrupted"))
    assert done["status"] == "completed" and done["progress"]["completed"] == len(review["eligible"]), done
    sent = Counter(entry["messages_digest"] for entry in sim.log)
    assert len(sent) == 14 and set(sent.values()) == {1}, sent       # every question sent exactly once


def test_a_full_disk_on_a_write_route_is_a_named_507(api, dataset, monkeypatch) -> None:
    plan = freeze(api, manifest(dataset, [single("x", "http://127.0.0.1:9/v1", "m")]))
    disk = FullDisk(monkeypatch)
    disk.full = True
    try:
        for path, body in [("/targets", {"targets": [single("x", "http://127.0.0.1:9/v1", "m")]}),
                           ("/runs", {"manifest": plan, "idempotency_key": "while-full"})]:
            status, answer = api.post(path, body)
            assert status == 507 and set(answer) == {"error", "code"}, (path, status, answer)
            assert answer["code"] == "insufficient_storage"
        assert api.ok("GET", "/runs")["runs"]                   # reads still answer
    finally:
        disk.full = False
    assert api.ok("GET", "/health")["status"] == "ready"
    created = api.ok("POST", "/runs", {"manifest": plan, "idempotency_key": "while-full"})
    assert created["created"] is True                          # nothing was half-recorded under that key


# -- a real full filesystem (root only) ------------------------------------------------------------------------
def _sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB ext4 filesystem on a loop device (no reserved blocks), unmounted afterwards."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4") or not shutil.which("mount"):
        pytest.skip("a loop-mounted filesystem needs root, mkfs.ext4 and mount")
    image, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    mnt.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(24 << 20)
    made = _sh("mkfs.ext4", "-q", "-F", "-m", "0", str(image))
    mounted = made.returncode == 0 and _sh("mount", "-o", "loop", str(image), str(mnt)).returncode == 0
    if not mounted:
        pytest.skip(f"cannot loop-mount an ext4 image here: {(made.stderr or 'mount failed').strip()[:200]}")
    try:
        yield mnt
    finally:
        for _ in range(20):
            if _sh("umount", str(mnt)).returncode == 0:
                break
            time.sleep(0.25)
        else:                   # still busy: detach it now, the kernel frees it when the last file closes
            _sh("umount", "-l", str(mnt))


def _fill_to(directory: Path, leave_bytes: int) -> Path:
    """Fill a filesystem until `leave_bytes` are free (a reserve file written first is removed last)."""
    reserve, filler = directory / "reserve", directory / "filler"
    reserve.write_bytes(b"\0" * leave_bytes)
    with open(filler, "wb") as fh:
        block = b"\xff" * (256 << 10)
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:                             # the last blocks, smaller writes
                fh.write(b"\xff" * 4096)
                fh.flush()
        except OSError:
            pass
    reserve.unlink()
    return filler


def test_a_really_full_filesystem_stops_the_run_and_it_recovers(small_fs, sources, sim, clean_env) -> None:
    store = small_fs / "store"
    with EmbeddedService(store) as svc:
        api = Api(svc.url, svc.token)
        try:
            dataset = api.ok("POST", "/datasets/prepare", {
                "benchmark": "mmlu-pro", "profile": "smoke", "source_path": str(sources["mmlu-pro"]),
                "revision": REVISIONS["mmlu-pro"]})
            holder: dict[str, Path] = {}
            run_id, _ = _start_and_fill(api, sim, dataset,
                                        lambda: holder.setdefault("filler", _fill_to(small_fs, 16 << 10)))
            _check_stopped_run(api, run_id)
            status, body = api.post("/datasets/prepare", {
                "benchmark": "mmlu-pro", "profile": "smoke", "seed": 99, "source_path": str(sources["mmlu-pro"]),
                "revision": REVISIONS["mmlu-pro"]})
            assert status in (507, 503) and body["code"] in ("insufficient_storage", "storage_unavailable"), \
                (status, body)
            holder["filler"].unlink()                    # space is back: no restart follows
            _check_recovered(api, sim, store, run_id, dataset)
        finally:
            api.close()
