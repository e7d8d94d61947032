"""IT-6 regrade (offline, MCQ/grid only, zero calls, originals untouched) and IT-7 export (dev only)."""

from __future__ import annotations

from srbench.benchmarks.mmlu_pro import MmluPro

from .helpers import freeze, manifest, single


def _run(api, sim, ds, tid="strong", model="sim-strong") -> str:
    api.ok("POST", "/targets", {"targets": [single(tid, sim.v1_url, model)]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": tid}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    return run_id


def test_regrade_is_offline_and_reports_changes(api, sim, prepare, monkeypatch) -> None:
    run_id = _run(api, sim, prepare("mmlu-pro"))
    n = len(sim.log)
    first = api.ok("POST", f"/runs/{run_id}/regrade", {})
    assert first["changed_count"] == 0 and first["model_requests"] == 0
    assert api.ok("POST", f"/runs/{run_id}/regrade", {})["cache_hit"] is True
    original = api.ok("GET", f"/runs/{run_id}/report")
    # a new grader version that marks everything wrong: regrade sees the changes, the run's
    # original report (recorded when it ended) is unchanged
    monkeypatch.setattr(MmluPro, "grader_version", "sr-bench-mcq-final-test")
    real = MmluPro.grade

    def harsh(self, case, text):
        g = real(self, case, text)
        g.correct, g.status = False, "incorrect"
        return g
    monkeypatch.setattr(MmluPro, "grade", harsh)
    again = api.ok("POST", f"/runs/{run_id}/regrade", {})
    r = again
    assert again["cache_hit"] is False and "graders" in again["explain"]
    assert r["changed_count"] == original["summary"]["targets"][0]["correct"] > 0
    assert r["original_report"] == first["original_report"]
    assert len(sim.log) == n, "regrade must not call a model"


def test_regrade_refuses_judged_benchmarks(api, service, sim, tmp_path) -> None:
    from srbench.simulate import samples

    src = samples.write_simpleqa(tmp_path / "sq")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    import json

    (service.store_dir / "benchmark-options.json").write_text(json.dumps(
        {"simpleqa-verified": {"judge": "judge", "grader_version": "sr-bench-reference-judge-v1"}}))
    api.ok("POST", "/targets", {"targets": [single("judge", sim.v1_url, "sim-strong")]})
    run_id = _run(api, sim, ds, "weak", "sim-weak")
    msg = api.error("POST", f"/runs/{run_id}/regrade", {}, 400, "regrade_unsupported")
    assert "simpleqa-verified" in msg


def test_export_dev_only(api, sim, prepare, sources) -> None:
    run_id = _run(api, sim, prepare("mmlu-pro"))
    ex = api.ok("POST", f"/runs/{run_id}/export", {})
    assert ex["split"] == "dev" and len(ex["cases"]) == 14
    row = ex["cases"][0]
    assert set(row) >= {"case_id", "messages", "targets"} and "answer" not in row
    assert row["targets"][0]["answer"] and row["targets"][0]["request_params"]["temperature"] == 0
    api.error("POST", "/runs/run-nope/export", {}, 404)


def test_export_refuses_holdout(api, sim, tmp_path) -> None:
    from srbench.simulate import samples

    src = samples.write_gpqa(tmp_path / "gpqa-big", rows=200)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "gpqa-diamond", "profile": "standard",
                                              "source_path": str(src), "revision": "synthetic"})
    assert ds["split"] == "holdout" and ds["case_count"] == 158
    run_id = _run(api, sim, ds)
    msg = api.error("POST", f"/runs/{run_id}/export", {}, 400, "export_refused")
    assert "holdout" in msg
