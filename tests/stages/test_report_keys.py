"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:a9bd30a10279325906bfcfd7ee14ba0ad320d1cad243a4f937252354d2f588b5",
        "b3:853fd4a5cc17be013e9fa3e5d0d9682f819bcf062418ecda40dc1a2775e07581")
    assert row_context({"plan": r.plan}) == "b3:aff331925beb7dc02b7479de8ab45f10927a162745f2675f95e3d40e7f69fb00"
