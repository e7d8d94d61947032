"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones), for 18
(issue 43; set back to "17", they are issue 41's) and for 19 (issue 43, item 7; set back to "18", item 7's first part)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:ff826aa2a32d0beffc04dc92a32f8f9293ff5037fb4493fc5f089e2f18897ec4",
        "b3:0e1dd1f1b1dacbd2b86a038339a515b4ee16d914fa4bc53e63c25322e02ae3b2")
    assert row_context({"plan": r.plan}) == "b3:20373294d447a6d23bab8457840733e6fba4e2a23c1be1d61beaffe75c7fe2a7"
