"""API fuzzing with schemathesis against the service's own OpenAPI document (generated from the contract's
pydantic models): no 5xx on any route, and every success conforms to its answer's schema.

Every operation but POST /shutdown gets at most 25 derandomized examples (positive and negative data) with
the service token. Path parameters are sometimes swapped for real ids (a dataset, a finished run, one of its
cells, a served object) so that the handlers behind the 404s are reached too. Every 4xx must be the JSON
error shape. The network guard of conftest keeps a fuzzed `datasets/prepare` from leaving loopback.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import schemathesis  # the `dev` extra pins schemathesis>=4.32,<5 (its v4 Python API)
from hypothesis import HealthCheck, settings
from schemathesis.checks import response_schema_conformance

from srbench.discovery import API_PREFIX

from .conftest import store_snapshot

MAX_EXAMPLES = 25
CASES: Counter[str] = Counter()
STATUSES: Counter[int] = Counter()
# aiohttp's own answers for a path that no longer matches a route (see test_bad_input): plain text 404/405
PLAIN_TEXT_OK = {404, 405}


@pytest.fixture(scope="module")
def api_schema(service, real_ids) -> Any:
    schema = schemathesis.openapi.from_url(service.url + API_PREFIX + "/openapi.json",
                                           headers={"Authorization": f"Bearer {service.token}"}, timeout=10)
    return schema


# POST /shutdown is excluded: it would stop the service under test
schema = schemathesis.pytest.from_fixture("api_schema").exclude(operation_id="shutdown")


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_route_answers_5xx(case, service, real_ids) -> None:
    for name, value in list((case.path_parameters or {}).items()):
        if name in real_ids and len(str(value)) % 2 == 0:         # about half the time: a real id
            case.path_parameters[name] = real_ids[name]
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {service.token}"}
    resp = case.call(timeout=15)
    CASES[case.operation.label] += 1
    STATUSES[resp.status_code] += 1
    assert resp.status_code < 500, (case.operation.label, case.path_parameters, case.query, resp.status_code,
                                    resp.text[:300])
    assert resp.status_code not in (401, 403), "the token was not accepted"
    if resp.status_code < 300:      # a success answers the shape the generated document gives it
        case.validate_response(resp, checks=[response_schema_conformance])
    if resp.status_code >= 400:
        ctype = resp.headers.get("content-type", [""])
        ctype = ctype[0] if isinstance(ctype, list) else ctype
        if ctype.startswith("application/json"):
            err = resp.json()
            assert isinstance(err["code"], str) and isinstance(err["error"], str), err
        else:
            assert resp.status_code in PLAIN_TEXT_OK, (resp.status_code, ctype, resp.text[:200])


def test_fuzz_summary(service, api) -> None:
    """Printed with -rA: fuzz cases per operation; the service is still healthy and its journal readable."""
    total = sum(CASES.values())
    print(f"\nschemathesis {schemathesis.__version__}: {total} fuzz cases over {len(CASES)} operations; "
          f"statuses {dict(sorted(STATUSES.items()))}")
    for label, n in sorted(CASES.items()):
        print(f"  {n:4d}  {label}")
    assert api.ok("GET", "/health")["status"] == "ready"
    assert store_snapshot(service.store_dir)["rows"]["runs"] >= 1
    if CASES:                                   # the fuzz test ran in this session (not a -k selection)
        assert len(CASES) >= 19 and total >= 19 * 5, CASES
        assert all(n <= 10 * MAX_EXAMPLES for n in CASES.values()), CASES   # + the coverage phase
        assert not any("shutdown" in label for label in CASES)
