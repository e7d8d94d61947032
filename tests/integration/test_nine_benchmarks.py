"""End to end over every benchmark this host can run (native fixtures, simulated endpoints, the real
service in process): the report gives the full sr-bench score with its interval once all nine run;
until then it names exactly the benchmarks that are missing, and the test says which and why."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from srbench.benchmarks import all_benchmarks
from srbench.cli.demo import run_demo


def test_all_available_benchmarks_end_to_end_and_the_full_score(tmp_path: Path, monkeypatch) -> None:
    for name in ("SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_OBJECTS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    out = io.StringIO()
    report = run_demo(tmp_path / "demo", False, Console(file=out, width=200))
    text = out.getvalue()
    assert report["status"] == "completed", text[-3000:]
    ran = {b["benchmark"] for b in report["benchmarks"]}
    nine = [b.id for b in all_benchmarks()]
    assert "tau3" in ran and {"mmlu-pro", "gpqa-diamond", "hle", "simpleqa-verified", "arc-agi-2"} <= ran
    (mom,) = report["summary"]["targets"]
    tau = next(b for b in report["benchmarks"] if b["benchmark"] == "tau3")
    assert tau["total"] == 3 and tau["completed"] == 3 and tau["pass_hat_1"] == tau["accuracy"]
    missing = [b for b in nine if b not in ran]
    for b in missing:
        assert f"{b}: not run here" in text
    if missing:
        assert mom["sr_bench_score"] is None and mom["missing_benchmarks"] == missing
        assert "no full sr-bench score" in text and "missing: " + ", ".join(missing) in text
        pytest.skip(f"no full sr-bench score on this host: {', '.join(missing)} cannot run here (see the demo's "
                    "reasons); the missing list was checked")
    lo, hi = mom["sr_bench_score_ci95"]
    assert mom["sr_bench_score"] is not None and lo < hi and lo <= mom["sr_bench_score"] <= hi
    assert "SIMULATED" in text and "sr-bench score" in text
