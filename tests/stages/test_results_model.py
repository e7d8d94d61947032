"""The results index (kind ``results``) is a pydantic model (issue 26, item 1); its stored bytes did
not change (the digest below was taken from the dict-literal code before the model)."""

from __future__ import annotations

from srbench.cas import ObjectStore
from srbench.stages.report.results import all_rows, write_results


def test_results_index_bytes_unchanged(tmp_path):
    store = ObjectStore(str(tmp_path / "cas"))
    rows = [{"seq": i, "v": i * i} for i in range(7)]
    from srbench.stages.report.results import ResultsWriter

    w = ResultsWriter(store, page_rows=3)
    for r in rows:
        w.add(r)
    digest = w.finish()
    assert digest == PINNED
    assert all_rows(store, digest) == rows
    assert all_rows(store, write_results(store, [])) == []


PINNED = "b3:59c9638831cf45544d713a4354d1b931ca2d1829d03a9fa560cadaf78bd5808c"
