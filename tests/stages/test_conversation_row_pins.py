"""A conversation cell's report row keeps its stored bytes while the report reads its call records through
a model (issue 26, item 1): the rows below (stages/report/conversations.py `conversation_row`) dump to the
pinned digests, taken from the dict-reading code. Integer timings stay integers."""

from __future__ import annotations

import pytest
from tests.stages.test_conversation_report import _rec, _row

from srbench.cas import canonical_json, digest_bytes


def _int_timings(rec: dict) -> dict:
    return rec | {"timings": {"latency_s": 2, "ttft_s": 0}, "http_status": 502, "finish_reason": "length",
                  "response_model": "a-2025"}


CASES = {
    "mixed": ({"r0": _rec(100), "r1": _rec(50), "r2": _rec(1000, 1)},
              [("subject", "agent", "r0"), ("user_simulator", "sim", "r2"), ("subject", "agent", "r1")]),
    "unknown-unsent": ({"r0": _rec(None), "r1": _rec(10, sent=False), "r2": _rec(None)},
                       [("subject", "agent", "r1"), ("user_simulator", "sim", "r2"), ("subject", "agent", "r0")]),
    "int-timings": ({"r0": _int_timings(_rec(7)), "r1": _rec(3, latency=0.25)},
                    [("subject", "agent", "r1"), ("subject", "agent", "r0")]),
    "int-first": ({"r0": _int_timings(_rec(7)), "r1": _rec(3, latency=0.25)},
                  [("subject", "agent", "r0"), ("subject", "agent", "r1")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conversation_row_bytes_unchanged(name: str) -> None:
    records, calls = CASES[name]
    row = _row(records, [{"index": i, "role": r, "target_id": t, "record": d} for i, (r, t, d) in enumerate(calls)])
    assert digest_bytes(canonical_json(row.dump())) == PINNED[name], row.dump()


PINNED = {
    "mixed": "b3:b1e20a7d06a601330d9c26457efa9b6e4273cc5789610053350ff2dfed882e62",
    "unknown-unsent": "b3:25d83552290e8b569f707767fa13e171492968776590af9bce4bedc95ff227df",
    "int-first": "b3:c9ca1cc4440c6e2387a732e8283893d23b41c3d8654b5c435ce15d89869dff5d",
    "int-timings": "b3:72d67add625bb0a69c9b7534ec529786b7d9ade93213c72ac52c9e5db5bdf3e1",
}
