"""A run's event data is a model per kind (issue 26 item 1); the stored JSON text is what the dict literals wrote."""

from __future__ import annotations

import json

from srbench.schemas.event import EVENT_TYPES
from srbench.schemas.event_data import (
    EVENT_DATA,
    CellEvent,
    Created,
    DispatchStopped,
    NoData,
    ReplayOf,
    RunEnded,
    parse_event,
)


def _text(model):
    return json.dumps(model.dump(), sort_keys=True)


def test_every_kind_has_a_model():
    assert set(EVENT_DATA) == set(EVENT_TYPES)


def test_unset_fields_are_absent_and_set_none_is_null():
    assert _text(NoData()) == "{}"
    assert _text(RunEnded()) == "{}"
    assert _text(CellEvent(cell_id="c", case_id="k", target_id="t")) == \
        '{"case_id": "k", "cell_id": "c", "target_id": "t"}'
    assert _text(CellEvent(cell_id="c", case_id="k", target_id="t", error_class=None, error=None)) == \
        '{"case_id": "k", "cell_id": "c", "error": null, "error_class": null, "target_id": "t"}'
    assert _text(DispatchStopped(target_id="t", scope="run", reason="r", error_class=None)) == \
        json.dumps({"target_id": "t", "scope": "run", "reason": "r", "error_class": None}, sort_keys=True)
    replay = Created(replay_of=ReplayOf(baseline="a", preview="b"), model_requests=0)
    assert _text(replay) == json.dumps({"replay_of": {"baseline": "a", "preview": "b"}, "model_requests": 0},
                                       sort_keys=True)


def test_a_stored_row_parses_back():
    text = _text(CellEvent(cell_id="c", case_id="k", target_id="t", error_class="timeout", error="slow"))
    got = parse_event("cell_failed", text)
    assert isinstance(got, CellEvent) and got.error_class == "timeout"
    assert _text(got) == text


def _record():
    from srbench.schemas.early_stop import EarlyStopRecord, TargetDecision
    d = TargetDecision(target_id="a", baseline_target_id="b", state="settled", verdict="improvement", question="sign",
                       threshold=0.0, n=3, lower=0.1, upper=0.2, best_lower=0.1, worst_upper=0.3)
    return EarlyStopRecord(rule="betting", method="m", order="o", reason="settled", summary="s", question="sign",
                           margin=None, decided_at_cases=3, planned_cases=9, decided_at=1.5, decisions=[d], baseline="x")


def test_the_early_stop_record_dumps_the_keys_of_before():
    r = _record()
    assert "selection" not in r.dump()["decisions"][0] and "cells_not_sent" not in r.dump()
    closed = r.model_copy(update={"cells_not_sent": 2, "cells_not_sent_by_target": {"a": 2}, "subject_calls_not_sent": 2,
                                  "estimated_saving_usd": None, "saving_basis": "b"}).dump()
    assert closed["estimated_saving_usd"] is None and closed["cells_not_sent_by_target"] == {"a": 2}
    assert closed["margin"] is None and closed["decisions"][0]["threshold"] == 0.0


def test_a_run_rows_extra_reads_as_run_extras_and_the_binding_text_is_unchanged():
    from srbench.service.journal.runs import RecoveryBinding, RunExtras
    bind = RecoveryBinding(parent="run-p", mode="failed", cells=["a", "b"])
    assert json.dumps({"recovery_binding": bind.model_dump()}) == \
        json.dumps({"recovery_binding": {"parent": "run-p", "mode": "failed", "cells": ["a", "b"]}})
    stop = _record().dump()
    extra = RunExtras.model_validate_json(json.dumps(
        {"final_report": "b3:r", "early_stop": stop, "pulled": {"bundle": "b3:x"},
         "recovery_binding": bind.model_dump(), "replay": {"baseline": "run-a", "preview": "run-b"},
         "from_an_older_version": 1}, sort_keys=True))
    assert extra.recovery_binding == bind and extra.pulled is not None and extra.pulled.bundle == "b3:x"
    assert extra.replay is not None and extra.replay.preview == "run-b" and extra.final_report == "b3:r"
    assert extra.early_stop is not None and extra.early_stop.dump() == stop     # read as the model, dumped as stored
    assert RunExtras.model_validate_json("{}") == RunExtras()
