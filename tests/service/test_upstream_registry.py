"""Issue 30 (items 4 and 8): the store's ``targets.json`` as upstream's `target register --file` writes it,
read by the service beside ``POST /targets``; and the calls page's served model for a non-vLLM-SR router.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from srbench.schemas.target import Target
from srbench.service.wire import projections as wire
from srbench.stages.plan.freeze import check_frozen
from srbench.targets.routers import selected_model

from .helpers import Api, freeze, manifest, single

PRICE = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25, "output": 2.0}


def _register_like_upstream(store: Path, targets: Any) -> None:
    """What upstream's `target register` leaves on the store host: the validated list, indented."""
    (store / "targets.json").write_text(json.dumps(targets, indent=2) + "\n")


def test_the_store_targets_file_is_the_registry_upstream_writes(api: Api, service: Any, prepare: Any) -> None:
    store = service.store_dir
    assert api.ok("GET", "/targets") == {"targets": []}
    file_target = single("from-file", "http://127.0.0.1:9/v1", "m-file")
    _register_like_upstream(store, [file_target])
    assert api.ok("GET", "/targets")["targets"] == [{**Target.model_validate(file_target).model_dump(mode="json")}]
    # a plan names it like any registered target, and a proxied actor may use it unchanged
    ds = prepare("mmlu-pro")
    plan = freeze(api, manifest(ds, [{"id": "from-file"}]))
    assert plan["targets"][0]["base_url"] == "http://127.0.0.1:9/v1"
    named = Api(service.url, service.token)                  # as the Dashboard's proxy forwards a user
    named.http.headers.update({"X-SR-Bench-Actor-ID": "alice", "X-SR-Bench-Actor-Role": "write"})
    try:
        assert named.ok("POST", "/plans", {"manifest": manifest(ds, [file_target])})["total"] == ds["case_count"]
    finally:
        named.close()
    # the API route registers beside it; a later API registration of the same id is not undone by the file
    api.ok("POST", "/targets", {"targets": [single("from-file", "http://127.0.0.1:8/v1", "m-file")]})
    got = {t["id"]: t for t in api.ok("GET", "/targets")["targets"]}
    assert got["from-file"]["base_url"] == "http://127.0.0.1:8/v1"
    # upstream's {"targets": [...]} form, replaced in place: read again
    _register_like_upstream(store, {"targets": [file_target, single("second", "http://127.0.0.1:7/v1")]})
    got = {t["id"]: t for t in api.ok("GET", "/targets")["targets"]}
    assert set(got) == {"from-file", "second"} and got["from-file"]["base_url"] == "http://127.0.0.1:9/v1"


def test_a_bad_targets_file_is_one_line_and_registers_nothing(api: Api, service: Any) -> None:
    cases = [
        ("[", "not JSON"),
        ('{"targets": 3}', "must be a list of targets"),
        (json.dumps([{**single("a", "http://127.0.0.1:9/v1"), "api_key": "sk-secret"}]),
         "targets[0]: unsupported field(s) api_key"),
        (json.dumps([{**single("a", "http://127.0.0.1:9/v1"), "cost_mode": "router"}]),
         "targets[0].cost_mode: upstream's field has no meaning in sr-bench"),
        (json.dumps([single("a", "ftp://127.0.0.1:9/v1")]), "targets[0].base_url"),
        (json.dumps([single("a", "http://127.0.0.1:9/v1"), single("a", "http://127.0.0.1:8/v1")]),
         "duplicate target id(s): a"),
    ]
    for text, expected in cases:
        (service.store_dir / "targets.json").write_text(text)
        status, body = api.call("GET", "/targets")
        assert status == 400 and body["code"] == "invalid_target_registry", (text, body)
        assert expected in body["error"] and "\n" not in body["error"] and "sk-secret" not in body["error"], body
    (service.store_dir / "targets.json").unlink()
    assert api.ok("GET", "/targets") == {"targets": []}



def test_a_hostile_targets_file_neither_holds_nor_breaks_the_service(api: Api, service: Any) -> None:
    """A FIFO in the file's place held the service forever (its open() blocked the event loop on /setup);
    deep nesting was an internal RecursionError; `{"foo": []}` silently registered nothing; a huge file
    was read whole on every request. Each is now a one-line 400, /health keeps answering, and nothing
    is registered."""
    path = service.store_dir / "targets.json"
    os.mkfifo(path)
    for route in ("/targets", "/setup"):
        status, body = api.call("GET", route)
        assert status == 400 and "is not a regular file" in body["error"], (route, body)
    assert api.call("GET", "/health")[0] == 200
    path.unlink()
    path.mkdir()
    assert "is not a regular file" in api.call("GET", "/targets")[1]["error"]
    path.rmdir()
    cases = [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
             ('{"foo": []}', "must be a list of targets"),
             ('{"targets": [], "extra": 1}', "must be a list of targets"),
             (" " * (1024 * 1024 + 1), "at most 1048576"),
             (json.dumps([single(f"t{i}", "http://127.0.0.1:9/v1") for i in range(1001)]), "at most 1000")]
    for text, expected in cases:
        path.write_text(text)
        status, body = api.call("GET", "/targets")
        assert status == 400 and body["code"] == "invalid_target_registry", (text[:40], body)
        assert expected in body["error"] and "\n" not in body["error"], body
    path.unlink()
    assert api.ok("GET", "/targets") == {"targets": []}

def test_the_calls_page_names_the_model_a_litellm_router_served() -> None:
    target = Target.model_validate({"id": "ll", "kind": "mom", "base_url": "http://127.0.0.1:9/v1", "model": "grp",
                                    "router": "litellm", "prices": {"m-a": PRICE}, "max_inference_calls": 1})
    record = {"headers": {"x-litellm-model-name": "m-a", "x-litellm-model-id": "dep-1",
                          "x-litellm-attempted-retries": "0", "x-litellm-attempted-fallbacks": "0"},
              "response_model": "m-a"}
    assert selected_model(target, record) == "m-a"
    assert selected_model(None, {"headers": {"x-vsr-selected-model": "m-b"}}) == "m-b"     # no MoM: the header
    assert selected_model(target, {"headers": {}}) is None


def test_an_upstream_client_sees_every_run_without_a_cursor(api: Api, service: Any, prepare: Any) -> None:
    """Upstream's `runs` and Dashboard read one GET /runs and follow no cursor: more than the 200 runs a
    page used to hold are all there; a client asking for pages still gets keyset pages."""
    ds = prepare("mmlu-pro", limit=1)
    api.ok("POST", "/targets", {"targets": [single("dead", "http://127.0.0.1:9/v1")]})
    plan = check_frozen(wire.plan_from_wire(freeze(api, manifest(ds, [{"id": "dead"}]))))
    # 205 queued runs, created in the journal without being started (no dispatch: the list is the point)
    made = {service.service.runs.submit(plan, None)[0].id for _ in range(205)}
    every = api.ok("GET", "/runs")
    assert len(every["runs"]) == 205 and {r["id"] for r in every["runs"]} == made and every["next_cursor"] is None
    paged, after = [], None
    while True:
        page = api.ok("GET", "/runs?limit=100" + (f"&after={after}" if after else ""))
        paged += [r["id"] for r in page["runs"]]
        after = page["next_cursor"]
        if after is None:
            break
    assert paged == [r["id"] for r in every["runs"]]


def test_an_unchanged_targets_file_is_not_read_again(api: Api, service: Any, monkeypatch: Any) -> None:
    """Every targets/plans request checks the file: unchanged, that is one stat, not a read and a hash;
    changed in place (even to the same size), it is read and registered again."""
    from srbench.service.store import target_registry

    reads: list[Path] = []
    real = target_registry._read
    monkeypatch.setattr(target_registry, "_read", lambda p: reads.append(p) or real(p))
    _register_like_upstream(service.store_dir, [single("same", "http://127.0.0.1:7/v1")])
    time.sleep(2.1)                     # a file changed in the last 2 s is always read (racy timestamps)
    assert [t["base_url"] for t in api.ok("GET", "/targets")["targets"]] == ["http://127.0.0.1:7/v1"]
    n = len(reads)
    for _ in range(3):
        api.ok("GET", "/targets")
    assert len(reads) == n and n >= 1
    _register_like_upstream(service.store_dir, [single("same", "http://127.0.0.1:8/v1")])   # same size
    os.utime(service.store_dir / "targets.json", ns=(1, 1))   # even with a timestamp seen before
    assert [t["base_url"] for t in api.ok("GET", "/targets")["targets"]] == ["http://127.0.0.1:8/v1"]
    assert len(reads) > n
