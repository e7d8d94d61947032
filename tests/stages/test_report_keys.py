"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones), for 18
(issue 43; set back to "17", they are issue 41's), for 19 (issue 43, item 7; set back to "18", item 7's first part)
for 20 (issue 43, item 7: uneven bets in the planning; set back to "19", they are 19's) and for 21 (issue 43,
item 7: the K step's common control; set back to "20", they are 20's) and for 22 (issue 43, item 7: an
inconclusive in-run claim sized per benchmark; set back to "21", they are 21's)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:adc87a04dad3703a7f13a0e901db1a2fdb98b350f9bfa49646d2e840e2c80a14",
        "b3:ebed0c9c6d879fbd9f89028fd20a902a081dfd81b6a833891b998da707ecebee")
    assert row_context({"plan": r.plan}) == "b3:d50504daa0f21b2189233b6077fff7e287a7040dfb1a45c92afaf8deb0d45f04"
