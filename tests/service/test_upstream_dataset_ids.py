"""Issue 30, item 6: datasets by the ids upstream's Dashboard can pass.

Upstream's Dashboard lists datasets, takes a dataset's ``id`` as given, and reads ``/datasets/{id}`` and
``/datasets/{id}/cases`` through its proxy, which forwards only a 64-hex id (`DashboardProxy`). Every
answer that hands a dataset out names it by its 64-hex id, sr-bench's ``ds-`` id riding along as
``ref``; every route that takes a dataset takes either (and the SHA-256 of its bytes), resolving to
the same dataset. Frozen plans keep naming the ``ds-`` id.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from srbench.stages.datasets.build import decode_cases

from .helpers import Api, freeze, manifest, single
from .upstream_client import DashboardProxy, UpstreamClient, UpstreamError, dataset, dataset_cases, datasets
from .upstream_client import prepare as upstream_prepare

HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
def proxy(service: Any) -> Any:
    client = UpstreamClient(service.url, service.store_dir, service.token)
    yield DashboardProxy(client)
    client.close()


def _names(d: dict[str, Any]) -> tuple[str, str]:
    assert HEX64.fullmatch(d["id"]) and d["ref"] == "ds-" + d["id"][:32], d
    return d["id"], d["ref"]


def test_every_listed_dataset_opens_through_upstreams_proxy(api: Api, prepare: Any, proxy: DashboardProxy) -> None:
    full = prepare("mmlu-pro")
    same_bytes = prepare("mmlu-pro", limit=full["case_count"])      # a custom subset: the same bytes, its own id
    assert same_bytes["sha256"] == full["sha256"] and same_bytes["id"] != full["id"]
    arc = prepare("arc-agi-2")
    combined = api.ok("POST", "/datasets/combine", {"manifests": [full, arc]})
    composed = api.ok("POST", "/datasets/compose", {"dataset_ids": [combined["id"]], "benchmarks": ["arc-agi-2"]})
    api.ok("POST", "/targets", {"targets": [single("t", "http://127.0.0.1:9/v1")]})
    no_dataset = {k: v for k, v in manifest(full, [{"id": "t"}]).items() if k != "dataset"}
    inline = freeze(api, no_dataset | {"cases": _cases(full)})       # inline cases: a dataset of the store
    listed = datasets(proxy)
    assert composed["dataset"]["id"] == arc["id"]                   # the same cases of arc: arc itself
    assert len(listed) == 5 and len({d["id"] for d in listed}) == 5
    by_ref = {d["ref"]: d for d in listed}
    assert inline["dataset"]["id"] in by_ref                         # the frozen plan names the ds- id
    for d in listed:
        wire, ref = _names(d)
        got = dataset(proxy, wire)                                   # as the Dashboard opens it: 200
        assert (got["id"], got["ref"], got["case_count"]) == (wire, ref, d["case_count"])
        assert got["provenance"]["sha256"] == d["sha256"] and got["manifest"]["id"] == wire
        page = dataset_cases(proxy, wire, limit=3)
        assert page["dataset_id"] == wire and len(page["cases"]) == min(3, d["case_count"])
        assert api.ok("GET", f"/datasets/{ref}")["id"] == wire       # sr-bench's own clients: the ref
    assert len(proxy.forwarded) == 1 + 2 * len(listed)
    # the answers that made them handed out the same ids
    for made in (full, same_bytes, arc, combined, composed["dataset"]):
        assert by_ref[made["ref"]]["id"] == made["id"]
    # the same bytes: each 64-hex id opens its own dataset; the sha256 opens the one with the smaller ref
    assert dataset(proxy, same_bytes["id"])["ref"] == same_bytes["ref"] != full["ref"]
    assert dataset(proxy, full["sha256"])["ref"] == min(full["ref"], same_bytes["ref"])
    # upstream's proxy refuses the ds- form before the service sees it (why the wire id is 64-hex)
    with pytest.raises(UpstreamError) as refused:
        dataset(proxy, full["ref"])
    assert refused.value.status == 404 and len(proxy.forwarded) == 3 + 2 * len(listed)


def _cases(ds: dict[str, Any]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in decode_cases(open(ds["path"], "rb").read())][:3]


def test_every_route_that_takes_a_dataset_takes_either_name(api: Api, service: Any, prepare: Any) -> None:
    full, arc = prepare("mmlu-pro"), prepare("arc-agi-2")
    # combine: printed manifests as answered (64-hex ids), or named by their refs: one dataset
    a = api.ok("POST", "/datasets/combine", {"manifests": [full, arc]})
    b = api.ok("POST", "/datasets/combine", {"manifests": [dict(full, id=full["ref"]), dict(arc, id=arc["ref"])]})
    assert _names(a) == _names(b)
    # compose by id, ref or the bytes' sha256: the same dataset
    composed = {api.ok("POST", "/datasets/compose", {"dataset_ids": [name], "benchmarks": ["mmlu-pro"]})["dataset"]["id"]
                for name in (a["id"], a["ref"], a["sha256"])}
    assert len(composed) == 1
    # the selection's source ids are 64-hex and compose takes them (as upstream's Dashboard sends them)
    sel = api.ok("GET", "/datasets/selection?profile=smoke")
    mmlu = next(x for x in sel["benchmarks"] if x["id"] == "mmlu-pro")
    assert mmlu["eligible"] and mmlu["source_ids"] == [full["id"]]
    # a preparation job's dataset and items name it by its 64-hex id too (upstream's job follower)
    client = UpstreamClient(service.url, service.store_dir, service.token)
    try:
        got = upstream_prepare(client, {"benchmarks": ["mmlu-pro", "arc-agi-2"], "profile": "smoke",
                                        "seed": full["seed"]})
        jobs = client.request("GET", "/dataset-preparations")["preparations"]
    finally:
        client.close()
    assert got["id"] == a["id"] and got["ref"] == a["ref"]
    assert {s for i in jobs[0]["items"] for s in i["source_ids"]} == {full["id"], arc["id"]}
    # exclusions: the same snapshot whichever name; it records the ds- ref (its bytes are unchanged)
    ident = api.ok("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke", "source": "mirror",
                                                  "source_partition": "evaluation"})
    snaps = [api.ok("POST", "/datasets/exclusions", {"dataset_ids": [name]}) for name in (ident["id"], ident["ref"])]
    assert snaps[0]["sha256"] == snaps[1]["sha256"]
    assert snaps[0]["references"]["datasets"][0]["id"] == ident["ref"]


def test_a_malformed_or_unknown_dataset_id_is_one_line(api: Api, prepare: Any) -> None:
    full = prepare("mmlu-pro")
    wire = full["id"]
    for bad in ("not-a-dataset", wire.upper(), wire + "0", "ds-" + wire, "ds-" + wire[:31]):
        for path in (f"/datasets/{bad}", f"/datasets/{bad}/cases"):
            msg = api.error("GET", path, None, 404, "not_found")
            assert "malformed" in msg and "64-hex" in msg and "\n" not in msg, msg
    # 64 hex digits whose first 32 are the dataset's but not the rest: not that dataset
    wrong = wire[:32] + ("0" if wire[32] != "0" else "1") + wire[33:]
    assert "no dataset" in api.error("GET", f"/datasets/{wrong}", None, 404, "not_found")
    assert "no dataset" in api.error("GET", "/datasets/ds-" + "0" * 32 + "/cases", None, 404, "not_found")
    msg = api.error("POST", "/datasets/compose", {"dataset_ids": ["ds-nope"], "benchmarks": ["mmlu-pro"]}, 404)
    assert "malformed" in msg, msg
