"""A report's per-cell rows are `ResultRow` models (issue 26, item 1): every stored row of the pinned demo
reports (tests/stages/test_report_model.py) validates into the model and dumps back to the same bytes, the
fields a cell does not have staying absent; what the statistics stages return dumps to the dicts of before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.stages.test_report_model import CASES, _plan, _store, demo  # noqa: F401 - `demo` is a fixture

from srbench.cas import canonical_json
from srbench.rules import Engine, MemoryActionCache
from srbench.schemas.report_params import ReportRequest
from srbench.schemas.results import ResultRow
from srbench.stages.report import build as report_build
from srbench.stages.report.results import all_rows
from srbench.stages.report.rule import build_report
from srbench.stages.stats.stopping import statistics_of


@pytest.mark.parametrize("case", ["live", "live-cancelled", "preview", "replay"])
def test_stored_rows_round_trip_through_the_model(case: str, demo: dict[str, Any], tmp_path: Path,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_build, "VERSION", "0.0.0-pinned")
    run, status, kw = CASES[case]
    store = _store(tmp_path, demo)
    request = ReportRequest(run_id="run-demo", plan=_plan(store, demo[run]["plan"], case), status=status,
                            wall_time_s=12.5, **kw)
    digest, _, _ = build_report(Engine(store, MemoryActionCache()), request, demo[run]["cells"])
    rows = all_rows(store, store.get_json(digest)["results"])
    assert len(rows) == len(demo[run]["cells"])
    for row in rows:
        model = ResultRow.model_validate(row)
        assert model.dump() == row and canonical_json(model.dump()) == canonical_json(row)
    keys = [set(r) for r in rows]
    if case == "preview":
        assert all("routing" in k and "needs_real_run" in k for k in keys if "call" in k)
    else:    # a router's attribution only on its rows, a single call's figures only where there is a call
        assert any("router" in k for k in keys) and any("router" not in k for k in keys)
        assert all(("cost_basis" in k) == (r["call"] is not None) for k, r in zip(keys, rows, strict=True))


def test_the_statistics_block_dumps_as_before() -> None:
    assert statistics_of({}).dump() == {
        "claim_rule": "hoeffding", "margin": None, "primary_benchmarks": None,
        "planning": {"effect": 0.05, "tie_rate": 0.5, "power": 0.8}, "early_stop": None}
    adjusted = statistics_of({"statistics": {"claim_rule": "betting", "baseline_selection": "adjusted",
                                             "early_stop": {}, "margin": 0.02}})
    assert adjusted.dump() == {
        "claim_rule": "betting", "margin": 0.02, "primary_benchmarks": None,
        "planning": {"effect": 0.05, "tie_rate": 0.5, "power": 0.8}, "early_stop": {"baseline_run": None},
        "baseline_selection": "adjusted"}
    assert adjusted.early_stop is not None and adjusted.planning.power == 0.8
