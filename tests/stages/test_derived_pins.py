"""The offline regrade (IT-6) and the export (IT-7) keep their stored bytes while the rules over a stored
report read it through models (issue 26, item 1): the demo run's live report (tests/stages/test_report_model.py)
regraded and exported builds to the pinned digests, taken from the dict-reading code."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.stages.test_report_model import DATA, _store

from srbench.rules import Engine, MemoryActionCache
from srbench.schemas.report_params import ReportRequest
from srbench.stages.derived import rules as derived
from srbench.stages.report import build as report_build
from srbench.stages.report.rule import build_report


@dataclass(frozen=True)
class _Run:
    """The run as stages/derived reads it (RunFacts)."""

    id: str
    status: str
    mode: str
    plan: str


@pytest.mark.parametrize("kind", ["regrade", "export"])
def test_regrade_and_export_bytes_unchanged(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_build, "VERSION", "0.0.0-pinned")
    monkeypatch.setattr(derived, "VERSION", "0.0.0-pinned")
    demo = json.loads(gzip.decompress(DATA.read_bytes()))
    store = _store(tmp_path, demo)
    engine = Engine(store, MemoryActionCache())
    plan = demo["live"]["plan"]
    request = ReportRequest(run_id="run-demo", plan=plan, status="completed", wall_time_s=12.5)
    report, _, _ = build_report(engine, request, demo["live"]["cells"])
    run = _Run(id="run-demo", status="completed", mode="live", plan=plan)
    digest, hit, _ = derived.regrade(engine, run, report) if kind == "regrade" else derived.export(engine, run, report)
    assert not hit and store.get_json(digest)["run_id"] == "run-demo"
    assert digest == PINNED[kind]


PINNED = {
    "regrade": "b3:bf9387c3a1d97d5cc193dd762a1abb1c8b41ac0b0f960853b261ce219467bd3f",   # issues 41, 43 (item 7, five times): only original_report changed
    "export": "b3:da3a564776a37e6e382a9d12211c7e2b76f0d821c86e6839b9765943a47c0b9e",
}
