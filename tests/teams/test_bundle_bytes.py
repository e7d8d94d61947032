"""A run bundle reads and writes back the same bytes (issue 26, item 1): its journal rows are typed
column values (schemas/bundle.py `Columns`), its events, corrections and dataset manifests JSON, and none
of that typing changes a pushed bundle's digest."""

from __future__ import annotations

from srbench.cas.digest import canonical_json, digest_bytes
from srbench.schemas.bundle import CALL_COLUMNS, CELL_COLUMNS, RUN_COLUMNS, RunBundle

RUN = {c: None for c in RUN_COLUMNS} | {"id": "run-1", "name": "demo", "mode": "live", "profile": "smoke",
                                         "plan": "b3:" + "1" * 64, "status": "completed", "total": 1,
                                         "targets": '["a"]', "created_at": 1700000000.25, "cancel_requested": 0,
                                         "extra": "{}"}
CELL = {c: None for c in CELL_COLUMNS} | {"cell_id": "c1", "seq": 0, "case_id": "gsm8k/1", "target_id": "a",
                                          "state": "completed", "call": "b3:" + "2" * 64, "reserved_usd": 0.5,
                                          "updated_at": 1700000001.5}
CALL = {c: None for c in CALL_COLUMNS} | {"cell_id": "c1", "idx": 0, "role": "subject", "target_id": "a",
                                          "state": "completed", "cost_usd": 0.001, "updated_at": 1700000002}
BUNDLE = {"kind": "run-bundle", "schema": 1, "run": RUN, "cells": [CELL], "calls": [CALL],
          "events": [{"ts": 1700000000.5, "type": "cell", "data": {"cell_id": "c1", "n": [1, 2.5, None, True],
                                                                  "nested": {"x": "y"}}}],
          "budget": {"cap_usd": 5, "spent_usd": 0.25, "reserved_usd": 0, "unknown_calls": 0},
          "corrections": {"usage_corrections": [{"at": 1700000003, "counts": {"input": 3}, "why": "late usage"}]},
          "datasets": [{"id": "ds-1", "sha256": "a" * 64, "sources": {"gsm8k": {"revision": "r1"}}}],
          "objects": ["b3:" + "1" * 64, "b3:" + "2" * 64]}
# the digest of BUNDLE as dumped before its rows were typed (computed with the untyped RunBundle)
PINNED = "b3:438bcff8220597227da08a9fa9cfa6563eab10500ec5ce0def9e4b4da1e10051"


def test_a_bundle_reads_and_writes_back_its_bytes() -> None:
    raw = canonical_json(BUNDLE)
    bundle = RunBundle.model_validate_json(raw)
    assert canonical_json(bundle.model_dump(mode="json", by_alias=True)) == raw
    assert digest_bytes(raw) == PINNED


def test_column_values_keep_their_sqlite_types() -> None:
    bundle = RunBundle.model_validate_json(canonical_json(BUNDLE))
    assert bundle.run["created_at"] == 1700000000.25 and isinstance(bundle.run["total"], int)
    assert bundle.cells[0]["reserved_usd"] == 0.5 and bundle.run["finished_at"] is None
    assert bundle.events[0].data["n"] == [1, 2.5, None, True]
