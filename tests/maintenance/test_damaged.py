"""Damaged objects on a local store (issue 10, item 2): bytes that no longer hash to their name are never
served as good. A flipped byte that keeps the JSON valid and a truncated call object each answer a clear
`damaged_object` error on the routes that need them, one damaged call marks only its row of a calls page,
the first sighting is an ``object_damaged`` event, and `store verify --repair` copies a good object from
the second store named in SR_BENCH_REPAIR_FROM."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from srbench.cas import ObjectStore
from srbench.cli.main import cli

from .helpers import settled


def _damage(service: Any, digest: str, how: str) -> None:
    path = Path(service.service.objects.path_of(digest))
    data = path.read_bytes()
    path.chmod(0o644)
    if how == "flipped":                # one byte changed, the JSON still valid
        assert b'"completed"' in data
        path.write_bytes(data.replace(b'"completed"', b'"complated"', 1))
    else:                               # cut short: not JSON any more
        path.write_bytes(data[: len(data) // 2])


def _events(api: Any, run_id: str, kind: str, timeout: float = 20) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in api.ok("GET", f"/runs/{run_id}/events")["events"] if e["kind"] == kind]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _assert_damaged(status: int, body: Any, digest: str) -> None:
    assert status == 503, (status, body)
    assert set(body) == {"error", "code"} and body["code"] == "damaged_object", body
    msg = body["error"]
    assert f"damaged object {digest}" in msg and "sr-bench store verify" in msg, msg


@pytest.mark.parametrize("how", ["flipped", "truncated"])
def test_a_damaged_call_is_never_served_as_good(api, ran, service, how) -> None:
    run_id, calls = ran["run_id"], ran["calls"]
    bad = calls[1]
    _damage(service, bad["call"], how)
    # the object itself and the one full call record: a clear error, not 200 and not a misleading 404
    _assert_damaged(*api.get(f"/objects/{bad['call']}"), bad["call"])
    _assert_damaged(*api.get(f"/runs/{run_id}/calls/{bad['cell_id']}"), bad["call"])
    # the calls page still answers: that row says damaged, the others are whole
    page = api.ok("GET", f"/runs/{run_id}/calls")
    assert page["total"] == len(calls)
    rows = {r["cell_id"]: r for r in page["calls"]}
    assert rows[bad["cell_id"]]["damaged"] is True
    assert f"damaged object {bad['call']}" in rows[bad["cell_id"]]["damage"]
    assert "http_status" not in rows[bad["cell_id"]] and "usage" not in rows[bad["cell_id"]]   # nothing read from it
    good = [r for cid, r in rows.items() if cid != bad["cell_id"]]
    assert good and all(r["damaged"] is False and r["status"] == "completed" for r in good), good
    # the other calls are still served
    assert api.get(f"/runs/{run_id}/calls/{good[0]['cell_id']}")[0] == 200
    # one event per damaged digest (not one per read); it is written without holding up the read
    damaged = _events(api, run_id, "object_damaged")
    assert len(damaged) == 1 and damaged[0]["data"]["digest"] == bad["call"], damaged
    # and verify names it
    res = api.ok("POST", "/store/verify", {})
    assert res["corrupt"] == [bad["call"]]


def test_verify_repair_copies_a_good_object_from_a_second_store(api, ran, service, tmp_path, monkeypatch) -> None:
    settled(service)
    backup = tmp_path / "team-remote"
    shutil.copytree(service.store_dir / "cas", backup)
    run_id, bad, gone = ran["run_id"], ran["calls"][0], ran["calls"][2]
    _damage(service, bad["call"], "truncated")
    service.service.objects.delete(gone["call"])
    # without a second store: found, not repaired, and said why
    res = api.ok("POST", "/store/verify", {"repair": True})
    assert res["ok"] is False and res["repaired"] == []
    assert {u["digest"] for u in res["unrepaired"]} == {bad["call"], gone["call"]}
    assert "SR_BENCH_REPAIR_FROM" in res["unrepaired"][0]["reason"]
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", f"memory://nothing-here {backup}")
    runner = CliRunner()
    out = runner.invoke(cli, ["--store", str(service.store_dir), "store", "verify", "--repair"],
                        env={"SR_BENCH_URL": service.url, "SR_BENCH_TOKEN": service.token})
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)                                  # a pipe: the service's answer
    assert set(answer["repaired"]) == {bad["call"], gone["call"]}
    assert answer["corrupt"] == [] and answer["missing"] == [] and answer["ok"] is True
    record = api.ok("GET", f"/runs/{run_id}/calls/{bad['cell_id']}")["record"]
    assert record["status"] == "completed"
    assert api.get(f"/objects/{gone['call']}")[0] == 200


def test_a_file_where_an_objects_folder_belongs_is_a_repair_reason_not_a_500(api, ran, service, tmp_path,
                                                                              monkeypatch) -> None:
    """`store verify --repair` found the good copy, then died writing it ('internal error: NotADirectoryError'),
    and `store gc` died listing: the file is named in each object's reason; gc answers."""
    settled(service)
    backup = tmp_path / "backup"
    shutil.copytree(service.store_dir / "cas", backup)
    digest = ran["calls"][1]["call"]
    folder = Path(service.service.objects.path_of(digest)).parent
    shutil.move(folder, tmp_path / "aside")
    folder.write_bytes(b"not a folder")
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", str(backup))
    res = api.ok("POST", "/store/verify", {"repair": True})
    mine = [u for u in res["unrepaired"] if u["digest"] == digest]
    assert mine and mine[0]["reason"] == (f"a good copy was found but cannot be written: {folder} is not a folder; "
                                          "move that file aside (it is no object), then repair again"), res
    assert api.ok("POST", "/store/gc", {})["dry_run"] is True
    folder.unlink()
    shutil.move(tmp_path / "aside", folder)
    assert api.ok("POST", "/store/verify", {})["ok"] is True


def test_an_unreachable_repair_source_is_named_without_its_credentials(api, ran, service, monkeypatch) -> None:
    """SR_BENCH_REPAIR_FROM naming an http(s) store nobody answers: the reason said only "no configured source
    holds a good copy", and the answer's `sources` echoed the URL's password."""
    from tests.service.helpers import free_port

    settled(service)
    digest = ran["calls"][1]["call"]
    _damage(service, digest, "truncated")
    port = free_port()
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", f"http://team:s3cr3t@127.0.0.1:{port}/backup")
    res = api.ok("POST", "/store/verify", {"repair": True})
    assert res["repaired"] == [] and res["sources"] == [f"http://***@127.0.0.1:{port}/backup"]
    reason = res["unrepaired"][0]["reason"]
    assert reason.startswith(f"no configured source holds a good copy (http://***@127.0.0.1:{port}/backup could "
                             "not be reached (ClientConnectorError: "), reason
    assert reason.endswith(": check it answers, then repair again)") and "s3cr3t" not in json.dumps(res)


@pytest.mark.parametrize("source", ["nope://team:s3cr3t@bucket/x", "/etc/passwd/x"])
def test_a_repair_source_that_cannot_be_opened_is_one_line(api, service, monkeypatch, source) -> None:
    """SR_BENCH_REPAIR_FROM naming an unknown protocol or a path under a file was a 500 'internal error:
    ValueError' (NotADirectoryError) with a traceback in the service's log."""
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", source)
    msg = api.error("POST", "/store/verify", {"repair": True}, 400, "service_environment")
    assert msg.startswith(f"SR_BENCH_REPAIR_FROM names {source.replace('team:s3cr3t@', '***@')}, which cannot be "
                          "opened ("), msg
    assert msg.endswith("or unset it") and "s3cr3t" not in msg and "\n" not in msg


def test_a_damaged_copy_in_the_second_store_is_not_used(api, ran, service, tmp_path, monkeypatch) -> None:
    settled(service)
    backup = tmp_path / "backup"
    shutil.copytree(service.store_dir / "cas", backup)
    digest = ran["calls"][0]["call"]
    _damage(service, digest, "flipped")
    copy = Path(ObjectStore(str(backup)).path_of(digest))     # (a packed object is unpacked to its file)
    copy.chmod(0o644)
    copy.write_bytes(b"{}")
    monkeypatch.setenv("SR_BENCH_REPAIR_FROM", str(backup))
    res = api.ok("POST", "/store/verify", {"repair": True})
    assert res["repaired"] == [] and res["unrepaired"][0]["digest"] == digest
    assert res["corrupt"] == [digest] and res["ok"] is False


def test_a_damaged_plan_is_skipped_and_named_by_the_store_wide_lists(api, ran, prepare, service) -> None:
    """Issue 25, item 4: one damaged plan object leaves its run out of /comparison-options and
    /replay-options (named in damaged_runs), not a 503 for every run."""
    from service.helpers import freeze, manifest

    ids = [ran["run_id"]]
    for name in ("second", "third"):                 # same questions and target, another name: another plan object
        run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ran["dataset"], [{"id": "strong"}], name=name))})
        assert api.wait(run["id"])["status"] == "completed"
        ids.append(run["id"])
    settled(service)
    plans = {i: api.ok("GET", f"/runs/{i}")["plan"] for i in ids}
    assert len(set(plans.values())) == 3
    bad = ids[2]
    _damage(service, plans[bad], "truncated")
    for kind in ("comparison", "replay"):
        status, body = api.get(f"/{kind}-options")
        assert status == 200, (kind, status, body)
        assert [d["run_id"] for d in body["damaged_runs"]] == [bad], body
        assert f"damaged object {plans[bad]}" in body["damaged_runs"][0]["error"]
    listed = api.ok("GET", "/comparison-options")
    assert sorted(b["run_id"] for b in listed["baselines"]) == sorted(ids[:2])      # the healthy ones still pair
    options = api.ok("GET", f"/comparison-options?baseline_run_id={ids[0]}")
    assert [o["run_id"] for o in options["options"]] == [ids[1]] and options["damaged_runs"][0]["run_id"] == bad
    _assert_damaged(*api.get(f"/comparison-options?baseline_run_id={bad}"), plans[bad])     # asked for: named
    damaged = _events(api, bad, "object_damaged")
    assert len(damaged) == 1 and damaged[0]["data"]["digest"] == plans[bad], damaged
    # the run list shows every run (it was a 503 for all of them, the CLI's `runs` an error): the damaged one
    # from its journal row, its manifest empty, its error naming the damage (as a restarted service reads it)
    service.service.views._cache.clear()
    service.service.runs.plans._plans.clear()
    for query in ("", "?limit=50"):
        listed_runs = {r["id"]: r for r in api.ok("GET", f"/runs{query}")["runs"]}
        assert set(ids) <= set(listed_runs), listed_runs
        assert listed_runs[bad]["manifest"] == {} and listed_runs[bad]["status"] == "completed"
        assert listed_runs[bad]["error"].startswith(f"its plan object is unreadable: damaged object {plans[bad]}")
        assert listed_runs[ids[0]]["manifest"] and listed_runs[ids[0]]["target_info"]
    _assert_damaged(*api.get(f"/runs/{bad}"), plans[bad])          # asked for by id: named, as before
