"""Issue 13, item 4: upstream's CLI flags on sr-bench's CLI (`vllm-sr benchmark …`), against the real
service: --url, --no-autostart, serve --store-identity, show --active/--after/--limit/--call-id,
replay --idempotency-key, candidate-plan, experiment …, replay-options and comparison-options."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import httpx

from service.helpers import free_port, loopback_process
from srbench.discovery import ensure_token
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread

PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}


def test_upstream_flags(cli, sources) -> None:
    ds = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                  "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    router = RouterRule(strong="big", weak="big", long_prompt_chars=10**6, keywords=(), config_hash="cfg-1")
    with SimulatorThread(models=[SimModel("big", skill=0.8)], router=router,
                         answer_key=load_answer_key(ds["path"])) as sim:
        cli.run("target", "register", "--file", cli.write("targets.json", [
            {"id": "big", "kind": "single", "base_url": sim.v1_url, "model": "big", "prices": {"big": PRICE}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": {"big": PRICE},
             "config_hash": "cfg-1", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1}]))
        manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "flags", "profile": "smoke",
                                        "seed": ds["seed"], "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                                        "targets": [{"id": "big"}],
                                        "limits": {"concurrency": 4, "total_timeout_s": 20, "idle_timeout_s": 5}})
        run = cli.json("run", "--manifest", manifest)        # a manifest (not frozen) is frozen on submission
        assert run["status"] == "completed", run
        rid = run["run_id"]
        page = cli.json("show", rid, "--calls", "--after", "0", "--limit", "5")
        assert len(page["calls"]) == 5 and page["limit"] == 5 and page["next_cursor"] is not None
        rest = cli.json("show", rid, "--calls", "--after", str(page["next_cursor"]), "--limit", "500")
        ids = [c["id"] for c in page["calls"] + rest["calls"]]
        assert len(ids) == len(set(ids)) == 14 and rest["next_cursor"] is None
        assert cli.json("show", rid, "--calls", "--active")["calls"] == []
        one = cli.json("show", rid, "--call-id", ids[0])
        assert one["id"] == ids[0] and one["record"]["status"] == "completed"
        assert len(cli.json("show", rid, "--results", "--after", "10")["results"]) == 4
        assert cli.run("show", rid, "--active", ok=False).returncode == 2

        # experiments and a candidate plan on the baseline's protocol
        exp = cli.json("experiment", "create", "cheaper routing", "--idempotency-key", "k1")
        assert cli.json("experiment", "create", "cheaper routing", "--idempotency-key", "k1")["id"] == exp["id"]
        cli.json("experiment", "attach", exp["id"], rid, "--role", "baseline", "--hypothesis", "the single model")
        planned = cli.json("candidate-plan", rid, "--target", "mom", "--experiment", exp["id"],
                           "--output", str(cli.cwd / "candidate.json"))
        assert planned["total"] == 14 and planned["model_requests"] == 0
        frozen = json.loads((cli.cwd / "candidate.json").read_text())
        assert frozen["baseline_run_id"] == rid and frozen["experiment"]["role"] == "candidate"
        cand = cli.json("run", "--manifest", str(cli.cwd / "candidate.json"))
        assert cand["status"] == "completed", cand
        members = cli.json("experiment", "show", exp["id"], "--runs")["members"]
        assert [(m["run_id"], m["role"]) for m in members] == [(rid, "baseline"), (cand["run_id"], "candidate")]
        assert [e["id"] for e in cli.json("experiment", "list")["experiments"]] == [exp["id"]]
        options = cli.json("comparison-options", rid)
        assert [o["run_id"] for o in options["options"]] == [cand["run_id"]]
        assert cli.json("replay-options", rid)["empty_reason"] == "no_compatible_saved_runs"
        refused = cli.run("replay", "--baseline", rid, "--preview", cand["run_id"], "--idempotency-key", "r1", ok=False)
        assert refused.returncode == 2 and "replay refused" in refused.stderr
        assert cli.json("experiment", "delete", exp["id"])["unlinked_runs"] == 2

        # --url: an external service by URL (its token from SR_BENCH_TOKEN); a wrong store is refused
        store = cli.cwd / ".sr-bench" / "default" / "store"
        url = json.loads((store / "service.json").read_text())["url"]
        token = (store.parent / "store.service-token").read_text().strip()
        elsewhere = cli.cwd / "elsewhere"
        elsewhere.mkdir()
        env = {**cli.env, "SR_BENCH_TOKEN": token}

        def run_in(where, *args):
            return subprocess.run([sys.executable, "-m", "srbench.cli.main", *args], cwd=where, env=env,
                                  capture_output=True, text=True, timeout=60)
        by_url = run_in(elsewhere, "--url", url, "show", rid)
        assert by_url.returncode == 0 and json.loads(by_url.stdout)["id"] == rid
        wrong = run_in(elsewhere, "--url", url, "--store", str(elsewhere / "other"), "show", rid)
        assert wrong.returncode == 2 and "is not the service of the store" in wrong.stderr
        right = run_in(elsewhere, "--url", url, "--store", str(store), "show", rid)
        assert right.returncode == 0
        assert not (elsewhere / ".sr-bench").exists()            # no local store, no service started there
    # --no-autostart: nothing is started where no service runs
    empty = cli.cwd / "empty"
    empty.mkdir()
    none = subprocess.run([sys.executable, "-m", "srbench.cli.main", "--no-autostart", "runs"], cwd=empty,
                          env=cli.env, capture_output=True, text=True, timeout=60)
    assert none.returncode == 2 and "no sr-bench service is running" in none.stderr
    assert not (empty / ".sr-bench" / "default" / "store" / "service.json").exists()


def test_serve_store_identity(cli, tmp_path) -> None:
    bad = cli.run("serve", "--store", str(tmp_path / "s"), "--port", "0", "--store-identity", "not-a-digest", ok=False)
    assert bad.returncode == 2 and "--store-identity must be a SHA-256 digest" in bad.stderr
    identity = hashlib.sha256(b"/srv/host/path/of/the/store").hexdigest()
    port = free_port()
    cmd = [sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(tmp_path / "s"), "--port", str(port),
           "--store-identity", identity]
    auth = {"Authorization": "Bearer " + ensure_token(tmp_path / "s")}      # /health needs it, as upstream
    with loopback_process(cmd, f"http://127.0.0.1:{port}/health", tmp_path / "serve.log", env=cli.env,
                          token=auth["Authorization"][7:]):
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5, trust_env=False).status_code == 403
        health = httpx.get(f"http://127.0.0.1:{port}/health", headers=auth, timeout=5, trust_env=False).json()
        assert health == {"version": "sr-bench-1.0", "status": "ready", "store_id": identity}
    plain = hashlib.sha256(str((tmp_path / "t").resolve()).encode()).hexdigest()
    port = free_port()
    cmd = [sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(tmp_path / "t"), "--port", str(port)]
    auth = {"Authorization": "Bearer " + ensure_token(tmp_path / "t")}
    with loopback_process(cmd, f"http://127.0.0.1:{port}/health", tmp_path / "serve2.log", env=cli.env,
                          token=auth["Authorization"][7:]):
        assert httpx.get(f"http://127.0.0.1:{port}/api/sr-bench/v1/health", headers=auth, timeout=5,
                         trust_env=False).json()["store_id"] == plain
