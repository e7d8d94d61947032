"""Untyped JSON lives at the edges only (issue 26, item 1).

`srbench.schemas.wire.WireJSON` names a JSON object whose shape is an edge's (a model endpoint's body, a
third-party payload, the service's answer as the CLI prints it, the router project's wire format). The core
packages take models, never one.
"""

from __future__ import annotations

import re
from pathlib import Path

import srbench

SRC = Path(srbench.__file__).parent
CORE = ("cas", "rules", "stages", "schemas")
EDGES = ("cli", "simulate", "sandbox", "targets", "service/wire", "dashboard", "client", "benchmarks")
# the HTTP edge inside service/api: request bodies as parsed, the OpenAPI document, documents answers pass through
EDGE_FILES = ("service/api/http.py", "service/api/openapi.py", "service/api/responses.py", "service/route_table.py")


def _files(*packages: str) -> list[Path]:
    return [p for pkg in packages for p in sorted((SRC / pkg).rglob("*.py"))]


def test_the_core_never_takes_wire_json() -> None:
    found = [f"{p.relative_to(SRC)}:{n}" for p in _files(*CORE) if p.name != "wire.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\bWireJSON\b", line)]
    assert found == [], f"WireJSON inside the core (use a model): {found}"


def test_wire_json_is_used_only_at_the_edges() -> None:
    edge_files = set(_files(*EDGES))
    edge_files |= {SRC / f for f in EDGE_FILES}
    users = [p for p in SRC.rglob("*.py") if p.name != "wire.py" and "WireJSON" in p.read_text()]
    outside = sorted(str(p.relative_to(SRC)) for p in users if p not in edge_files)
    assert outside == [], f"WireJSON outside the edge packages {EDGES}: {outside}"
    assert users, "the edges name their JSON as WireJSON"


def test_the_wire_alias_is_a_plain_json_object() -> None:
    from typing import Any

    from srbench.schemas.wire import WireJSON
    assert WireJSON == dict[str, Any]


CEILING = 1       # untyped `dict[str, Any]` lines left in src/srbench: the WireJSON alias itself; lower it as they go


def test_untyped_dicts_only_shrink() -> None:
    count = sum(line.count("dict[str, Any]") > 0 for p in SRC.rglob("*.py") for line in p.read_text().splitlines())
    assert count <= CEILING, (f"{count} lines with dict[str, Any] in src/srbench, more than the {CEILING} left: type "
                              "the new one (a model), or name it WireJSON if it is JSON at an edge")
