"""LiveCodeBench end to end through the real service: prepare (native JSONL) → plan → run against the
simulated OpenAI endpoint → grade in the sandbox (each backend) → report with strata and receipts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.helpers import Api, freeze, manifest, sandbox_api, single
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.grading import code as code_grade

from .conftest import backend_or_skip


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with sandbox_api(tmp_path, monkeypatch) as a:
        yield a


@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_livecodebench_run_is_graded_in_the_sandbox(api: Api, tmp_path: Path, backend: str) -> None:
    code_grade.use_sandbox(backend_or_skip(backend))
    src = samples.write_livecodebench(tmp_path / "lcb")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "smoke",
                                             "source_path": str(src), "revision": "synthetic"})
    assert ds["case_count"] == 2
    models = [SimModel("coder-good", skill=1.0), SimModel("coder-bad", skill=0.0)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("good", sim.v1_url, "coder-good"),
                                                single("bad", sim.v1_url, "coder-bad")]})
        plan = freeze(api, manifest(ds, [{"id": "good"}, {"id": "bad"}]))
        assert plan["benchmark_options"]["livecodebench"]["grading"]["test_timeout_s"] == 6
        run = api.wait(api.ok("POST", "/runs", {"manifest": plan})["id"], timeout=60)
        assert run["status"] == "completed", run
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    by = {t["target_id"]: t for t in rep["summary"]["targets"]}
    assert by["good"]["correct"] == 2 and by["bad"]["correct"] == 0
    assert by["good"]["cost_usd"] > 0 and by["bad"]["grade_statuses"] == {"incorrect": 2}
    rows = {r["target_id"]: r for r in rep["benchmarks"]}
    lcb = rows["good"]["livecodebench"]
    assert lcb["pass_at_1"] == 1.0 and set(lcb["pass_at_1_by_difficulty"]) <= {"easy", "medium", "hard"}
    assert rows["bad"]["livecodebench"]["verdicts"] == {"wrong_answer": 2}
    for tid, want in (("good", 1.0), ("bad", 0.0)):     # the published pass@1, from the same sandbox grades
        pub = rows[tid]["published"]
        assert pub["rule"] == "livecodebench-pass-at-1-v1" and pub["score"] == want and pub["graded_differently"] == 0
    assert {r["published_score"] for r in api.ok("GET", f"/runs/{run['id']}/results")["results"]} == {0.0, 1.0}
    receipts = rep["provenance"]["sandbox_receipts"]
    assert len(receipts) == 1 and receipts[0]["backend"] == backend and len(receipts[0]["rootfs_digest"]) == 64
    again = api.ok("GET", f"/runs/{run['id']}/report")
    assert again["cache_hit"] is True


def test_without_a_sandbox_the_cells_are_ungraded_not_wrong(api: Api, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SR_BENCH_SANDBOX_DIR", str(tmp_path / "no-sandbox"))
    code_grade.use_sandbox(None)
    src = samples.write_livecodebench(tmp_path / "lcb")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "smoke",
                                             "source_path": str(src), "revision": "synthetic"})
    with SimulatorThread(models=[SimModel("coder", skill=1.0)], answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("coder", sim.v1_url)]})
        run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "coder"}]))})["id"],
                       timeout=60)
    got = api.ok("GET", f"/runs/{run['id']}/report")
    t = got["summary"]["targets"][0]
    assert t["failure_classes"] == {"sandbox_error": 2} and t["correct"] == 0
    assert got["complete"] is False
    pub = got["benchmarks"][0]["published"]         # ungraded cells: no program ran, 0 under pass@1 too
    assert pub["rule"] == "livecodebench-pass-at-1-v1" and pub["score"] == 0.0 and pub["n"] == 2
    assert api.ok("GET", f"/runs/{run['id']}/report")["cache_hit"] is False      # graded again next time


def test_a_real_sandbox_runs_once_per_cell(api: Api, tmp_path: Path) -> None:
    """Issue 31 on a real backend (bubblewrap, else Docker): 30 cells, 30 sandbox runs, all by the
    grading pool while the run went on or before its report."""
    from service.sandbox_fakes import CountingSandbox

    try:
        real = backend_or_skip("bwrap")
    except pytest.skip.Exception:
        real = backend_or_skip("docker")
    counting = CountingSandbox(inner=real)
    code_grade.use_sandbox(counting)
    src = samples.write_livecodebench(tmp_path / "lcb", copies=8)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "quick",
                                             "source_path": str(src), "revision": "synthetic"})
    with SimulatorThread(models=[SimModel("coder", skill=1.0, latency_s=0.1)],
                         answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("coder", sim.v1_url)]})
        run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "coder"}]))})["id"],
                       timeout=120)
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    assert rep["summary"]["targets"][0]["correct"] == 30
    assert len(counting.runs) == 30
    assert {r["thread"].rsplit("-", 1)[0] for r in counting.runs} == {"sr-bench-grade"}
