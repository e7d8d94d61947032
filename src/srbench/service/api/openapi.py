"""The OpenAPI 3.1 document generated from the contract's models, for a route table (the service's, in the
document's order, is `service.route_table`: above the routes, as this edge is below them).

The routes are upstream's (vLLM Semantic Router's sr-bench 1.0 API, the shapes in `service.wire`) plus
sr-bench's own (setup, dataset prepare/combine, objects, reprice, push/pull, store maintenance).

Each route is declared on its handler (`service.api.bindings.route`): its request body model and query
model (`service.api.requests`: the handlers are given the request validated by exactly these) and its
answer model (`service.api.responses`). The document's schemas are those models' `model_json_schema()`,
so what is checked and what is documented are one source and cannot drift; schemathesis fuzzes the
service against this document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from srbench import VERSION
from srbench.schemas.wire import WireJSON
from srbench.service.api import responses as rs
from srbench.service.api.bindings import Route
from srbench.service.api.limiter import CheckLimiter

_REF = "#/components/schemas/{model}"
ACTORS = ("A caller holding the token may act for an actor: X-SR-Bench-Actor-ID (1-256 characters) and "
          "X-SR-Bench-Actor-Role (admin, write or read; read may only GET and POST /comparisons). admin sees "
          "everything, write and read only their own runs and experiments; without the headers the caller is "
          "the local operator.")


CLIENT_ERROR = ("client error (403: a wrong token, the read role, another actor's operator route; 429 rate_limited "
                f"with Retry-After: token checks are limited to {CheckLimiter.RATE_PER_S:g} a second in all, and a check that cannot be made "
                "within a few seconds is refused unread, those of addresses that sent wrong tokens first)")


def _schema(model: type[BaseModel], components: WireJSON) -> WireJSON:
    """A `$ref` to the model's schema, which is added (with the models it uses) to `components`."""
    schema = model.model_json_schema(ref_template=_REF)
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": _REF.format(model=model.__name__)}


def _query(model: type[BaseModel]) -> list[WireJSON]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [{"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in schema["properties"].items()]


def openapi_document(routes: Sequence[Route]) -> WireJSON:
    """The OpenAPI 3.1 document of `routes` (the service's route table: `service.route_table`)."""
    components: WireJSON = {}
    error = _schema(rs.Error, components)
    paths: WireJSON = {}
    for r in routes:
        answer = _schema(r.answer, components) if r.answer else {"type": "object"}
        ok = {"description": "OK", "content": {"application/json": {"schema": answer}}}
        responses: WireJSON = ({"201": {**ok, "description": "Created"}, "200": ok} if r.created else
                                     {"202": {**ok, "description": "Accepted"}} if r.accepted else {"200": ok})
        responses["4XX"] = {"description": CLIENT_ERROR, "content": {"application/json": {"schema": error}}}
        responses["5XX"] = {"description": "a storage fault (507 insufficient_storage, 503 storage_unavailable) "
                                           "or a damaged object (503 damaged_object)",
                            "content": {"application/json": {"schema": error}}}
        op: WireJSON = {"operationId": r.name, "summary": r.summary, "responses": responses}
        params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                  for p in re.findall(r"{(\w+)}", r.path)]
        if r.query is not None:
            params += _query(r.query)
        if params:
            op["parameters"] = params
        if r.body is not None:
            required = bool(r.body.model_json_schema().get("required"))
            op["requestBody"] = {"required": required,
                                 "content": {"application/json": {"schema": _schema(r.body, components)}}}
        op["security"] = [{"bearer": []}]
        paths.setdefault("/api/sr-bench/v1" + r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "sr-bench service", "version": VERSION},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": ACTORS}},
                       "schemas": components},
    }
