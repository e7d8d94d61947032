"""`store verify` and `store gc` on the real service after a real (simulated) run: a healthy store is clean;
corrupt bytes and deleted referenced objects are found with their referrers; gc is a dry run by default,
deletes only unreachable objects past the grace period, is refused while a run is active, and leaves a
store that verifies clean and still rebuilds the run's report; the CLI prints one line."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from service.helpers import Api, freeze, manifest, single
from srbench.cas.packs import read_index
from srbench.cli import output
from srbench.cli.main import cli
from srbench.client.embedded import EmbeddedService
from srbench.rules import Engine
from srbench.rules.engine import MemoryActionCache
from srbench.service.runs.manager import RunManager
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

from .helpers import settled

HOUR = 3600.0


def _files(service: EmbeddedService) -> set[str]:
    """Every stored object's digest as the disk shows it: each loose file, and each entry of a pack."""
    cas = service.store_dir / "cas"
    # stored objects only: a `.tmp-*` file is a write in flight that becomes an object by rename
    found = {"b3:" + p.parent.name + p.name for p in (cas / "objects").rglob("*")
             if p.is_file() and not p.name.startswith(".tmp-")}
    for pack in (cas / "packs").glob("*.pack"):
        found |= {digest for digest, _, _ in read_index(str(pack))}
    return found


def _junk(service: EmbeddedService, label: str, age_s: float = 0.0) -> str:
    """An object nothing references, optionally aged by moving its mtime back."""
    objects = service.service.objects
    digest = objects.put_json({"kind": "junk", "schema": 1, "label": label})
    if age_s:
        t = time.time() - age_s
        os.utime(objects.path_of(digest), (t, t))
    return digest


def _verify(api: Api) -> dict[str, Any]:
    return api.ok("POST", "/store/verify", {})


def _gc(api: Api, **body: Any) -> dict[str, Any]:
    return api.ok("POST", "/store/gc", body)


def _reachable_files(api: Api, service: EmbeddedService) -> set[str]:
    """Every object gc must keep: all objects minus what a grace-0 dry run would delete."""
    doomed = {i["digest"] for i in _gc(api, grace_s=0)["items"]}
    return _files(service) - doomed


# -- verify ----------------------------------------------------------------------------------------------
def test_verify_is_clean_after_a_run_and_its_report(api, ran, service) -> None:
    res = _verify(api)
    assert res["ok"] is True and res["problems"] == 0, res
    assert res["corrupt"] == [] and res["missing"] == []
    assert res["objects"] == len(_files(service)) and res["bytes"] > 0
    # plan, dataset, results, report, and per cell: request, SSE, call record, grade
    assert 4 + 4 * 4 <= res["reachable"] <= res["objects"]
    assert res["references"] >= res["reachable"]


def test_corrupt_bytes_are_reported(api, ran, service) -> None:
    digest = ran["calls"][0]["call"]
    path = Path(service.service.objects.path_of(digest))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"status"', b'"stature"', 1))
    res = _verify(api)
    assert res["ok"] is False and res["problems"] == 1, res
    assert res["corrupt"] == [digest] and res["missing"] == []


def test_a_deleted_referenced_object_is_missing_with_its_referrers(api, ran, service) -> None:
    objects = service.service.objects
    call = ran["calls"][1]
    dataset_object = ran["dataset"]["object"]
    objects.delete(call["call"])
    objects.delete(dataset_object)
    res = _verify(api)
    assert res["ok"] is False and res["problems"] == 2 and res["corrupt"] == [], res
    missing = {m["digest"]: m for m in res["missing"]}
    assert set(missing) == {call["call"], dataset_object}
    where = missing[call["call"]]["referenced_from"]
    assert f"cells.call {ran['run_id']}/{call['cell_id']}" in where, where
    pages = objects.get_json(ran["report"]["results"])["pages"]     # results schema 2: pages of rows
    assert any(w.split(" ")[0] in pages and " rows[" in w and w.endswith("].call") for w in where), where
    where = missing[dataset_object]["referenced_from"]
    assert f"refs.value dataset/{ran['dataset']['ref']} object" in where, where      # the journal keys the ds- ref
    assert any(w.startswith(ran["plan"] + " dataset.object") for w in where), where
    assert missing[dataset_object]["references"] >= 3      # the ref, the plan, the prepare rule's manifest


# -- gc --------------------------------------------------------------------------------------------------
def test_gc_dry_run_lists_unreachable_objects_and_deletes_nothing(api, ran, service) -> None:
    old = _junk(service, "old", age_s=2 * HOUR)
    fresh = _junk(service, "fresh")
    before = _files(service)
    res = _gc(api)
    assert res["dry_run"] is True and res["grace_s"] == HOUR
    assert res["deleted"] == 0 and res["deleted_bytes"] == 0
    assert _files(service) == before
    actions = {i["digest"]: i["action"] for i in res["items"]}
    assert actions[old] == "delete" and actions[fresh] == "keep_young"
    # the cases the report rule stored for grading and the source file are garbage too (nothing names them)
    assert res["unreachable"] == len(res["items"]) >= 2 + 4
    assert res["objects"] == res["reachable"] + res["unreachable"] == len(before)
    assert res["collectable"] + res["young"] == res["unreachable"]
    assert res["unreachable_bytes"] == sum(i["bytes"] for i in res["items"])
    everything = _gc(api, grace_s=0)
    assert everything["collectable"] == everything["unreachable"] and _files(service) == before


def test_gc_apply_deletes_only_old_unreachable_objects_and_the_store_stays_whole(api, ran, service) -> None:
    old = _junk(service, "old", age_s=2 * HOUR)
    fresh = _junk(service, "fresh")
    objects = service.service.objects
    old_size = len(objects.get_bytes(old))
    keep = _reachable_files(api, service)

    res = _gc(api, apply=True)                                  # the default grace: one hour
    assert res["dry_run"] is False
    assert not objects.has(old) and objects.has(fresh)
    assert res["deleted"] == 1 and res["deleted_bytes"] == old_size
    assert {i["digest"]: i["action"] for i in res["items"]}[fresh] == "keep_young"

    res = _gc(api, apply=True, grace_s=0)
    assert res["deleted"] == res["unreachable"] >= 1 + 4 and not objects.has(fresh)
    assert _files(service) == keep                              # every reachable object is still there
    assert _gc(api, apply=True, grace_s=0)["unreachable"] == 0

    assert _verify(api)["ok"] is True
    again = api.ok("GET", f"/runs/{ran['run_id']}/report")
    assert again["report_digest"] == ran["report"]["report_digest"]
    assert api.ok("GET", f"/runs/{ran['run_id']}/results")["total"] == 4
    # and from scratch: a fresh action cache rebuilds the same report from what gc kept
    svc = service.service
    svc.journal.submit_sync(lambda c: c.execute("DELETE FROM report_heads"))   # no report head to answer from
    fresh_engine = Engine(svc.objects, MemoryActionCache())
    rebuilt, hit, _ = RunManager(svc.objects, svc.journal, fresh_engine).report_digest(ran["run_id"])
    assert hit is False and rebuilt == ran["report"]["report_digest"]


def test_gc_is_refused_while_a_run_is_active(api, prepare, service) -> None:
    ds = prepare("mmlu-pro", limit=4)
    with SimulatorThread(models=[SimModel("slow", skill=0.5, latency_s=2.0)]) as slow:
        api.ok("POST", "/targets", {"targets": [single("slow", slow.v1_url, "slow")]})
        m = manifest(ds, [{"id": "slow"}])
        m["limits"]["concurrency"] = 1
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        api.wait(run_id, until=lambda r: r["status"] == "running")
        before = _files(service)
        msg = api.error("POST", "/store/gc", {"apply": True, "grace_s": 0}, 409, "runs_active")
        assert run_id in msg, msg
        api.error("POST", "/store/gc", {}, 409, "runs_active")
        assert before <= _files(service)                        # nothing deleted (the run itself adds objects)
        assert _verify(api)["ok"] is True                       # verify is read-only and may run any time
        api.ok("POST", f"/runs/{run_id}/cancel")
        assert api.wait(run_id)["status"] == "cancelled"
    settled(service)
    assert _gc(api)["dry_run"] is True


def test_gc_apply_is_refused_when_the_objects_live_outside_the_store(tmp_path, monkeypatch) -> None:
    for name in ("SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_TOKEN_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SR_BENCH_OBJECTS_URL", f"memory://shared-{uuid.uuid4().hex}")
    with EmbeddedService(tmp_path / "store") as svc:
        api = Api(svc.url, svc.token)
        try:
            junk = _junk(svc, "shared")
            dry = _gc(api, grace_s=0)
            assert [i["digest"] for i in dry["items"]] == [junk]
            msg = api.error("POST", "/store/gc", {"apply": True, "grace_s": 0}, 409, "objects_shared")
            assert "memory://shared-" in msg, msg
            assert svc.service.objects.has(junk) and _verify(api)["ok"] is True
        finally:
            api.close()


@pytest.mark.parametrize("body", [{"apply": "yes"}, {"grace_s": -1}, {"grace_s": True}, {"grace_s": "60"},
                                  {"dry_run": False}])
def test_gc_rejects_bad_bodies(api, body) -> None:
    api.error("POST", "/store/gc", body, 400, "invalid_input")


# -- CLI -------------------------------------------------------------------------------------------------
def test_cli_prints_one_line_and_verify_exits_non_zero_on_problems(api, ran, service, monkeypatch) -> None:
    """On a terminal one line (problems on stderr); on a pipe the service's answer as JSON (issue 40)."""
    monkeypatch.setenv("SR_BENCH_URL", service.url)
    monkeypatch.setenv("SR_BENCH_TOKEN", service.token)
    runner = CliRunner()
    piped = runner.invoke(cli, ["store", "verify"])
    assert piped.exit_code == 0 and json.loads(piped.stdout)["ok"] is True, piped.stdout
    piped = runner.invoke(cli, ["store", "gc"])
    assert json.loads(piped.stdout)["dry_run"] is True, piped.stdout
    monkeypatch.setattr(output, "human", lambda: True)          # a person reads stdout (a terminal)

    def run(*args: str) -> Any:
        res = runner.invoke(cli, ["store", *args])
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
        return res

    res = run("verify")
    assert res.exit_code == 0 and res.stdout.count("\n") == 1, res.stdout
    assert res.stdout.startswith("store verify: ") and res.stdout.rstrip().endswith(": ok"), res.stdout

    old = _junk(service, "old", age_s=2 * HOUR)
    res = run("gc", "--list")
    assert res.exit_code == 0 and res.stdout.count("\n") == 1, res.stdout
    assert res.stdout.startswith("store gc (dry run): ") and "would be deleted (use --apply)" in res.stdout
    assert f"would delete: {old}" in res.stderr
    assert service.service.objects.has(old)
    res = run("gc", "--apply", "--grace-s", "0")
    assert res.exit_code == 0 and res.stdout.count("\n") == 1 and "deleted " in res.stdout, res.stdout
    assert not service.service.objects.has(old)

    victim = ran["calls"][0]["call"]
    service.service.objects.delete(victim)
    res = run("verify")
    assert res.exit_code == 1 and res.stdout.count("\n") == 1, res.stdout
    assert "1 missing: 1 problem(s)" in res.stdout, res.stdout
    assert f"missing: {victim} referenced from " in res.stderr
    monkeypatch.setattr(output, "human", lambda: False)
    res = run("verify", "--json")
    assert res.exit_code == 1 and json.loads(res.stdout)["problems"] == 1
    # on a pipe the JSON, and the one line naming the problem and the fix on stderr (it said nothing, exit 1)
    line = res.stderr.strip()
    assert line.startswith("store verify: ") and "1 missing: 1 problem(s); `sr-bench store verify --repair`" in line
    assert "\n" not in line, res.stderr
    res = run("gc")
    assert res.exit_code == 1 and json.loads(res.stdout)["refused"], res.stdout
    assert res.stderr.strip().splitlines()[-1].startswith("store gc (dry run): "), res.stderr
