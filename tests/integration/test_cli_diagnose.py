"""The diagnose section of `sr-bench compare --diagnose` (issue 43): its headline lines and its CSV export, from
the hand-computed diagnosis of tests/stages/test_diagnose.py."""

from __future__ import annotations

import csv
import json

from tests.stages.test_diagnose import _headers, _runs

from srbench.cli.diagnose import diagnose_lines, write_diagnosis
from srbench.stages.compare.diagnose import diagnose


def _doc() -> dict:
    return diagnose(*_runs(), headers_of=_headers).dump()


def test_the_lines_say_each_figure() -> None:
    text = "\n".join(diagnose_lines(_doc()))
    assert "oracle ceiling 1.000" in text and "cheapest-correct oracle: the same accuracy for $0.2200" in text
    assert "best single dear 0.700" in text and "mom: 0.500 for $0.3500; captures -66.7 %" in text
    assert "optimal selection 66.7 %" in text and "optimal cost 70.0 %" in text and "elsewhere: model-other ×1" in text
    assert "latency p50 +0.500 s p95 +0.950 s (3 pairs)" in text and "losses: 2 cases" in text


def test_the_export_is_the_outcome_matrix_as_csv_or_the_document_as_json(tmp_path) -> None:
    doc = _doc()
    write_diagnosis(str(tmp_path / "d.csv"), doc)
    rows = list(csv.DictReader(open(tmp_path / "d.csv")))
    assert [r["case_id"] for r in rows] == ["g1", "g2", "m1", "m2"]      # case id order
    m2 = rows[3]
    assert (m2["served_model"], m2["router_correct"], m2["cheapest_correct"], m2["loss_single"]) == \
        ("model-dear", "False", "dear", "dear")
    assert (m2["cheap_correct"], m2["dear_correct"], m2["dear_cost_usd"]) == ("False", "True", "0.1")
    assert rows[1]["served_single"] == "" and rows[1]["optimal"] == ""          # g2 went elsewhere
    write_diagnosis(str(tmp_path / "d.json"), doc)
    assert json.load(open(tmp_path / "d.json")) == doc
