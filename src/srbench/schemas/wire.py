"""JSON at the edges: the one name for a JSON object that crosses a process boundary untyped.

Inside sr-bench every concept is a pydantic model (issue 26). Some JSON is deliberately left as parsed JSON
because its shape belongs to someone else or is only passed through:

- a model endpoint's request body, stream chunk or ``usage`` object (``targets/``, ``simulate/``);
- a third party's payload: the sandbox's job file and its answers, the Docker engine's and Ray's answers,
  a router's configuration document (``sandbox/``, ``targets/``);
- a benchmark's native source rows as parsed, and the chat messages and tool schemas it sends (``benchmarks/``);
- the service's answer as the CLI reads it to print it (``cli/``), and the router project's own wire
  format (``service/wire/``).

Such a value is annotated ``WireJSON``, so that the edges are named and can be counted; the core packages
(``cas``, ``rules``, ``stages``, ``schemas``) never take one (tests/core/test_wire_edges.py).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

from pydantic import JsonValue, WithJsonSchema

WireJSON: TypeAlias = dict[str, Any]
"""A JSON object as parsed (``json.loads``) or about to be sent, whose shape is an edge's, not sr-bench's."""


_OPEN_OBJECT = WithJsonSchema({"additionalProperties": True, "type": "object"})
JSONObject: TypeAlias = Annotated[dict[str, JsonValue], _OPEN_OBJECT]
"""A JSON object a model holds as given (a router's config-hash view, a target's generation parameters): mypy
and pydantic check that it is JSON; its schema in the OpenAPI document is the open object it always was. Unlike
``WireJSON`` it may be used inside the core."""
