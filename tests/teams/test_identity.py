"""Location-free identity (DS-2, DC-4): the same work in two stores, in two working directories,
under different time zones and locales, gives the same digests for everything but what
`srbench.stages.plan.identity.VOLATILE` lists (the run id and measured timings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.conftest import Cli

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread
from srbench.stages.plan.identity import VOLATILE, scrub

PRICES = {"big": {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}}


def _work(cli: Cli, sources: dict[str, Path], sim: SimulatorThread | None, reverse: bool) -> dict[str, Any]:
    m1 = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                  "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    m2 = cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                  "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    files = [cli.write("a.json", m1), cli.write("b.json", m2)]
    combined = cli.json("dataset", "combine", *(reversed(files) if reverse else files))
    out: dict[str, Any] = {"prepared": [m1, m2], "combined": combined}
    if sim is None:
        return out
    cli.run("target", "register", "--file", cli.write("targets.json", [
        {"id": "big", "kind": "single", "base_url": sim.v1_url, "model": "big", "prices": PRICES}]))
    manifest = cli.cwd / "candidate.yaml"
    manifest.write_text(
        "version: sr-bench-1.0\nname: identity\nprofile: smoke\nseed: 20260918\n"
        f"dataset: {{path: {combined['path']}, sha256: {combined['sha256']}}}\n"
        "targets: [{id: big}]\nlimits: {concurrency: 2, total_timeout_s: 20, idle_timeout_s: 5}\n")
    out["planned"] = cli.json("plan", "--manifest", str(manifest), "--output", str(cli.cwd / "frozen.json"))
    out["frozen"] = (cli.cwd / "frozen.json").read_bytes()
    run = cli.json("run", "--manifest", str(cli.cwd / "frozen.json"))
    out["run"] = run
    out["report"] = cli.json("report", run["run_id"])
    calls = cli.json("show", run["run_id"], "--calls")
    for c in calls["calls"]:           # a call's id is masked by its run's id (wire.call_id): per run, like it
        c.pop("id")
    out["calls"] = calls
    out["results"] = cli.json("show", run["run_id"], "--results")
    return out


def test_two_stores_two_places_same_digests(tmp_path: Path, sources: dict[str, Path]) -> None:
    one = Cli(tmp_path / "east", {"TZ": "Asia/Tokyo", "LC_ALL": "C.UTF-8"})
    two = Cli(tmp_path / "far" / "west", {"TZ": "America/Los_Angeles", "LC_ALL": "C"})
    for c in (one, two):
        c.cwd.mkdir(parents=True)
    key = None
    try:
        first = _work(one, sources, None, reverse=False)
        key = load_answer_key(first["combined"]["path"])
        with SimulatorThread(models=[SimModel("big", skill=0.7, cached_fraction=0.5)], answer_key=key) as sim:
            a = _work(one, sources, sim, reverse=False)
            b = _work(two, sources, sim, reverse=True)
    finally:
        one.run("stop", ok=False)
        two.run("stop", ok=False)
    assert a["combined"]["path"] != b["combined"]["path"]
    for x, y in zip(a["prepared"] + [a["combined"]], b["prepared"] + [b["combined"]], strict=True):
        assert {k: v for k, v in x.items() if k != "path"} == {k: v for k, v in y.items() if k != "path"}
    assert a["planned"]["plan_sha256"] == b["planned"]["plan_sha256"]
    assert a["frozen"] == b["frozen"]
    assert a["run"]["run_id"] != b["run"]["run_id"]
    assert scrub(a["report"]) == scrub(b["report"])
    assert a["report"]["content_digest"] == b["report"]["content_digest"]
    assert a["report"]["report_digest"] != b["report"]["report_digest"]      # it names its run: VOLATILE says so
    assert scrub(a["calls"]) == scrub(b["calls"])
    assert scrub(a["results"]) == scrub(b["results"])
    grades = [r["grade"] for r in a["results"]["results"]]
    assert all(grades) and grades == [r["grade"] for r in b["results"]["results"]]
    requests = [c["request"] for c in a["calls"]["calls"]]
    assert all(requests) and requests == [c["request"] for c in b["calls"]["calls"]]
    assert {"run_id", "call", "latency_s"} <= set(VOLATILE)
