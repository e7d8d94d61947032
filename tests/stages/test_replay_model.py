"""A replay (stages/derived/replay.py, rule ``replay``) is a pydantic model (issue 26, item 1); its stored
bytes did not change (the digest below was taken from the dict-literal code before the model)."""

from __future__ import annotations

from tests.stages.test_compare import plan, target

from srbench.cas import ObjectStore, canonical_json, digest_bytes
from srbench.stages.derived.replay import _replay_rule

PARAMS = {"temperature": 0, "max_tokens": 256}


def _frozen(targets: list[dict], mode: str, sha: str) -> dict:
    """A frozen plan as the service stores it, with these targets (all called with PARAMS)."""
    out = plan(targets)
    out.update(mode=mode, plan_sha256=sha)
    for pt in out["targets"]:
        pt["effective_params"] = PARAMS
    return out


BPLAN = _frozen([target("large", model="m-large"), target("small", model="m-small")], "live", "b" * 64)
PPLAN = _frozen([{**target("mom", "mom", "MoM"), "preview_url": "http://127.0.0.1:9/preview"}], "preview", "p" * 64)


def _replay(store: ObjectStore) -> dict:
    def call(text: str, routing: dict | None = None) -> str:
        return store.put_json({"kind": "call", "status": "completed", "text": text, "headers": {"x": "1"},
                               **({"routing": routing} if routing else {})})

    bcells, pcells = {}, {}
    for i, (case, model) in enumerate((("q1", "m-large"), ("q2", "m-small"))):
        for tid in ("large", "small"):
            bcells[f"b-{case}-{tid}"] = [i, case, tid, "completed", f"b3:req-{case}-{tid}", call(f"{case} by {tid}"),
                                         None]
        pcells[f"p-{case}"] = [i, case, "mom", "completed", f"b3:preq-{case}", call("", {
            "selection_status": "selected", "selected_model": model, "selection_method": "static",
            "decision": f"d{i}"}), None]
    inputs = {"baseline_plan": store.put_json(BPLAN), "preview_plan": store.put_json(PPLAN),
              "baseline_cells": bcells, "preview_cells": pcells}
    return _replay_rule(store, inputs, {"baseline_run": "run-b", "preview_run": "run-p"})


def test_replay_bytes_unchanged(tmp_path):
    body = _replay(ObjectStore(str(tmp_path / "cas")))
    assert [c["target_id"] for c in body["cells"]] == ["mom", "mom"] and body["receipt"]["cells"] == 2
    assert digest_bytes(canonical_json(body)) == PINNED


PINNED = "b3:ccaf3f982a975d7933553c93fc26002ab8cb06066c88ad8a11a2f9b321253552"


def test_the_replay_model_is_frozen_documented_and_round_trips(tmp_path):
    from srbench.schemas.replay import Replay, ReplayCell, ReplayReceipt

    for model in (Replay, ReplayCell, ReplayReceipt):
        assert not [n for n, f in model.model_fields.items() if not f.description], model.__name__
    body = _replay(ObjectStore(str(tmp_path / "cas")))
    assert Replay.model_validate(body).model_dump(mode="json", by_alias=True) == body
