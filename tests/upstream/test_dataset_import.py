"""Issue 39, item 6, with the real package: a dataset upstream's released CLI freezes on its own host
(`vllm-sr benchmark dataset prepare --local`) moves over by `sr-bench dataset import`, unchanged (bytes, sha256,
case ids, upstream's id), and upstream's own `plan`, `run`, `report` and `compare` work on it against sr-bench's
service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from srbench.simulate import samples

from .conftest import World, registered
from .upstream_env import upstream_python


def _upstream_local(w: World, store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`vllm-sr benchmark --store STORE …` on this host, no service (as `--local` needs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SR_BENCH_", "VLLM_SR_"))}
    env["HOME"] = str(w.up.cwd / "home")
    return subprocess.run([str(w.up.script), "benchmark", "--store", str(store), *args], cwd=w.up.cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=True)


def _sr_bench(w: World, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_TOKEN=w.service.token, SR_BENCH_HOME=str(w.up.cwd / "sr-home"))
    return subprocess.run([sys.executable, "-m", "srbench.cli.main", "--url", w.service.url, *args], cwd=w.up.cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_an_upstream_frozen_dataset_moves_over_and_runs(world: World) -> None:
    source = samples.write_mmlu_pro(world.up.cwd / "mmlu-source")
    parquet = next((source / "data").iterdir())
    up_store = world.up.cwd / "upstream-store"
    prepared = json.loads(_upstream_local(world, up_store, "dataset", "prepare", "--local", "--benchmark", "mmlu-pro",
                                          "--profile", "smoke", "--source-path", str(parquet),
                                          "--revision", samples.SAMPLE_REVISION).stdout)
    folder = up_store / "datasets" / prepared["id"]
    data = (folder / "cases.jsonl").read_bytes()
    done = _sr_bench(world, "dataset", "import", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    ds = json.loads(done.stdout)
    assert (ds["id"], ds["sha256"], ds["case_count"]) == (prepared["id"], prepared["sha256"], prepared["case_count"])
    assert ds["upstream"]["id"] == prepared["id"] and Path(ds["path"]).read_bytes() == data
    assert [json.loads(x)["id"] for x in Path(ds["path"]).read_bytes().splitlines()] == \
        [json.loads(x)["id"] for x in data.splitlines()]
    # upstream's own flow on it: plan (by the path sr-bench answers), run, report, compare
    up, runs = world.up, []
    for target in ("strong", "weak"):
        up.write(f"imported-{target}.json", {
            "version": "sr-bench-1.0", "name": "imported", "profile": "smoke", "seed": prepared["seed"],
            "dataset": {"path": ds["path"], "sha256": ds["sha256"]}, "targets": registered(world, target),
            "limits": {"concurrency": 4, "total_timeout_s": 20, "idle_timeout_s": 10}})
        planned = up.json("plan", "--manifest", f"imported-{target}.json", "--output", f"imported-{target}-f.json")
        assert planned["total"] == prepared["case_count"]
        report = json.loads(up.run("run", "--manifest", f"imported-{target}-f.json").stdout)
        assert report["status"] == "completed"
        assert [t["total"] for t in report["summary"]["targets"]] == [prepared["case_count"]]
        runs.append(report["run_id"])
    assert up.json("report", runs[0])["run_id"] == runs[0]
    row = up.json("compare", runs[0], runs[1])["comparisons"][0]
    assert row["paired_cases"] == prepared["case_count"]
    # importing the same folder again is the same dataset
    assert json.loads(_sr_bench(world, "dataset", "import", str(folder / "manifest.json"), "--json").stdout) == ds


CHECK = """
import json, sys
from cli.sr_bench.preparation import dataset_identity, validate_manifest
m = json.load(open(sys.argv[1]))
validate_manifest(m)
assert dataset_identity(m) == m["id"], "id"
print("ok", m["id"])
"""


def test_an_sr_bench_dataset_exported_in_upstreams_format_is_upstreams(world: World) -> None:
    """`sr-bench dataset export --upstream STORE`: upstream's own code accepts the manifest and its id, and
    upstream's `plan` reads the cases file it names."""
    store = world.up.cwd / "export-store"
    done = _sr_bench(world, "dataset", "export", world.dataset["id"], "--upstream", str(store), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    manifest = store / "datasets" / out["id"] / "manifest.json"
    checked = subprocess.run([str(upstream_python()), "-c", CHECK, str(manifest)], capture_output=True, text=True,
                             timeout=120)
    assert checked.stdout.strip() == f"ok {out['id']}", checked.stderr
    world.up.write("exported.json", {
        "version": "sr-bench-1.0", "name": "exported", "profile": "smoke", "seed": out["seed"],
        "dataset": {"path": out["path"], "sha256": out["sha256"]}, "targets": registered(world, "strong"),
        "limits": {"concurrency": 4, "total_timeout_s": 20, "idle_timeout_s": 10}})
    assert world.up.json("plan", "--manifest", "exported.json")["total"] == world.dataset["case_count"]
