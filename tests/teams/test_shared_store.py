"""One object store for a team (DC-5), on a real S3 protocol (moto on loopback, through s3fs):
two services with separate journals share the objects; host B plans A's manifest to the same plan
digest, and after `pull` re-reports and regrades A's run with zero model calls. Runs travel between
private stores as content-addressed bundles (`push`/`pull`), checked on arrival."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.service.helpers import Api, isolated_env, manifest, single

from srbench.client.embedded import EmbeddedService
from srbench.simulate.behaviour import SimModel
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_env(tmp_path, monkeypatch)


@pytest.fixture
def sim() -> Any:
    with SimulatorThread(models=[SimModel("sim-strong", skill=0.8, cached_fraction=0.5)]) as s:
        yield s


class Host:
    """One service (its own journal) and a raw API client."""

    def __init__(self, store: Path) -> None:
        self.svc = EmbeddedService(store).start()
        self.api = Api(self.svc.url, self.svc.token)

    def close(self) -> None:
        self.api.close()
        self.svc.stop()


def _run_on(host: Host, sources: dict[str, Path], sim: SimulatorThread) -> tuple[dict[str, Any], dict[str, Any]]:
    ds = host.api.ok("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "smoke",
                                                   "source_path": str(sources["mmlu-pro"]),
                                                   "revision": SAMPLE_REVISION})
    host.api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    m = manifest(ds, [{"id": "strong"}])
    plan = host.api.ok("POST", "/plans", {"manifest": m})
    run = host.api.ok("POST", "/runs", {"manifest": plan["manifest"]})
    assert host.api.wait(run["id"])["status"] == "completed"
    return m, host.api.ok("GET", f"/runs/{run['id']}") | {"plan_sha256": plan["plan_sha256"]}


def test_two_services_share_one_s3_object_store(env, s3, sources, sim, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SR_BENCH_OBJECTS_URL", f"{s3}/objects")
    a, b = Host(tmp_path / "host-a" / "store"), Host(tmp_path / "host-b" / "store")
    try:
        m, run = _run_on(a, sources, sim)
        report_a = a.api.ok("GET", f"/runs/{run['id']}/report")
        served = len(sim.log)
        # host B: its own journal, the same objects; the same manifest plans to the same digest
        b.api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
        assert b.api.ok("POST", "/plans", {"manifest": m})["plan_sha256"] == run["plan_sha256"]
        b.api.error("GET", f"/runs/{run['id']}", None, 404)
        b.api.error("POST", f"/runs/{run['id']}/pull", {}, 404)          # not pushed yet
        pushed = a.api.ok("POST", f"/runs/{run['id']}/push", {})
        assert pushed["copied"] == 0 and pushed["model_requests"] == 0   # the objects are already shared
        assert a.api.ok("POST", f"/runs/{run['id']}/push", {})["bundle"] == pushed["bundle"]   # idempotent
        pulled = b.api.ok("POST", f"/runs/{run['id']}/pull", {})
        assert pulled["imported"] is True and pulled["bundle"] == pushed["bundle"]
        assert b.api.ok("POST", f"/runs/{run['id']}/pull", {})["imported"] is False            # idempotent
        report_b = b.api.ok("GET", f"/runs/{run['id']}/report")
        assert report_b["content_digest"] == report_a["content_digest"]
        regrade = b.api.ok("POST", f"/runs/{run['id']}/regrade", {})
        assert regrade["kind"] == "offline-regrade"
        assert len(sim.log) == served                                    # zero model calls on B
        assert b.api.ok("GET", f"/runs/{run['id']}")["progress"] == run["progress"]
    finally:
        a.close()
        b.close()


def test_push_and_pull_between_private_stores(env, s3, sources, sim, tmp_path) -> None:
    remote = f"{s3}/team-{uuid.uuid4().hex[:6]}"
    a, b = Host(tmp_path / "a" / "store"), Host(tmp_path / "b" / "store")
    try:
        m, run = _run_on(a, sources, sim)
        rid = run["id"]
        report_a = a.api.ok("GET", f"/runs/{rid}/report")
        msg = a.api.error("POST", f"/runs/{rid}/push", {}, 400, "invalid_input")
        assert "--remote" in msg
        pushed = a.api.ok("POST", f"/runs/{rid}/push", {"remote": remote})
        assert pushed["copied"] == pushed["objects"] > 0
        again = a.api.ok("POST", f"/runs/{rid}/push", {"remote": remote})
        assert (again["bundle"], again["copied"]) == (pushed["bundle"], 0)
        served = len(sim.log)
        pulled = b.api.ok("POST", f"/runs/{rid}/pull", {"remote": remote})
        assert pulled["copied"] == pushed["objects"] and pulled["imported"] is True
        assert b.api.ok("GET", f"/runs/{rid}/report")["content_digest"] == report_a["content_digest"]
        b.api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
        assert b.api.ok("POST", "/plans", {"manifest": m})["plan_sha256"] == run["plan_sha256"]
        assert len(sim.log) == served
        # a correction on A changes its rows: the bound name keeps the first bundle
        a.api.ok("POST", f"/runs/{rid}/reconcile-usage", {})
        a.api.error("POST", f"/runs/{rid}/push", {"remote": remote}, 409, "bundle_conflict")
    finally:
        a.close()
        b.close()


def test_a_damaged_object_in_the_remote_refuses_the_pull(env, s3, sources, sim, tmp_path) -> None:
    import s3fs

    remote = f"{s3}/team"
    a, c = Host(tmp_path / "a" / "store"), Host(tmp_path / "c" / "store")
    try:
        _, run = _run_on(a, sources, sim)
        rid = run["id"]
        a.api.ok("POST", f"/runs/{rid}/push", {"remote": remote})
        call = a.api.ok("GET", f"/runs/{rid}/calls")["calls"][0]["call"]
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        key = f"{remote.removeprefix('s3://')}/objects/{call[3:5]}/{call[5:]}"
        fs.pipe_file(key, fs.cat_file(key).replace(b"sim-strong", b"sim-strung"))
        msg = c.api.error("POST", f"/runs/{rid}/pull", {"remote": remote}, 422)
        assert msg.startswith("pull refused:") and call in msg and "nothing was imported" in msg, msg
        c.api.error("GET", f"/runs/{rid}", None, 404)
        assert c.api.ok("GET", "/runs")["runs"] == []
    finally:
        a.close()
        c.close()


@pytest.mark.parametrize("remote, status", [("", 400), ("x" * 3000, 400), ("nosuchproto://bucket/x", 400),
                                            ("relative/dir", 400), ("/no/such/team/store", 404), ("file://", 400),
                                            ("file://x", 400), ("/", 400), ("s3://", 400), ("memory://", 400)])
def test_bad_remotes_are_one_line_and_create_nothing(env, tmp_path, monkeypatch, remote, status) -> None:
    monkeypatch.chdir(tmp_path)
    host = Host(tmp_path / "store")
    try:
        msg = host.api.error("POST", "/runs/run-0123/pull", {"remote": remote}, status)
        assert "\n" not in msg and len(msg) < 400
        # a remote the request model refuses is that 400; a well-formed one: no such run, no remote opened
        refused_by_model = remote in ("", "x" * 3000, "relative/dir")
        host.api.error("POST", "/runs/run-0123/push", {"remote": remote}, 400 if refused_by_model else 404)
        assert {p.name for p in tmp_path.iterdir()} <= {"home", "store", "store.service-token"}   # nothing new
        assert not Path("/no/such/team/store").exists()
    finally:
        host.close()


def test_push_and_pull_carry_the_calls_of_multi_call_cells(env, sources, tmp_path) -> None:
    """ARC pass@2 cells are conversations of two journaled calls: the bundle carries the calls rows, so
    the pulled run's calls page and report equal the original's (a run of single calls has no such rows
    and its bundle keeps no `calls` field)."""
    import json

    from tests.service.helpers import REVISIONS

    remote = str(tmp_path / "team-remote")
    a, b = Host(tmp_path / "a" / "store"), Host(tmp_path / "b" / "store")
    try:
        with SimulatorThread(models=[SimModel("solver", skill=0.5)]) as sim:
            (a.svc.store_dir / "benchmark-options.json").write_text(json.dumps({"arc-agi-2": {"attempts": 2}}))
            ds = a.api.ok("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke",
                                                        "source_path": str(sources["arc-agi-2"]),
                                                        "revision": REVISIONS["arc-agi-2"]})
            a.api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url, "solver")]})
            plan = a.api.ok("POST", "/plans", {"manifest": manifest(ds, [{"id": "solver"}])})
            rid = a.api.ok("POST", "/runs", {"manifest": plan["manifest"]})["id"]
            assert a.api.wait(rid)["status"] == "completed"
        calls_a = a.api.ok("GET", f"/runs/{rid}/calls?limit=500")
        report_a = a.api.ok("GET", f"/runs/{rid}/report")
        rows_a = a.svc.service.journal.query("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (rid,))
        assert len(rows_a) == 4                                    # 2 cells × 2 attempts
        pushed = a.api.ok("POST", f"/runs/{rid}/push", {"remote": remote})
        pulled = b.api.ok("POST", f"/runs/{rid}/pull", {"remote": remote})
        assert pulled["imported"] is True and pulled["bundle"] == pushed["bundle"]
        rows_b = b.svc.service.journal.query("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (rid,))
        assert [dict(r) for r in rows_b] == [dict(r) for r in rows_a]
        assert b.api.ok("GET", f"/runs/{rid}/calls?limit=500") == calls_a
        assert b.api.ok("GET", f"/runs/{rid}/report")["content_digest"] == report_a["content_digest"]
        verified = b.api.ok("POST", "/store/verify", {})      # the run row names its bundle: a local object too
        assert verified["ok"] and verified["missing"] == [], verified
    finally:
        a.close()
        b.close()


def test_a_bundle_whose_rows_break_the_journal_models_refuses_the_pull(env, tmp_path) -> None:
    """A pulled run's rows are checked against the journal's row models (issue 26, item 4): a status outside
    the closed set would otherwise enter the journal and break every run list that reads it."""
    from srbench.cas import ObjectStore
    from srbench.schemas.bundle import CELL_COLUMNS

    rid = "run-" + "a" * 20
    run = {"id": rid, "name": "n", "mode": "live", "profile": None, "plan": "b3:" + "1" * 64, "plan_sha256": "s",
           "status": "exploded", "idem_key": None, "parent": None, "total": 1, "targets": '["t"]', "created_at": 1.0,
           "started_at": 1.0, "finished_at": 2.0, "updated_at": 2.0, "error": None, "cancel_requested": 0,
           "extra": "{}"}
    cell = dict.fromkeys(CELL_COLUMNS) | {"cell_id": "c", "seq": 0, "case_id": "k", "target_id": "t",
                                          "state": "completed", "updated_at": 2.0}
    remote = ObjectStore(str(tmp_path / "team-remote"), create=True)
    digest = remote.put_json({"kind": "run-bundle", "schema": 1, "run": run, "cells": [cell], "events": [],
                              "objects": []})
    remote.claim_name(f"runs/{rid}", digest)
    b = Host(tmp_path / "b" / "store")
    try:
        msg = b.api.error("POST", f"/runs/{rid}/pull", {"remote": str(tmp_path / "team-remote")}, 422)
        assert msg.startswith("pull refused:") and "nothing was imported" in msg, msg
        b.api.error("GET", f"/runs/{rid}", None, 404)
        assert b.api.ok("GET", "/runs")["runs"] == []
    finally:
        b.close()


def test_an_unreachable_http_remote_is_named_without_its_credentials(env, sources, sim, tmp_path) -> None:
    """An http(s) remote with nothing behind it: push answered 500 'internal error: ClientConnectorError' (then
    424 'the remote object store failed'), and pull said "no object store at http://user:secret@…" (fsspec's http
    `exists` maps a refused connection to False), echoing the credentials. Both now say it cannot be reached,
    name the URL without its credentials and the fix, one line; the CLI exits non-zero; nothing is changed."""
    from tests.integration.conftest import Cli
    from tests.service.helpers import free_port

    port = free_port()
    a = Host(tmp_path / "a" / "store")
    try:
        _m, run = _run_on(a, sources, sim)
        runs_before = a.api.ok("GET", "/runs")
        for remote, shown in ((f"http://127.0.0.1:{port}/team", f"http://127.0.0.1:{port}/team"),
                              (f"https://user:s3cr3t@127.0.0.1:{port}/team", f"https://***@127.0.0.1:{port}/team")):
            for verb in ("push", "pull"):
                msg = a.api.error("POST", f"/runs/{run['id']}/{verb}", {"remote": remote}, 424, "source_unavailable")
                assert msg.startswith(f"cannot reach the remote object store {shown} (ClientConnectorError: "), msg
                assert msg.endswith("check the URL and that its server is up and reachable from the service's "
                                    "host, then run the command again; nothing was changed"), msg
                assert "\n" not in msg and "s3cr3t" not in msg
            out = Cli(tmp_path, {"SR_BENCH_URL": a.svc.url, "SR_BENCH_TOKEN": a.svc.token}).run(
                "pull", "run-0123456789abcdef0123", "--remote", remote, ok=False)
            assert out.returncode != 0 and out.stderr.count("\n") == 1, out.stderr
            assert out.stderr.startswith(f"error: cannot reach the remote object store {shown} ("), out.stderr
            assert "s3cr3t" not in out.stdout + out.stderr
        assert a.api.ok("GET", "/runs") == runs_before
        assert not (tmp_path / "team").exists()
    finally:
        a.close()
