"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones), for 18
(issue 43; set back to "17", they are issue 41's), for 19 (issue 43, item 7; set back to "18", item 7's first part)
for 20 (issue 43, item 7: uneven bets in the planning; set back to "19", they are 19's) and for 21 (issue 43,
item 7: the K step's common control; set back to "20", they are 20's) and for 22 (issue 43, item 7: an
inconclusive in-run claim sized per benchmark; set back to "21", they are 21's) and for 23 (issue 43, item 7:
the planning's earlier-prefix share ρ(J, D); set back to "22", they are 22's)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:4709ee0ecdde20474e0ccdf49523aee4de9d4dce1a6cf0eb102382ebf3732437",
        "b3:3c76ef156d10fa4678c0c67ca6ced1e35ee4f66a4187fb503d4ce9542d93dc9e")
    assert row_context({"plan": r.plan}) == "b3:21fc9ab7dd55b06572abf647f4edb5b0d5335288ae5e5ba9296a4a9abb881b63"
