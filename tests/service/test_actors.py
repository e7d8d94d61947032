"""Issue 13, item 3: actors and roles. With the actor headers (only from a caller holding the token),
runs and experiments are owned and scoped as upstream has them and the read role never changes anything;
without them the caller is the local operator and sees everything. sr-bench's Dashboard sends its
signed-in user as the actor."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from srbench.dashboard import make_dashboard
from srbench.dashboard.auth import COOKIE
from srbench.service.route_table import ROUTES
from srbench.service.wire.projections import plan_from_wire
from srbench.stages.plan.freeze import plan_sha256

from .helpers import Api, DashboardThread, freeze, manifest, single


def _as(service: Any, actor: str, role: str) -> Api:
    a = Api(service.url, service.token)
    a.http.headers.update({"X-SR-Bench-Actor-ID": actor, "X-SR-Bench-Actor-Role": role})
    return a


@pytest.fixture
def people(service: Any) -> Iterator[dict[str, Api]]:
    out = {"alice": _as(service, "alice", "write"), "bob": _as(service, "bob", "write"),
           "viewer": _as(service, "viewer", "read"), "boss": _as(service, "boss", "admin")}
    yield out
    for a in out.values():
        a.close()


@pytest.fixture
def ds(api: Api, prepare: Any, sim: Any) -> dict[str, Any]:
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("weak", sim.v1_url, "sim-weak")]})
    return prepare("mmlu-pro", limit=4)


def _snapshot(store: Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{store / 'journal.sqlite3'}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in sorted(tables)
                if t not in ("action_cache", "action_last", "report_heads")}   # caches of derived output
    finally:
        conn.close()


def test_actor_headers_need_the_token_and_a_valid_identity(service: Any) -> None:
    with httpx.Client(base_url=service.url + "/api/sr-bench/v1", timeout=10) as c:
        forged = c.get("/runs", headers={"X-SR-Bench-Actor-ID": "root", "X-SR-Bench-Actor-Role": "admin"})
        assert forged.status_code == 403 and forged.json()["code"] == "unauthorized"
        auth = {"Authorization": "Bearer " + service.token}
        for actor, role in (("alice", "owner"), ("", "write"), ("a" * 257, "write"), ("alice", None), (None, "read"),
                            ("tab\tinside", "write")):
            headers = dict(auth)
            if actor is not None:
                headers["X-SR-Bench-Actor-ID"] = actor
            if role is not None:
                headers["X-SR-Bench-Actor-Role"] = role
            r = c.get("/runs", headers=headers)
            assert r.status_code == 403 and r.json()["code"] == "invalid_actor", (actor, role, r.text)


def test_runs_are_owned_and_scoped(api: Api, people: dict[str, Api], ds: dict[str, Any]) -> None:
    alice, bob, boss = people["alice"], people["bob"], people["boss"]
    mine = alice.ok("POST", "/runs", {"manifest": freeze(alice, manifest(ds, [{"id": "strong"}])),
                                      "idempotency_key": "same-key"})
    theirs = bob.ok("POST", "/runs", {"manifest": freeze(bob, manifest(ds, [{"id": "strong"}])),
                                      "idempotency_key": "same-key"})
    assert mine["owner"] == "alice" and theirs["owner"] == "bob" and mine["id"] != theirs["id"]   # keys per owner
    assert mine["idempotency_key"] == theirs["idempotency_key"] == "same-key"
    local = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "weak"}]))})
    assert local["owner"] == "local"
    for r in (mine, theirs, local):
        api.wait(r["id"])
    assert {r["id"] for r in alice.ok("GET", "/runs")["runs"]} == {mine["id"]}
    assert {r["id"] for r in bob.ok("GET", "/runs")["runs"]} == {theirs["id"]}
    every = {mine["id"], theirs["id"], local["id"]}
    assert {r["id"] for r in boss.ok("GET", "/runs")["runs"]} == every          # admin sees every run
    assert {r["id"] for r in api.ok("GET", "/runs")["runs"]} == every           # so does the local operator
    # another owner's run does not exist for bob, on every run route
    for method, path, *_ in ROUTES:
        if path.startswith("/runs/{run_id}") and "{" not in path.removeprefix("/runs/{run_id}"):
            status, body = bob.call(method, path.replace("{run_id}", mine["id"]), {} if method == "POST" else None)
            assert status in (403, 404), (method, path, status, body)
    assert bob.error("POST", "/comparisons", {"baseline_run_id": mine["id"], "candidate_run_id": theirs["id"]},
                     404, "not_found")
    assert bob.error("POST", "/replays", {"baseline_run_id": mine["id"], "preview_run_id": theirs["id"]},
                     404, "not_found")
    assert boss.ok("GET", f"/runs/{mine['id']}/report")["run_id"] == mine["id"]
    assert alice.ok("POST", "/comparisons", {"baseline_run_id": mine["id"], "candidate_run_id": mine["id"]})


def test_the_read_role_never_changes_anything(service: Any, api: Api, people: dict[str, Api],
                                              ds: dict[str, Any]) -> None:
    run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})
    api.wait(run["id"])
    exp = api.ok("POST", "/experiments", {"name": "owned by the operator"})
    api.ok("GET", f"/runs/{run['id']}/report")                         # the report head is written now
    ids = {"run_id": run["id"], "dataset_id": ds["id"], "experiment_id": exp["id"], "call_id": "call-" + "0" * 32,
           "prep_id": "prep-" + "0" * 32, "digest": "b3:" + "0" * 64}
    before = _snapshot(service.store_dir)
    viewer = people["viewer"]
    refused = 0
    for method, path, name, *_ in ROUTES:
        if method == "GET" or name == "make_comparison":
            continue
        status, body = viewer.call(method, re.sub(r"{(\w+)}", lambda m: ids[m.group(1)], path),
                                   {} if method == "POST" else None)
        assert status == 403 and body["code"] == "read_only", (method, path, status, body)
        refused += 1
    assert refused >= 24
    assert viewer.error("POST", "/targets", {"targets": [single("evil", "http://127.0.0.1:9/v1")]}, 403, "read_only")
    assert _snapshot(service.store_dir) == before                    # nothing was written
    assert "evil" not in {t["id"] for t in api.ok("GET", "/targets")["targets"]}
    assert viewer.ok("GET", "/runs")["runs"] == []                  # and it sees only its own (none)
    assert viewer.ok("GET", "/catalog")["version"] == "sr-bench-1.0"


def test_named_actors_use_the_operators_targets_and_routes(api: Api, people: dict[str, Api],
                                                           ds: dict[str, Any], sim: Any) -> None:
    alice, boss = people["alice"], people["boss"]
    for path, body in (("/targets", {"targets": [single("x", sim.v1_url)]}), ("/store/gc", {}),
                       ("/store/verify", {}), ("/shutdown", {}),
                       ("/benchmark-options", {"benchmark": "arc-agi-2", "set": {"attempts": 2}})):
        assert alice.error("POST", path, body, 403, "operator_only")
    assert alice.ok("GET", "/benchmark-options")["options"] == {}     # reading the options is fine
    assert alice.call("GET", "/objects/b3:" + "0" * 64)[0] == 403
    assert alice.ok("GET", "/targets")["targets"]                      # reading the registry is fine
    # an inline target must repeat the registered one exactly
    registered = api.ok("GET", "/targets")["targets"]
    strong = next(t for t in registered if t["id"] == "strong")
    assert alice.ok("POST", "/plans", {"manifest": manifest(ds, [dict(strong)])})["manifest"]["targets"][0]["id"]
    assert alice.error("POST", "/plans", {"manifest": manifest(ds, [dict(strong, model="sim-weak")])},
                       403, "target_override")
    assert alice.error("POST", "/plans", {"manifest": manifest(ds, [single("mine", sim.v1_url)])},
                       403, "unregistered_target")
    assert api.ok("POST", "/plans", {"manifest": manifest(ds, [single("mine", sim.v1_url)])})  # the operator may
    # a malformed auxiliary_targets is the manifest's one-line error, not the policy's traceback (a 500)
    odd = dict(manifest(ds, [{"id": "strong"}]), auxiliary_targets=["strong"])
    assert alice.call("POST", "/plans", {"manifest": odd})[0] == 400
    # a frozen plan rewritten (and rehashed) to another endpoint is refused at submission
    forged = plan_from_wire(freeze(api, manifest(ds, [{"id": "strong"}])))
    forged["targets"][0]["target"]["base_url"] = "http://127.0.0.1:9/v1"
    forged["plan_sha256"] = plan_sha256(forged)
    assert alice.error("POST", "/runs", {"manifest": forged}, 403, "target_override")
    assert boss.error("POST", "/runs", {"manifest": forged}, 403, "target_override")    # admin too: upstream's rule
    assert api.ok("POST", "/runs", {"manifest": forged})["owner"] == "local"             # the operator is trusted


def test_experiments_are_owned_and_scoped(api: Api, people: dict[str, Api], ds: dict[str, Any]) -> None:
    alice, bob, boss = people["alice"], people["bob"], people["boss"]
    exp = alice.ok("POST", "/experiments", {"name": "route math to strong", "idempotency_key": "e-1"})
    assert exp["owner"] == "alice"
    assert bob.ok("POST", "/experiments", {"name": "route math to strong", "idempotency_key": "e-1"})["id"] != exp["id"]
    assert bob.error("GET", f"/experiments/{exp['id']}", None, 404, "not_found")
    assert bob.error("DELETE", f"/experiments/{exp['id']}", None, 404, "not_found")
    assert [e["id"] for e in alice.ok("GET", "/experiments")["experiments"]] == [exp["id"]]
    assert len(boss.ok("GET", "/experiments")["experiments"]) == 2
    # a manifest joins the experiment when its run is created, in a role that fits the run
    m = manifest(ds, [{"id": "strong"}], experiment={"id": exp["id"], "role": "baseline", "hypothesis": "h"})
    run = alice.ok("POST", "/runs", {"manifest": freeze(alice, m)})
    assert run["manifest"]["experiment"] == {"id": exp["id"], "role": "baseline", "hypothesis": "h"}
    members = alice.ok("GET", f"/experiments/{exp['id']}/runs")["members"]
    assert [(x["run_id"], x["role"]) for x in members] == [(run["id"], "baseline")]
    assert bob.error("POST", "/plans", {"manifest": m}, 404, "not_found")         # not bob's experiment
    bad = manifest(ds, [{"id": "strong"}], experiment={"id": exp["id"], "role": "candidate"})
    assert alice.error("POST", "/runs", {"manifest": bad}, 400, "experiment_role")
    alice.wait(run["id"])
    assert alice.ok("DELETE", f"/experiments/{exp['id']}")["unlinked_runs"] == 1
    assert alice.ok("GET", f"/runs/{run['id']}")["id"] == run["id"]             # the run stays


def test_the_dashboard_sends_its_signed_in_user(service: Any, api: Api, ds: dict[str, Any], tmp_path: Path) -> None:
    users = [("viewer-key-0123456789", "carol", "read"), ("writer-key-0123456789", "dave", "write")]
    run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})
    api.wait(run["id"])
    with DashboardThread(make_dashboard(service.url, service.token, "operator-key-0123456789", users)) as dash:
        def session(key: str) -> httpx.Client:
            c = httpx.Client(base_url=dash.url, timeout=30, follow_redirects=False)
            assert c.post("/login", data={"key": key}).status_code == 303 and COOKIE in c.cookies
            return c
        post = {"X-SR-Bench-Dashboard": "1"}
        op, carol, dave = (session(k) for k in ("operator-key-0123456789", "viewer-key-0123456789",
                                                 "writer-key-0123456789"))
        try:
            assert [r["id"] for r in op.get("/api/runs").json()["runs"]] == [run["id"]]   # the admin user sees all
            assert carol.get("/api/runs").json()["runs"] == []                        # carol sees her own: none
            r = carol.post("/api/plans", json={"manifest": manifest(ds, [{"id": "strong"}])}, headers=post)
            assert r.status_code == 403 and r.json()["code"] == "read_only"
            made = dave.post("/api/experiments", json={"name": "dave's"}, headers=post).json()
            assert made["owner"] == "dave"
            assert dave.get(f"/api/runs/{run['id']}").status_code == 404
            gone = dave.delete(f"/api/experiments/{made['id']}", headers=post)
            assert gone.status_code == 200 and gone.json()["deleted"] is True
            mine = dave.post("/api/runs", json={"manifest": freeze(api, manifest(ds, [{"id": "weak"}]))},
                             headers=post).json()
            assert mine["owner"] == "dave"
        finally:
            for c in (op, carol, dave):
                c.close()
