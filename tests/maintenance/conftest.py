"""Fixtures for the store maintenance tests: the service test fixtures (embedded service on a tmp store,
native sample sources, the simulator), and one small completed run with its report."""

from __future__ import annotations

from typing import Any

import pytest

from service import conftest as service_fixtures
from service.helpers import Api, freeze, manifest, single

from .helpers import settled

# the service tests' fixtures, reused as they are
sources = service_fixtures.sources
service = service_fixtures.service
api = service_fixtures.api
prepare = service_fixtures.prepare
sim = service_fixtures.sim


@pytest.fixture
def ran(api: Api, prepare: Any, sim: Any, service: Any) -> dict[str, Any]:
    """A completed 4-cell run against the simulator, and its report (built once)."""
    ds = prepare("mmlu-pro", limit=4)
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    plan = freeze(api, manifest(ds, [{"id": "strong"}]))
    run = api.ok("POST", "/runs", {"manifest": plan})
    final = api.wait(run["id"])
    assert final["status"] == "completed", final
    settled(service)
    report = api.ok("GET", f"/runs/{run['id']}/report")
    calls = api.ok("GET", f"/runs/{run['id']}/calls")["calls"]
    return {"run_id": run["id"], "plan": final["plan"], "dataset": ds, "report": report, "calls": calls}
