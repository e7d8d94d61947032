"""The report rule's keys do not change while its inputs and params become models (issue 26, item 1): the
report signature, the results signature and the row memo's context of a request with every optional part
(corrections, early stop, recipes, probes) are the ones the dict-typed code computed (taken at f167344), re-taken
once for report rule 17 (issue 41; with the version set back to "16" the keys are the earlier ones)."""

from __future__ import annotations

from tests.stages.test_report_model import PROBES, RECIPES, STOP

from srbench.schemas.report_params import ReportRequest
from srbench.stages.report.rule import report_signature, row_context


def test_report_keys_unchanged() -> None:
    r = ReportRequest(run_id="r", plan="b3:" + "a" * 64, status="completed", wall_time_s=3.5,
                      correction="b3:" + "c" * 64, correction_at=12.0, price_correction="b3:" + "d" * 64,
                      early_stop=STOP, recipes=RECIPES, config_probes=PROBES)
    assert report_signature(r, 7) == (
        "b3:044a9bd726ee48383cc6cd39b813783f3dca3a4ac36acb7f39216fe3afac14e0",
        "b3:2e06c482dc9323f0d1679d550c836b000282048479d168dd0a74a1433acb3d92")
    assert row_context({"plan": r.plan}) == "b3:2d267176747cfeb799c1be68c12c59a045236c4c0aea215d7e7b6db5fe75e88a"
