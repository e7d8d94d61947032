"""Endpoint faults through the REAL service (RUN-5, RUN-7): a fault-injecting simulator misbehaves on every
third case of a 14-case run; every cell ends terminal with the expected `error_class` (in the calls API,
the events and the report), nothing is retried, the run goes on, and no call or run outlives its limits.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import Api, freeze, manifest, single
from srbench.service.wire.projections import epoch
from srbench.simulate.behaviour import SimModel, messages_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

# tiny limits: idle 0.3 s, total 2 s; max_output_chars small enough for an oversize answer of 3 kB
LIMITS = {"concurrency": 4, "idle_timeout_s": 0.3, "total_timeout_s": 2, "case_timeout_s": 2,
          "max_run_seconds": 20, "max_output_chars": 2000, "max_output_tokens": 1024}
EVERY = 3                       # the fault hits cases 0, 3, 6, 9, 12 of 14


def _sse(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + json.dumps(obj).encode() + b"\n\n"


ROLE = _sse({"id": "c", "object": "chat.completion.chunk", "model": "sim-strong",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Answer"}, "finish_reason": None}]})
NON_PERIODIC = " ".join(f"w{i}" for i in range(700))            # ~3.4 kB, no repeating block
OK_USAGE = {"prompt_tokens": 10, "completion_tokens": 3}

# id -> (fault, expected error_class)
FAULTS: dict[str, tuple[Fault, str]] = {
    "http-429-retry-after": (Fault(status=429, body='{"error": {"message": "rate limited"}}',
                                   headers={"Retry-After": "30"}, label="429"), "http_429"),
    "http-500": (Fault(status=500, body='{"error": {"message": "boom"}}', label="500"), "http_500"),
    "http-503-html": (Fault(status=503, body="<html><body>Service Unavailable</body></html>",
                            content_type="text/html", label="503"), "http_503"),
    "reset-before-first-byte": (Fault(close_before_first_byte=True, label="reset0"), "connection_reset"),
    "reset-after-first-chunk": (Fault(close_after_chunks=1, label="reset1"), "connection_reset"),
    "stall-idle-timeout": (Fault(stall_s=3.0, stall_after_chunks=1, label="stall"), "timeout_idle"),
    "stall-before-first-chunk": (Fault(stall_s=3.0, stall_after_chunks=0, label="stall0"), "timeout_idle"),
    "stall-before-headers": (Fault(headers_delay_s=3.0, label="stall-hdr"), "timeout_idle"),
    "trickle-total-timeout": (Fault(content="y" * 300, chunk_chars=1, chunk_delay_s=0.02, label="trickle"),
                              "timeout_total"),
    "truncated-no-done": (Fault(omit_done=True, label="no-done"), "truncated_stream"),
    "done-without-finish-reason": (Fault(omit_finish=True, label="no-finish"), "truncated_stream"),
    "usage-negative": (Fault(usage={"prompt_tokens": 10, "completion_tokens": -3}, label="neg"), "invalid_usage"),
    "usage-cached-over-prompt": (Fault(usage={"prompt_tokens": 10, "completion_tokens": 3,
                                              "prompt_tokens_details": {"cached_tokens": 11}}, label="cached>p"),
                                 "invalid_usage"),
    "usage-mixed-shapes": (Fault(usage={**OK_USAGE, "input_tokens": 10, "output_tokens": 3}, label="mixed"),
                           "invalid_usage"),
    "usage-conflicting-cache-reads": (Fault(usage={**OK_USAGE, "prompt_tokens_details": {"cached_tokens": 2},
                                                   "prompt_cache_hit_tokens": 4}, label="conflict"),
                                      "invalid_usage"),
    "usage-not-an-object": (Fault(usage="lots", label="usage-str"), "invalid_usage"),
    "usage-over-token-cap": (Fault(usage={"prompt_tokens": 10, "completion_tokens": 5000}, label="tok-cap"),
                             "output_too_long"),
    "endless-repetition": (Fault(content="abcdefgh" * 200, label="loop"), "repetition"),
    "oversize-output": (Fault(content=NON_PERIODIC, label="oversize"), "output_too_long"),
    "oversize-sse-line": (Fault(raw_sse=(ROLE, b"data: " + b"x" * (1 << 20) + b"x"), label="line"),
                          "stream_too_large"),
    "non-sse-200": (Fault(content_type="application/json", body=json.dumps({
        "id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "Answer: A"},
                                                             "finish_reason": "stop"}]}), label="json200"),
                    "bad_content_type"),
    "error-event-mid-stream": (Fault(raw_sse=(ROLE, _sse({"error": {"message": "upstream overloaded",
                                                                   "type": "server_error"}})), label="err-ev"),
                               "stream_error"),
    "named-error-event": (Fault(raw_sse=(ROLE, _sse({"message": "model crashed"}, event="error")),
                                label="err-named"), "stream_error"),
    "garbage-event": (Fault(raw_sse=(ROLE, b"data: {this is not json\n\n"), label="garbage"), "bad_event"),
}

TRIED: list[str] = []


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(models=[SimModel("sim-strong", skill=0.9, cached_fraction=0.5)]) as s:
        yield s


@pytest.fixture(scope="module")
def case_index(dataset: dict[str, Any]) -> dict[str, int]:
    cases = decode_cases(Path(dataset["path"]).read_bytes())
    assert len(cases) == 14
    return {messages_key([m.model_dump() for m in c.messages]): i for i, c in enumerate(cases)}


@pytest.fixture(scope="module")
def target(api: Api, sim: SimulatorThread) -> str:
    api.ok("POST", "/targets", {"targets": [single("faulty", sim.v1_url, "sim-strong")]})
    return "faulty"


def _run(api: Api, sim: SimulatorThread, dataset: dict[str, Any], target: str, limits: dict[str, Any],
         hook: Any, wait: float = 30) -> tuple[dict[str, Any], float, list[dict[str, Any]]]:
    m = manifest(dataset, [{"id": target}])
    m["limits"] = dict(limits)
    plan = freeze(api, m)
    sim.server.log.clear()
    sim.set_fault(hook)
    try:
        t0 = time.monotonic()
        run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
        run = api.wait(run_id, timeout=wait)
        elapsed = time.monotonic() - t0
    finally:
        sim.set_fault(None)
    return run, elapsed, list(sim.log)


def _calls(api: Api, run_id: str) -> list[dict[str, Any]]:
    page = api.ok("GET", f"/runs/{run_id}/calls?limit=100")
    assert page["total"] == len(page["calls"])
    return page["calls"]


@pytest.mark.parametrize("name", list(FAULTS))
def test_fault_fails_only_its_cells_and_the_run_goes_on(api, sim, dataset, target, case_index, name) -> None:
    fault, expected = FAULTS[name]
    TRIED.append(name)

    def hook(body: dict[str, Any]) -> Fault | None:
        return fault if case_index[messages_key(body["messages"])] % EVERY == 0 else None

    run, elapsed, log = _run(api, sim, dataset, target, LIMITS, hook)
    faulty = {i for i in range(14) if i % EVERY == 0}
    n_bad = len(faulty)

    # every cell terminal; the run is failed (not complete) but went through every case
    p = run["progress"]
    assert run["status"] == "failed", run
    assert (p["completed"], p["failed"], p["pending"], p["running"], p["ambiguous"], p["cancelled"]) == \
        (14 - n_bad, n_bad, 0, 0, 0, 0), run
    assert run["error"] == f"{n_bad} of 14 cells failed", run["error"]

    # nothing retried: one request per cell, each case exactly once
    assert len(log) == 14, [e["fault"] for e in log]
    assert sorted(case_index[e["messages_digest"]] for e in log) == list(range(14))
    assert Counter(e["fault"] for e in log) == {fault.label: n_bad, None: 14 - n_bad}

    # the calls API names the class on exactly the faulty cells
    calls = _calls(api, run["id"])
    assert len(calls) == 14 and all(c["state"] in ("completed", "failed") for c in calls)
    by_case = {c["case_id"]: c for c in calls}
    cases = decode_cases(Path(dataset["path"]).read_bytes())
    for i, case in enumerate(cases):
        c = by_case[case.id]
        if i in faulty:
            assert (c["state"], c["error_class"], c["status"]) == ("failed", expected, "failed"), (name, c)
            assert c["error"], c
        else:
            assert (c["state"], c["error_class"], c["status"]) == ("completed", None, "completed"), (name, c)
        assert c["call"] is not None                                # the failed attempt is kept (RUN-5)
        assert c["latency_s"] is None or c["latency_s"] <= LIMITS["total_timeout_s"] + 0.5, c

    # ... as do the events and the report's failure_classes
    events = api.ok("GET", f"/runs/{run['id']}/events")["events"]
    failed_ev = [e["data"] for e in events if e["kind"] == "cell_failed"]
    assert sorted(e["error_class"] for e in failed_ev) == [expected] * n_bad, failed_ev
    assert not any(e["kind"] == "dispatch_stopped" for e in events), "a non-systematic fault stopped dispatch"
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    t = rep["summary"]["targets"][0]
    assert t["failure_classes"] == {expected: n_bad}, t["failure_classes"]
    assert (t["total"], t["completed"], t["failed"], t["pending"]) == (14, 14 - n_bad, n_bad, 0)
    assert rep["complete"] is False and rep["summary"]["planned_cells"] == 14

    # the run went on after the first failure: a completed call started after a failed one had ended
    records = {c["case_id"]: api.ok("GET", f"/runs/{run['id']}/calls/{c['cell_id']}")["record"] for c in calls}
    first_fail_end = min(r["timings"]["started_at"] + (r["timings"]["latency_s"] or 0)
                         for cid, r in records.items() if by_case[cid]["state"] == "failed")
    assert any(r["timings"]["started_at"] >= first_fail_end for cid, r in records.items()
               if by_case[cid]["state"] == "completed"), name

    # bounded: 5 faulty cells on 4 slots take at most two total timeouts, plus slack
    wall = epoch(run["finished_at"]) - epoch(run["started_at"])
    assert wall < LIMITS["max_run_seconds"] and elapsed < 2 * LIMITS["total_timeout_s"] + 3, (wall, elapsed)
    if expected not in ("timeout_idle", "timeout_total"):
        assert elapsed < 3, f"{name} took {elapsed:.2f}s: something waited (a Retry-After, a retry?)"


def test_no_run_outlives_max_run_seconds(api, sim, dataset, target) -> None:
    """Every case trickles past its 1 s total timeout; the 2.5 s run limit stops the run with cells left."""
    limits = {"concurrency": 1, "idle_timeout_s": 0.3, "total_timeout_s": 1, "case_timeout_s": 1,
              "max_run_seconds": 2.5}
    trickle = Fault(content="z" * 400, chunk_chars=1, chunk_delay_s=0.02, label="trickle")
    run, elapsed, log = _run(api, sim, dataset, target, limits, lambda body: trickle, wait=15)
    assert run["status"] == "failed" and "max_run_seconds" in run["error"], run
    p = run["progress"]
    assert p["completed"] == 0 and 2 <= p["failed"] <= 3 and p["pending"] == 14 - p["failed"], p
    assert p["running"] == 0 and p["ambiguous"] == 0
    assert len(log) == p["failed"]                     # pending cells were never sent
    assert epoch(run["finished_at"]) - epoch(run["started_at"]) < limits["max_run_seconds"] + 1.0, run
    assert elapsed < limits["max_run_seconds"] + 2.0
    calls = _calls(api, run["id"])
    assert {c["error_class"] for c in calls} == {"timeout_total"}
    assert all(c["latency_s"] <= limits["total_timeout_s"] + 0.3 for c in calls), calls
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    assert rep["summary"]["targets"][0]["failure_classes"] == {"timeout_total": p["failed"]}


def test_fault_summary() -> None:
    """Printed with -rA: how many endpoint faults were tried through the service."""
    classes = sorted({FAULTS[n][1] for n in TRIED})
    print(f"\nendpoint faults tried: {len(TRIED)} of {len(FAULTS)}; error classes: {', '.join(classes)}")
    if len(TRIED) == len(FAULTS):                       # the whole module ran (not a -k selection)
        assert len(classes) >= 12
