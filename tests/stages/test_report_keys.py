"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones), for 18
(issue 43; set back to "17", they are issue 41's), for 19 (issue 43, item 7; set back to "18", item 7's first part)
for 20 (issue 43, item 7: uneven bets in the planning; set back to "19", they are 19's) and for 21 (issue 43,
item 7: the K step's common control; set back to "20", they are 20's)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:dbb121e74ffa6b11d2c4b157ca3a0be4389bd2ef7fd845dc88400f40706fafde",
        "b3:4037665165865ea113ef6bb1febb3d7fa16e57f9c6caaa561b2b5965cb70c516")
    assert row_context({"plan": r.plan}) == "b3:df8b6fe5c5b1b20a2194782c6ba874f5c79b26212b475c7656d449afa3956d33"
