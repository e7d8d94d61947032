"""The paired section of a run's own report: every router (mom) target of the run against the
strongest single target of the same run, on the same cases — `compare` with the run on both sides.

It is there when a live run plans at least one single and one mom target. It uses the run's
statistics block (claim rule, margin, planning) like `compare`, and a run that stopped early is
analysed on its measured prefix. While cells are still open (or a run ended without an outcome for
some cell) the section says why it is not available instead of showing a partial interval.
"""

from __future__ import annotations

from srbench.errors import InvalidInput
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.plan import Plan
from srbench.schemas.report_paired import PairedInRun, PairedUnavailable
from srbench.schemas.results import StoredRow
from srbench.stages.compare.build import compare_reports

__all__ = ["paired_in_run"]


def paired_in_run(plan: Plan, rows: list[StoredRow], status: str, run_id: str | None,
                  early_stop: EarlyStopRecord | None = None) -> PairedInRun | PairedUnavailable | None:
    """None when the run has no router and single target to pair; otherwise the paired section."""
    kinds = {pt.target.id: pt.target.kind for pt in plan.targets}
    if plan.mode != "live" or "single" not in kinds.values() or "mom" not in kinds.values():
        return None
    stop = None if early_stop is None else early_stop.dump()
    stub = {"kind": "report", "run_id": run_id, "status": status, "mode": "live", "early_stop": stop,
            "provenance": {"plan_sha256": plan.plan_sha256}}
    try:
        cmp = compare_reports(stub, rows, plan, stub, rows, plan)
    except InvalidInput as exc:
        return PairedUnavailable(reason=exc.message)
    return PairedInRun.of(cmp, {t for t, k in kinds.items() if k == "mom"})
