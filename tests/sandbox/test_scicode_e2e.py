"""SciCode end to end through the real service: prepare (native JSONL, and the wheel's mirror) → plan
(grading options frozen) → run against the simulated OpenAI endpoint (one journaled call per step) →
grade every scored step in the sandbox (each backend) → report rows, strata, metrics and receipts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.helpers import Api, freeze, manifest, sandbox_api, single
from srbench.benchmarks import get
from srbench.sandbox import scicode_data
from srbench.simulate import scicode_samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.grading import code as code_grade

from .conftest import backend_or_skip

pytest.importorskip("h5py", reason="writing the h5 fixture needs the fidelity extra (h5py)")


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with sandbox_api(tmp_path, monkeypatch) as a:
        yield a


def _prepare(api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int | None = None) -> dict:
    src = scicode_samples.write_scicode(tmp_path / "scicode")
    h5 = src / "test_data.h5"
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(h5))
    (api.store_dir / "benchmark-options.json").write_text(
        json.dumps({"scicode": {"test_data_sha256": scicode_data.file_sha256(h5)}}))
    body = {"benchmark": "scicode", "profile": "quick" if limit else "smoke", "source_path": str(src),
            "revision": "synthetic"}
    if limit:
        body["limit"] = limit
    return api.ok("POST", "/datasets/prepare", body)


def test_prepare_freezes_whole_problems_and_the_plan_freezes_the_grading(api: Api, tmp_path: Path, monkeypatch) -> None:
    ds = _prepare(api, tmp_path, monkeypatch)
    assert ds["case_count"] == 1 and ds["benchmarks"] == ["scicode"] and ds["selection"]["scicode"]["strata"] == "domain"
    assert ds["sources"]["scicode"]["files"][0]["name"] == "problems_test.jsonl"
    with SimulatorThread(models=[SimModel("m", skill=1.0)], answer_key={}) as sim:
        api.ok("POST", "/targets", {"targets": [single("t", sim.v1_url, "m")]})
        plan = freeze(api, manifest(ds, [{"id": "t"}]))
    grading = plan["benchmark_options"]["scicode"]["grading"]
    assert grading["step_timeout_s"] == 60 and grading["test_data_sha256"] != scicode_data.PINNED_SHA256


def test_the_wheel_mirror_prepares_the_standard_profile(api: Api) -> None:
    if get("scicode").offline_mirror is None:
        pytest.skip("no mirror")
    try:
        ds = api.ok("POST", "/datasets/prepare", {"benchmark": "scicode", "profile": "standard", "source": "mirror"})
    except AssertionError as exc:
        if "not installed" in str(exc):
            pytest.skip("the nvidia-scicode wheel is not installed")
        raise
    src = ds["sources"]["scicode"]
    # issue 27: the wheel's problems_all.jsonl is the pinned problems_test.jsonl byte for byte (pins.py)
    assert ds["case_count"] == 20 and src["origin"] == "package" and src["revision"] == get("scicode").source.revision
    assert src["check"] == "file-sha256"
    assert any("offline mirror nvidia-scicode" in n and "content verified against" in n for n in ds["notices"])


def _dispatch_drives_conversations() -> bool:
    import importlib.util
    import inspect

    from srbench.stages.dispatch import calls as dispatch

    return (importlib.util.find_spec("srbench.stages.dispatch.conversations") is not None
            or ".converse(" in inspect.getsource(dispatch))


@pytest.mark.skipif(not _dispatch_drives_conversations(),
                    reason="dispatch does not drive multi-call cells yet (Benchmark.converse; stream mc)")
@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_scicode_run_is_graded_in_the_sandbox(api: Api, tmp_path: Path, monkeypatch, backend: str) -> None:
    code_grade.use_sandbox(backend_or_skip(backend))
    ds = _prepare(api, tmp_path, monkeypatch)
    assert ds["case_count"] == 1
    key = {**load_answer_key(ds["path"]), **scicode_samples.answer_key()}
    with SimulatorThread(models=[SimModel("good", skill=1.0), SimModel("bad", skill=0.0)], answer_key=key) as sim:
        api.ok("POST", "/targets", {"targets": [single("good", sim.v1_url, "good"), single("bad", sim.v1_url, "bad")]})
        plan = freeze(api, manifest(ds, [{"id": "good"}, {"id": "bad"}]))
        run = api.wait(api.ok("POST", "/runs", {"manifest": plan})["id"], timeout=240)
        assert run["status"] == "completed", run
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    by = {t["target_id"]: t for t in rep["summary"]["targets"]}
    assert by["good"]["correct"] == 1 and by["bad"]["correct"] == 0 and by["good"]["cost_usd"] > 0
    rows = {r["target_id"]: r["scicode"] for r in rep["benchmarks"]}
    assert rows["good"]["main_problem_resolve_rate"] == 1.0 and rows["good"]["sub_step_pass_rate"] == 1.0
    assert rows["good"]["sub_steps_scored"] == 3 and rows["good"]["test_data_pinned"] is False
    assert rows["bad"]["sub_steps_passed"] < 3 and rows["bad"]["main_problem_resolve_rate"] == 0.0
    receipts = rep["provenance"]["sandbox_receipts"]
    assert len(receipts) == 1 and receipts[0]["backend"] == backend
    cells = {c["target_id"]: c for c in api.ok("GET", f"/runs/{run['id']}/calls")["calls"]}
    steps = len(ds_case_steps(ds))
    for tid in ("good", "bad"):               # one journaled call per step, each with its own usage and cost
        calls = cells[tid]["calls"]
        assert [c["index"] for c in calls] == list(range(steps)) and all(c["role"] == "subject" for c in calls)
        inputs = [c["usage"]["input"] for c in calls]
        assert inputs == sorted(inputs) and len(set(inputs)) == steps        # each prompt carries the earlier turns
        assert all(c["cost_usd"] > 0 for c in calls)


def ds_case_steps(ds: dict) -> list:
    case = json.loads(Path(ds["path"]).read_text().splitlines()[0])
    return case["answer"]["steps"]
