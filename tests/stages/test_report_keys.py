"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones) and for 18
(issue 43; set back to "17", they are issue 41's)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:76b9df0f8b1afa08bf13c5b81b3d668120fa5b14c220ab6590498a7e42e16674",
        "b3:06451cf853284a86cfcaa5a4524a70b72a283e9c18b872a1c6a014d961abc9ce")
    assert row_context({"plan": r.plan}) == "b3:12bef6570b7c4179abd6da6e1faecd69587d68e55d0f2ce2279c09b5104692e6"
