"""The OpenAPI document is pinned (issue 26, item 2): the generated document, byte for byte as the service
serves it (same key order, same values), equals the stored copy `data/openapi.json`, generated from main
before the routes carried their own types. A change to a route, a request or an answer model shows here
as a diff of that file; when the change is meant (a fix named in its commit), write the file anew with
``python tests/service/test_openapi_pinned.py --write`` and commit it with the change.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import pytest

from srbench.service.route_table import openapi

PINNED = Path(__file__).parent / "data" / "openapi.json"


def _text() -> str:
    # the key order is the served order (web.json_response dumps without sorting); indent only adds whitespace
    return json.dumps(openapi(), indent=1) + "\n"


def test_the_document_equals_the_pinned_copy() -> None:
    pinned = PINNED.read_text()
    text = _text()
    assert list(json.loads(text)["paths"]) == list(json.loads(pinned)["paths"]), "the order of the paths changed"
    assert list(json.loads(text)["components"]["schemas"]) == list(json.loads(pinned)["components"]["schemas"])
    assert text == pinned, ("the OpenAPI document changed; if that is meant, run "
                            "`python tests/service/test_openapi_pinned.py --write` and name the change in the commit")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    PINNED.write_text(_text())


def test_every_route_is_declared_on_its_handler_once_and_placed() -> None:
    from srbench.service.api import bindings
    from srbench.service.route_table import MODULES, ORDER, ROUTES

    assert sorted(ORDER) == sorted(bindings.REGISTRY), "ORDER must name every declared route exactly once"
    assert len(set(ORDER)) == len(ORDER) == len(ROUTES)
    declared = {name for m in MODULES for name, fn in vars(m).items()
                if callable(fn) and getattr(fn, "__module__", None) == m.__name__ and name in bindings.REGISTRY}
    assert declared == set(bindings.REGISTRY)
    # the app builds its router from the registry, not by looking handler names up in modules
    import srbench.service.app as app

    assert "getattr(m, route.name)" not in open(app.__file__).read()


def test_a_route_declared_twice_is_refused() -> None:
    from srbench.service.api import bindings

    with pytest.raises(ValueError, match="declared twice"):
        @bindings.route("GET", "/health-again", "a second health")
        async def health(request):  # never called
            raise AssertionError


def test_a_handler_takes_the_model_its_route_declares() -> None:
    from srbench.service.api import bindings
    from srbench.service.api import requests as rq
    from srbench.service.route_table import ROUTES

    with pytest.raises(TypeError, match=r"takes_page\(q: rq.Page\) does not take the model its route declares"):
        @bindings.route("GET", "/never-served", "a mismatch", query=rq.RunsPage)
        async def takes_page(request, q: rq.Page):  # never called
            raise AssertionError
    assert "takes_page" not in bindings.REGISTRY
    # the binding parses for every route whose handler takes the model (all but two, which check the run first)
    parsing = {r.name for r in ROUTES if {"req", "q"} & set(inspect.signature(r.handler).parameters)}
    own = {r.name for r in ROUTES if (r.body or r.query) and r.name not in parsing}
    assert own == {"run_calls", "run_events"}, own


def test_an_answer_model_is_serialised_by_the_binding() -> None:
    import asyncio

    from aiohttp.test_utils import make_mocked_request

    from srbench.service.api import bindings
    from srbench.service.api import responses as rs

    async def health(request):  # answers with its model, as the route declares
        return rs.Health(version="v", status="ready", store_id="s")

    async def wrong(request):
        return rs.Registered(registered=[])

    request = make_mocked_request("GET", "/")
    served = asyncio.run(bindings._bound(health, None, None, rs.Health, False, 200)(request))
    assert (served.status, served.body) == (200, b'{"status": "ready", "store_id": "s", "version": "v"}')
    accepted = asyncio.run(bindings._bound(health, None, None, rs.Health, False, 202)(request))
    assert accepted.status == 202
    with pytest.raises(TypeError, match="wrong answered a Registered, not its route's answer model \\(Health\\)"):
        asyncio.run(bindings._bound(wrong, None, None, rs.Health, False, 200)(request))
