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
