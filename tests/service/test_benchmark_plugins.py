"""Issue 39, item 7: benchmark plugins. `tests/benchmarks/plugin_example/` is an installed package as pip leaves it
(the module and its dist-info, whose entry_points.txt names a `Benchmark` in the ``srbench.benchmarks`` group),
put on the path. The catalog lists it as a plugin with its version; a manifest selects it by id; it is prepared,
run, graded and reported like any benchmark; it is never counted in the nine-benchmark full score."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.stages.rows import result_row
from tests.stages.test_full_score import nine

from srbench import benchmarks
from srbench.simulate.behaviour import load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.report.full_score import full_score

from .helpers import Api, freeze, manifest, single

PACKAGE = Path(__file__).resolve().parents[1] / "benchmarks" / "plugin_example"


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[benchmarks.plugin_loader.Loaded]:
    """The example plugin installed in this process (and in the processes it starts) for one test."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(PACKAGE), os.environ.get("PYTHONPATH", "")]))
    sys.path.insert(0, str(PACKAGE))
    try:
        yield benchmarks.reload_plugins()
    finally:
        sys.path.remove(str(PACKAGE))
        benchmarks.reload_plugins()


def test_a_plugin_is_found_by_its_entry_point_and_is_never_one_of_the_nine(installed) -> None:
    assert list(installed.benchmarks) == ["example-colours"] and installed.problems == []
    origin = installed.origins["example-colours"]
    assert (origin.package, origin.version) == ("srbench-example-plugin", "0.1.0")
    assert origin.entry_point == "example-colours = srbench_example_plugin:Colours"
    assert benchmarks.get("example-colours").grader_version == "example-mcq-v1"
    assert benchmarks.is_plugin("example-colours") and not benchmarks.is_plugin("mmlu-pro")
    assert "example-colours" not in {b.id for b in benchmarks.all_benchmarks()}
    # the full score is the nine's: a plugin's rows (all wrong here) change nothing
    by = nine()
    alone = full_score(by)
    with_plugin = full_score({**by, "example-colours": [result_row(state="completed", correct=False)] * 5})
    assert with_plugin == alone and alone.sr_bench_score is not None


def test_without_it_installed_it_is_unknown(api: Api) -> None:
    assert "example-colours" not in benchmarks.plugins().benchmarks
    assert "unknown benchmark 'example-colours'" in api.error("POST", "/datasets/prepare", {
        "benchmark": "example-colours", "profile": "smoke", "source_path": str(PACKAGE / "colours.json"),
        "revision": "v1"}, 400)


def test_the_catalog_lists_it_and_a_manifest_runs_it(installed, api: Api, sim: SimulatorThread) -> None:
    catalog = api.ok("GET", "/catalog")
    entry = next(b for b in catalog["benchmarks"] if b["id"] == "example-colours")
    assert entry["plugin"] == {"package": "srbench-example-plugin", "version": "0.1.0",
                               "entry_point": "example-colours = srbench_example_plugin:Colours"}
    assert len([b for b in catalog["benchmarks"] if "plugin" not in b]) == 9
    assert catalog["totals"]["smoke"] == sum(b["profiles"]["smoke"] for b in catalog["benchmarks"] if "plugin" not in b)
    assert "never part of the full score" in catalog["weights_note"] and "plugin_problems" not in catalog
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "example-colours", "profile": "smoke",
                                              "source_path": str(PACKAGE / "colours.json"), "revision": "v1"})
    assert ds["benchmarks"] == ["example-colours"] and ds["case_count"] == 4
    assert sim.server is not None
    sim.server.answer_key = load_answer_key(ds["path"])
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    plan = freeze(api, manifest(ds, [{"id": "strong"}]))
    assert plan["grader_versions"] == {"example-colours": "example-mcq-v1"}
    assert plan["adapter_versions"] == {"example-colours": "example-colours-0.1"}
    status, run = api.post("/runs", {"manifest": plan, "idempotency_key": "plugin-1"})
    assert status == 201 and api.wait(run["id"])["status"] == "completed"
    report = api.ok("GET", f"/runs/{run['id']}/report")
    (target,) = report["summary"]["targets"]
    assert target["total"] == 4 and target["correct"] > 0 and target["sr_bench_score"] is None
    assert set(target["missing_benchmarks"]) == {b.id for b in benchmarks.all_benchmarks()}   # the nine's, not it


def test_a_plugin_that_breaks_the_contract_is_left_out_and_named(tmp_path: Path) -> None:
    dist = tmp_path / "srbench_bad_plugins-2.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: srbench-bad-plugins\nVersion: 2.0\n")
    (dist / "entry_points.txt").write_text("[srbench.benchmarks]\nbroken = no_such_module_here:Bench\n"
                                          "clash = srbench.benchmarks.mmlu_pro:MmluPro\n"
                                          "notone = srbench.benchmarks.contract:Grade\n")
    sys.path.insert(0, str(tmp_path))
    try:
        loaded = benchmarks.reload_plugins()
        doc = benchmarks.catalog()
    finally:
        sys.path.remove(str(tmp_path))
        benchmarks.reload_plugins()
    assert loaded.benchmarks == {} and len(loaded.problems) == 3
    broken, clash, notone = loaded.problems
    assert broken.startswith("plugin broken = no_such_module_here:Bench (srbench-bad-plugins 2.0) was not loaded: "
                             "ModuleNotFoundError")
    assert "its id mmlu-pro is one of the nine benchmarks'" in clash
    assert "not a srbench.benchmarks.base.Benchmark" in notone
    assert doc["plugin_problems"] == loaded.problems and len(doc["benchmarks"]) == 9
