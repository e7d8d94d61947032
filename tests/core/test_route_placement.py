"""Issue 39, item 9: route handlers live only in `service/routes/` — no module elsewhere declares a route
(`@route`), and the OpenAPI route table is filled from `service/routes/` modules alone."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "srbench"
ROUTES = SRC / "service" / "routes"
DECLARES = re.compile(r"^@route\(", re.M)


def test_every_route_is_declared_in_service_routes() -> None:
    outside = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                     if DECLARES.search(p.read_text()) and ROUTES not in p.parents)
    assert outside == [], f"route handlers outside service/routes/: {outside}"


def test_the_route_table_is_filled_from_service_routes() -> None:
    from srbench.service.route_table import MODULES

    assert all(m.__name__.startswith("srbench.service.routes.") for m in MODULES)


def test_the_http_edge_imports_no_handler_nor_the_composition_root() -> None:
    """service/api/ is the HTTP edge below the routes: no module of it imports service/routes/, the route table
    or the composition root (`service.app`) at module level (a type-only import is not a dependency)."""
    edge = SRC / "service" / "api"
    upward = re.compile(r"^(?:from|import) srbench\.service\.(?:routes|route_table|app)\b", re.M)
    found = sorted(str(p.relative_to(SRC)) for p in edge.rglob("*.py") if upward.search(p.read_text()))
    assert found == [], f"the HTTP edge imports above itself: {found}"


def test_nothing_below_the_routes_imports_a_handler_module() -> None:
    """service/routes/ is imported only by the route table (and other route modules): the service's parts below
    it (datasets, runs, store, wire, api …) never import a handler module."""
    importer = re.compile(r"^(?:from|import) srbench\.service\.routes\b", re.M)
    found = sorted(str(p.relative_to(SRC)) for p in (SRC / "service").rglob("*.py")
                   if ROUTES not in p.parents and p.name != "route_table.py" and importer.search(p.read_text()))
    assert found == [], f"modules below the routes import them: {found}"
