"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones), for 18
(issue 43; set back to "17", they are issue 41's), for 19 (issue 43, item 7; set back to "18", item 7's first part)
and for 20 (issue 43, item 7: uneven bets in the planning; set back to "19", they are 19's)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:5b5eba10d42b74fafb01e8febab19df7a2dd3f5d35bb55f8e965a5933fd43b4e",
        "b3:f569a586926d66022112c4050654e51192ed181e74df92b2a91f92db1d8ff594")
    assert row_context({"plan": r.plan}) == "b3:b2b7ebeedc10d2eafa87a516eb7de15fb776f2a5ba659cb3341efd2f0bca6a0f"
