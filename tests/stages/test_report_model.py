"""The report (kind ``report``) keeps its stored bytes (issue 26, items 1 and 6): a demo-sized run's
inputs (tests/stages/data/report_demo.json.gz: a live run of a single and a router target on MMLU-Pro
and ARC-AGI-2, and a preview run, as the service stored them; the live plan also as a replay and as a
recovery child) build to the pinned report digests.
The pins were taken from the dict-literal report code before the report became a model."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from srbench.cas import ObjectStore
from srbench.rules import Engine, MemoryActionCache
from srbench.schemas.report_params import ReportRequest
from srbench.stages.report import build as report_build
from srbench.stages.report import rule
from srbench.stages.report.cells import ReportInputs, cell_row, memo_entry
from srbench.stages.report.rule import build_report

DATA = Path(__file__).parent / "data" / "report_demo.json.gz"
STOP = {"rule": "betting", "method": "stratified-betting-cs", "order": "benchmark-interleave-v1", "reason": "settled",
        "summary": "mom vs strong: inferior", "question": "sign", "margin": None, "decided_at_cases": 4,
        "planned_cases": 8, "decided_at": 1700000000.5,
        "decisions": [{"state": "settled", "verdict": "inferior", "question": "sign", "threshold": 0.0, "n": 4,
                       "lower": -0.9, "upper": -0.1, "best_lower": -0.8, "worst_upper": -0.2, "target_id": "mom",
                       "baseline_target_id": "strong"}],
        "baseline": "strongest single target of this run", "cells_not_sent": 6,
        "cells_not_sent_by_target": {"mom": 3, "strong": 3}, "subject_calls_not_sent": 6,
        "estimated_saving_usd": 0.0123, "saving_basis": "each target's mean known cost per settled cell"}
RECIPES = {"mom": {"status": "captured", "capture": "b3:" + "c" * 64, "projection_hash": "d" * 64,
                   "limitation": "the config changed during the run", "held_during_run": False}}
PROBES = {"mom": {"before": {"evidence": "mismatch", "seen": "cfg-42", "probe": "answered"}}}
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "live": ("live", "completed", {}),
    "live-cancelled": ("live", "cancelled", {"early_stop": STOP, "recipes": RECIPES}),
    "live-running": ("live", "running", {"config_probes": PROBES}),
    "live-stopped": ("live", "completed", {"early_stop": STOP}),     # the paired section reads the stop
    "preview": ("preview", "completed", {}),
    "replay": ("live", "completed", {}),              # the live plan as a replay, as a recovery child, both
    "recovery": ("live", "completed", {}),
    "replay-recovery": ("live", "completed", {}),
}
RECOVERY = {"parent": "run-parent", "mode": "failed", "cells": ["a", "b"], "cells_sha256": "x",
            "snapshot": {"status": "failed", "plan_sha256": "p" * 64, "total": 8, "known_cost_usd": 0.5},
            "recovery_plan_sha256": "r" * 64}


def _plan(store: ObjectStore, digest: str, case: str) -> str:
    """The run's plan, or a variant of it: replay mode and/or a recovery child (same cells)."""
    if case not in ("replay", "recovery", "replay-recovery"):
        return digest
    plan = store.get_json(digest)
    if "replay" in case:
        plan["mode"] = "replay"
    if "recovery" in case:
        plan["recovery"] = RECOVERY
    return store.put_json(plan)


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    return json.loads(gzip.decompress(DATA.read_bytes()))


def _store(tmp_path: Path, demo: dict[str, Any]) -> ObjectStore:
    store = ObjectStore(str(tmp_path / "cas"))
    for digest, data in demo["objects"].items():
        assert store.put_bytes(base64.b64decode(data)) == digest
    return store


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_bytes_unchanged(case: str, demo: dict[str, Any], tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_build, "VERSION", "0.0.0-pinned")
    run, status, kw = CASES[case]
    store = _store(tmp_path, demo)
    engine = Engine(store, MemoryActionCache())
    plan = _plan(store, demo[run]["plan"], case)
    request = ReportRequest(run_id="run-demo", plan=plan, status=status, wall_time_s=12.5, **kw)
    digest, hit, _ = build_report(engine, request, demo[run]["cells"])
    assert not hit
    report = store.get_json(digest)
    assert report["kind"] == "report" and report["status"] == status
    assert digest == PINNED[case], json.dumps(report, sort_keys=True)[:2000]


PINNED = {
    "live": "b3:1eaa0b0a02a0b74c0e59412a63457c3c20e7001f960f4d49379aad929bbcdc31",   # issue 43 item 7: the planning's share ρ(J, D) (before: b3:4ec743b0…, sized per benchmark; b3:66ab7f98…, the K step's model named; b3:3f403e72…, W⁺ moments: b3:242c8eef…; issue 41: b3:763ea4e5…)
    "live-cancelled": "b3:96fc3970055d9cc3cb1727bf80482afac91732dcf05329782041778bf9157a8d",   # realistic recipes and stop, dict code
    "live-stopped": "b3:1eff788ffbfccdae4246e974b4dc32d9f23bb7c8a7f86802292262049445d8e5",  # realistic stop, dict code; issue 41 and 43 as live
    "live-running": "b3:c39cfde737c9cea3dd0bbe48f450528cab91ef412ce83a91810fdd54f18562da",   # realistic probes, dict code
    "preview": "b3:0c408dcabe0e6e4c12a71381fd497afc4c65a295064a8584b407693601a9db44",
    "replay": "b3:148716efc629d708a393002153eb2d815ae7a5853599b09c36a270d4e86103b8",
    "recovery": "b3:494482a3dd7ce8014580280f3be1ee9b6307d715f1e0c8fbdbb3d5c9c1783b78",      # realistic block, dict code; issue 41 and 43 as live
    "replay-recovery": "b3:44c40676f1fdf7f3ced76061f0879661999f7c6054d30584abe5cbd018242ca4",
}


class _Memo:
    """A row memo (stages/report/cells.py RowMemo) held in a dict, as service/runs/report_rows.py holds it."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.read = 0

    def rows(self, run_id: str, ctx: str, target_id: str) -> dict[str, Any]:
        got = dict(self.entries.get((run_id, ctx, target_id), {}))
        self.read += len(got)
        return got


def test_the_row_memo_is_the_rules_input_cache(demo: dict[str, Any], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows memoised under the rule's row context give the same report; under another version of the
    rule (the one version of every report cache) they are not read."""
    monkeypatch.setattr(report_build, "VERSION", "0.0.0-pinned")
    store = _store(tmp_path, demo)
    engine = Engine(store, MemoryActionCache())
    request = ReportRequest(run_id="run-demo", plan=demo["live"]["plan"], status="completed", wall_time_s=12.5)
    ctx = rule.row_context({"plan": request.plan})
    ri = ReportInputs.load(store, {"plan": request.plan})
    memo = _Memo()
    for cell_id, cell in demo["live"]["cells"].items():
        entry = memo_entry(cell, cell_row(engine, ri, cell_id, cell))
        memo.entries.setdefault(("run-demo", ctx, cell[2]), {})[cell_id] = entry
    digest, _, _ = build_report(Engine(store, MemoryActionCache()), request, demo["live"]["cells"], memo=memo)
    assert digest == PINNED["live"] and memo.read == len(demo["live"]["cells"])
    sig = rule.report_signature(request, 7)
    monkeypatch.setattr(rule, "REPORT_RULE_VERSION", "test-bump")
    assert rule.row_context({"plan": request.plan}) != ctx          # the memo's rows are not read again
    assert rule.report_signature(request, 7) != sig                 # nor the run's report head
    assert rule.make_report_rule(engine).version == "test-bump"     # nor the action cache's entry
