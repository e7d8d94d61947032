"""The journal's typed repository functions (issue 26, item 4): rows come back as their models, writes go
through the writer, and a row that breaks its model is refused rather than passed on."""

from __future__ import annotations

import pydantic
import pytest

from srbench.service.journal import cell_rows, runs
from srbench.service.journal.run_end import end_run
from srbench.service.journal.runs import ReportHead, RunRow
from srbench.service.journal.writer import Journal


def _run(run_id: str, **kw) -> RunRow:
    fields = dict(id=run_id, name="n", mode="live", profile=None, plan="b3:" + "1" * 64, plan_sha256="s", status="queued",
                  idem_key=None, parent=None, total=2, targets='["t"]', created_at=1.0, started_at=None,
                  finished_at=None, updated_at=1.0, error=None, cancel_requested=0, extra="{}")
    return RunRow(**(fields | kw))


def test_run_lifecycle_round_trip(tmp_path) -> None:
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        def create(c) -> None:
            runs.insert_run(c, _run("run-a", idem_key="k"))
            runs.insert_cells(c, [("run-a", f"c{i}", i, f"case{i}", "t", "pending", 1.0) for i in range(2)])
            runs.insert_budget(c, "run-a", 2.5)
        j.submit_sync(create)
        assert runs.run_row(j, "run-a") == _run("run-a", idem_key="k")
        assert runs.idem_binding(j, "k") == ("run-a", "s") and runs.idem_binding(j, "other") is None
        assert [c.cell_id for c in runs.pending_cells(j, "run-a")] == ["c0", "c1"]
        assert runs.state_counts(j, "run-a") == {"pending": 2}
        assert runs.budget(j, "run-a") == (2.5, 0.0, 0.0, 0)
        assert j.submit_sync(lambda c: runs.mark_running(c, "run-a", 2.0)) is True
        assert j.submit_sync(lambda c: runs.mark_running(c, "run-a", 3.0)) is False     # only a queued run starts
        j.submit_sync(lambda c: runs.set_extra(c, "run-a", "final_report", "b3:x"))
        j.submit_sync(lambda c: end_run(c, "run-a", "failed", "stopped", "why", None))
        row = runs.run_row(j, "run-a")
        assert row is not None and (row.status, row.error, row.started_at) == ("failed", "stopped", 2.0)
        assert row.extras() == runs.RunExtras(final_report="b3:x")
        assert [c.state for c in cell_rows.run_cells(j, "run-a", ordered=True)] == ["pending", "pending"]
        head = ReportHead("sig", "rsig", "b3:r", "b3:res")
        j.submit_sync(lambda c: runs.put_report_head(c, "run-a", head))
        assert runs.report_head(j, "run-a") == head
        assert [r.id for r in runs.runs_page(j, 10)] == ["run-a"] and runs.runs_page(j, 10, (1.0, "run-a")) == []
    finally:
        j.close()


def test_a_row_outside_its_model_is_refused(tmp_path) -> None:
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        j.submit_sync(lambda c: runs.insert_run(c, _run("run-b")))
        j.submit_sync(lambda c: c.execute("UPDATE runs SET status='exploded' WHERE id='run-b'"))
        with pytest.raises(pydantic.ValidationError):
            runs.run_row(j, "run-b")
    finally:
        j.close()
