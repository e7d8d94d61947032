"""Routes answer with their models (issue 26, items 1-2): every handler whose route declares an answer model
returns that model (or it with the status it is served with, `bindings.Status`), and the binding serialises
it in one place — the fields the handler set (a null it set included), an optional field it left out absent —
so the wire keys stay those of the dict literals the handlers answered with before."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest
from aiohttp.test_utils import make_mocked_request

from srbench.service.api import bindings
from srbench.service.api import responses as rs
from srbench.service.api import workflow as wf
from srbench.service.route_table import ROUTES


def test_every_handler_with_an_answer_model_returns_it() -> None:
    loose = []
    for r in ROUTES:
        fn = inspect.unwrap(r.handler)
        returns = str(inspect.signature(fn).return_annotation)
        if r.answer is None:
            assert returns == "web.Response", (r.name, returns)      # a stored object's own bytes
            continue
        if returns.rsplit(".", 1)[-1] not in (r.answer.__name__, "Status"):
            loose.append(f"{r.name} -> {returns} (declares {r.answer.__name__})")
    assert loose == []
    statuses = {r.name for r in ROUTES if str(inspect.signature(inspect.unwrap(r.handler)).return_annotation)
                == "Status"}
    assert statuses == {r.name for r in ROUTES if r.created}, "only a creating route chooses its status"


def _served(answer: object, model: type, status: int = 200) -> tuple[int, dict]:
    async def handler(request):
        return answer
    got = asyncio.run(bindings._bound(handler, None, None, model, False, status)(make_mocked_request("GET", "/")))
    return got.status, json.loads(got.body)


def test_the_binding_serves_the_fields_set_and_the_status_given() -> None:
    listed = wf.Experiment(id="exp-1", name="n", owner="local", created_at="t0", updated_at="t1")
    assert _served(listed, wf.Experiment)[1] == {"id": "exp-1", "name": "n", "owner": "local", "created_at": "t0",
                                                 "updated_at": "t1"}           # no run counts: absent, not null
    page = rs.Events(events=[], total=0)
    assert _served(page, rs.Events)[1] == {"events": [], "total": 0}
    runs = rs.Runs(runs=[], next_cursor=None)                                   # a null the handler set stays
    assert _served(runs, rs.Runs)[1] == {"runs": [], "next_cursor": None}
    assert _served(bindings.Status(listed, 201), wf.Experiment)[0] == 201
    with pytest.raises(TypeError, match="answered a Events, not its route's answer model"):
        _served(bindings.Status(page, 201), wf.Experiment)


def test_a_number_keeps_the_record_s_type() -> None:
    call = rs.ConversationCall(index=0, role="subject", target_id="t", state="completed", request=None, call=None,
                               error_class=None, cost_usd=0, damaged=False, latency_s=1.5)
    body = _served(call, rs.ConversationCall)[1]
    assert (body["cost_usd"], body["latency_s"]) == (0, 1.5) and isinstance(body["cost_usd"], int)


def test_a_view_extended_keeps_its_keys() -> None:
    summary = rs.CallSummary(id="call-x", case_id="c", target_id="t", role="subject", status="completed", cell_id="x",
                             seq=1, state="completed", error_class=None, error=None, request=None, call=None,
                             damaged=False)
    detail = rs.extend(summary, rs.CallDetail, record={"kind": "call"})
    assert set(_served(detail, rs.CallDetail)[1]) == set(summary.model_fields_set) | {"record"}


def test_a_field_is_served_by_its_wire_name() -> None:
    # a stored comparison's `schema` (the model's field `schema_`): every answer model reachable from a route
    # with an alias is served under it, as the stored document has it
    import typing

    from pydantic import BaseModel

    aliased, seen = [], set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            if field.alias and field.alias != name:
                aliased.append((model, name, field.alias))
            stack = [field.annotation]
            while stack:
                t = stack.pop()
                stack.extend(typing.get_args(t))
                if isinstance(t, type) and issubclass(t, BaseModel):
                    walk(t)
    for r in ROUTES:
        if r.answer is not None:
            walk(r.answer)
    assert aliased, "the check below must see at least one aliased field"
    for model, name, alias in aliased:
        async def handler(request, model=model, name=name):
            return model.model_construct(**{name: 1}, _fields_set={name})
        got = asyncio.run(bindings._bound(handler, None, None, model, False, 200)(make_mocked_request("GET", "/")))
        assert json.loads(got.body) == {alias: 1}, (model.__name__, name)
