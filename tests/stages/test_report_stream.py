"""Issue 11: the streamed report pieces give the objects the whole-list code gives (stages/report/stream.py)."""

from __future__ import annotations

import random

from tests.stages.rows import result_row

from srbench.cas import ObjectStore
from srbench.cas.digest import canonical_json
from srbench.schemas.results import ResultRow
from srbench.stages.plan.identity import content_digest, scrub
from srbench.stages.report.results import write_results
from srbench.stages.report.stream import CellSource, RowSpill, iter_cells, write_run_cells


def _rows(n: int) -> list[dict]:
    return [result_row(seq=i, cell_id=f"c{i:04d}", target_id=f"t{i % 3}", correct=i % 2 == 0, latency_s=i / 7,
                       call=None if i % 5 else f"b3:{i:064x}", note="ü\"]",
                       usage={"input": i, "cached_input": 0, "cache_write": 0, "output": 2 * i}).dump()
            for i in range(n)]


def test_spilled_rows_give_the_same_results_and_content_digest(tmp_path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    rows = _rows(300)                    # more than two pages
    report = {"kind": "report", "run_id": "r-1", "results": None, "summary": {"x": 1.0}, "status": "completed"}
    spill = RowSpill()
    try:
        by_target = sorted(rows, key=lambda r: (r["target_id"], r["seq"]))
        half = len(by_target) // 2
        spill.add([ResultRow.model_validate(r) for r in by_target[:half]])
        spill.add_raw([(r["seq"], canonical_json(r).decode(), canonical_json(scrub(r)).decode())
                       for r in by_target[half:]])
        results, digest = spill.finish(store, report)
        assert list(spill.rows()) == rows
    finally:
        spill.close()
    assert results == write_results(store, rows)
    assert digest == content_digest(report | {"rows": rows})
    assert digest != content_digest(report | {"rows": rows[:-1]})


def test_spilled_segments_read_back_in_seq_order_in_chunks(tmp_path, monkeypatch) -> None:
    """One segment per target (read in chunks smaller and larger than a row), and a segment out of seq order
    (every row sorted and read on its own): the same rows, pages and content digest."""
    from srbench.stages.report import stream

    monkeypatch.setattr(stream, "READ_CHUNK", 700)
    store = ObjectStore(str(tmp_path / "cas"))
    rows = _rows(200)
    report = {"kind": "report", "run_id": "r-2", "results": None, "summary": {}, "status": "completed"}
    for reverse in (False, True):
        spill = RowSpill()
        try:
            for t in ("t0", "t1", "t2"):
                part = [r for r in rows if r["target_id"] == t]
                if reverse and t == "t1":
                    part.reverse()
                spill.add_raw([(r["seq"], canonical_json(r).decode(), canonical_json(scrub(r)).decode()) for r in part])
            assert len(spill.segments) == 3
            results, digest = spill.finish(store, report)
            assert list(spill.rows()) == rows
        finally:
            spill.close()
        assert results == write_results(store, rows) and digest == content_digest(report | {"rows": rows})


def test_cells_object_read_entry_by_entry() -> None:
    rng = random.Random(1)
    cells = {f"{rng.getrandbits(96):024x}": [i, "case-1", "t0", "completed", f"b3:{i:064x}", None, None, None]
             for i in range(50)}
    cells["odd"] = [99, "c\"]:,{", "t1", "failed", None, "http_500", None, None]
    assert dict(iter_cells(canonical_json(cells))) == cells
    assert list(iter_cells(canonical_json({}))) == []


def test_run_cells_parts_give_each_target_its_cells_in_seq_order(tmp_path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    rows = [(f"c{i:03d}", i, f"case-{i // 2}", f"t{i % 2}", "completed", f"b3:{i:064x}", None, None, None)
            for i in range(20)]
    index = write_run_cells(store, sorted(rows, key=lambda r: (r[3], r[1])))
    as_map = {r[0]: list(r[1:]) for r in rows}
    for cells in (index, store.put_json(as_map), as_map):
        src = CellSource(store, cells, ["t0", "t1", "t9"])
        assert src.target("t0") == [(r[0], list(r[1:])) for r in rows if r[3] == "t0"]
        assert src.target("t1") == [(r[0], list(r[1:])) for r in rows if r[3] == "t1"]
        assert src.target("t9") == []


def test_run_cells_bytes_unchanged(tmp_path) -> None:
    """The run_cells index and its parts keep their stored bytes (issue 26, item 1: the digest was taken
    from the dict-literal code before they became models)."""
    store = ObjectStore(str(tmp_path / "cas"))
    rows = [(f"c{i:03d}", i, f"case-{i // 2}", f"t{i % 2}", "completed" if i % 3 else "failed", f"b3:{i:064x}",
             None if i % 3 else "http_500", f"b3:{i + 99:064x}" if i % 4 == 0 else None) for i in range(9)]
    index = write_run_cells(store, sorted(rows, key=lambda r: (r[3], r[1])))
    assert index == RUN_CELLS_PINNED
    assert write_run_cells(store, []) == RUN_CELLS_EMPTY


RUN_CELLS_PINNED = "b3:bb5e8e68be340c50bd2807215411bf721a0c7e2e674e1a1aff463c878ccc9abf"
RUN_CELLS_EMPTY = "b3:29ef1e8dfd0513e7f175f3e4b21a053126ad4ce2ac768e784f5d7b4c6527da07"
