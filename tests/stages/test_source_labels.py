"""Issue 27 item 1: what a plan freezes about each benchmark's source, and the lines it prints."""

from __future__ import annotations

from srbench.benchmarks.mmlu_pro import MmluPro
from srbench.benchmarks.terminal_bench.adapter import TerminalBench21
from srbench.schemas.dataset import SourceRecord
from srbench.stages.datasets import source_labels as sl

PIN = MmluPro.source.revision
TB = TerminalBench21.source.revision


def test_labels_come_from_the_registered_sources_else_from_the_cases() -> None:
    def record(revision: str, check: str) -> SourceRecord:       # a registered dataset's source record
        return SourceRecord.model_validate({"url": "https://example.invalid/src", "revision": revision, "files": [],
                                            "origin": "download", "check": check})
    got = sl.labels({"mmlu-pro": record(PIN, "file-sha256"), "terminal-bench-2.1": record(TB, "git-tree")},
                    {"mmlu-pro": {PIN}, "terminal-bench-2.1": {TB}, "hle": {"synthetic-sample-v1"}})
    assert got["mmlu-pro"] == sl.SourceLabel(revision=PIN, pinned=True, check="file-sha256")
    assert got["hle"] == sl.SourceLabel(revision="synthetic-sample-v1", pinned=False)
    lines = sl.notices(got)
    assert "terminal-bench-2.1: pinned source, checked: the git tree id of tasks/ equals the pin (Terminal-Bench " \
           "publishes no byte digest)" in lines
    assert any(x.startswith("hle: not the pinned source (revision synthetic-sample-v1") for x in lines)
    # an unregistered file at the pinned revision: pinned, but no recorded check, and it says so
    bare = sl.labels(None, {"mmlu-pro": {PIN}})["mmlu-pro"]
    assert bare.pinned and bare.check is None
    assert "records no content check" in sl.notices({"mmlu-pro": bare})[0]
    # mixed revisions inside one benchmark are never the pinned source
    assert sl.labels(None, {"mmlu-pro": {PIN, "x"}})["mmlu-pro"].pinned is False


def test_a_fresh_dataset_says_not_the_pinned_source_or_which_check_applied() -> None:
    assert sl.dataset_notices("mmlu-pro", "mine", "local-import", None) == [
        f"mmlu-pro: not the pinned source: imported revision mine is not the pinned revision {PIN}; its figures are "
        "never an sr-bench 1.0 result"]
    assert sl.dataset_notices("mmlu-pro", PIN, "download", "file-sha256") == [
        "mmlu-pro: source check at the pinned revision: every file's size and sha256 equal the pin table's"]


def test_the_full_score_counts_unchecked_bytes_at_the_pinned_revision_as_not_pinned() -> None:
    from tests.stages.rows import result_row

    from srbench.benchmarks import all_benchmarks
    from srbench.stages.report.full_score import full_score

    revisions = {b.id: {b.source.revision} for b in all_benchmarks()}
    rows = {b: [result_row(state="completed", correct=True)] for b in revisions}
    frozen = {b: sl.SourceLabel(revision=next(iter(r)), pinned=True, check="file-sha256")
              for b, r in revisions.items()}
    assert full_score(rows, sl.for_full_score(revisions, frozen)).score_scope == "full sr-bench 1.0"
    frozen["hle"] = frozen["hle"].model_copy(update={"check": None})    # an unregistered file claiming the pin
    got = full_score(rows, sl.for_full_score(revisions, frozen))
    assert got.unpinned_benchmarks == ["hle"] and "not an sr-bench 1.0 result" in got.score_scope
    assert sl.for_full_score(revisions, None) == revisions          # an older plan: its case revisions
