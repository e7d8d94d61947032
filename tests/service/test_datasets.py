"""Dataset endpoints of the real service (DS-2, DS-8, DS-9, UI-3): prepare, --limit, combine, the case view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from srbench.client.embedded import EmbeddedService
from srbench.simulate.samples import SAMPLE_REVISION

from .helpers import Api


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_limit_is_a_labelled_custom_subset_with_its_own_id(prepare) -> None:
    full = prepare("mmlu-pro")
    sub = prepare("mmlu-pro", limit=5)
    assert full["custom_subset"] is False and not any("custom subset" in n for n in full["notices"])
    assert sub["custom_subset"] is True and sub["case_count"] == 5
    assert any("custom subset" in n for n in sub["notices"]), sub["notices"]
    assert sub["selection"]["mmlu-pro"]["limit"] == 5 and sub["selection"]["mmlu-pro"]["custom_subset"] is True
    assert sub["id"] != full["id"] and sub["sha256"] != full["sha256"] and sub["name"] != full["name"]
    # the full dataset's frozen file is untouched (DS-8)
    assert prepare("mmlu-pro") == full


def test_prepare_twice_is_byte_identical(api, sources, tmp_path) -> None:
    body = {"benchmark": "gpqa-diamond", "profile": "smoke", "seed": 7, "source_path": str(sources["gpqa-diamond"]),
            "revision": SAMPLE_REVISION}
    first = api.http.post("/datasets/prepare", json=body)
    second = api.http.post("/datasets/prepare", json=body)
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    m = first.json()
    assert len(m["id"]) == len(m["sha256"]) == 64 and m["ref"] == "ds-" + m["id"][:32] and m["seed"] == 7
    # another store (another host) freezes the same dataset: same id, bytes and object
    with EmbeddedService(tmp_path / "other-store") as other:
        o = Api(other.url, other.token)
        again = o.ok("POST", "/datasets/prepare", body)
        o.close()
    assert {k: again[k] for k in ("id", "sha256", "object", "sources", "selection")} == \
        {k: m[k] for k in ("id", "sha256", "object", "sources", "selection")}
    assert again["path"] != m["path"]
    assert Path(again["path"]).read_bytes() == Path(m["path"]).read_bytes()


def test_combine_refuses_different_seed_or_profile_naming_both(api, prepare) -> None:
    a = prepare("mmlu-pro", seed=1)
    b = prepare("arc-agi-2", seed=2)
    msg = api.error("POST", "/datasets/combine", {"manifests": [a, b]}, 400, "invalid_input")
    assert a["id"] in msg and b["id"] in msg, msg
    assert "seed 1" in msg and "seed 2" in msg, msg
    c = prepare("gpqa-diamond", profile="quick", seed=1)
    msg = api.error("POST", "/datasets/combine", {"manifests": [a, c]}, 400, "invalid_input")
    assert a["id"] in msg and c["id"] in msg and "profile smoke" in msg and "profile quick" in msg, msg
    assert len(api.ok("GET", "/datasets")["datasets"]) == 3          # nothing merged silently


def test_combine_refuses_an_edited_manifest_and_combines_a_clean_pair(api, prepare) -> None:
    a, b = prepare("mmlu-pro"), prepare("arc-agi-2")
    edited = dict(b, sha256="0" * 64)
    msg = api.error("POST", "/datasets/combine", {"manifests": [a, edited]}, 400)
    assert "sha256" in msg and b["id"] in msg, msg
    combined = api.ok("POST", "/datasets/combine", {"manifests": [a, b]})
    assert combined["case_count"] == a["case_count"] + b["case_count"] == 16
    assert combined["benchmarks"] == ["arc-agi-2", "mmlu-pro"] and combined["seed"] == a["seed"]


def test_combine_is_order_free(api, prepare) -> None:
    """The same cases give the same dataset whatever order the inputs come in, at once or in steps."""
    a, b, c = prepare("mmlu-pro"), prepare("arc-agi-2"), prepare("gpqa-diamond")
    abc = api.ok("POST", "/datasets/combine", {"manifests": [a, b, c]})
    cba = api.ok("POST", "/datasets/combine", {"manifests": [c, b, a]})
    ab = api.ok("POST", "/datasets/combine", {"manifests": [b, a]})
    stepwise = api.ok("POST", "/datasets/combine", {"manifests": [c, ab]})
    for other in (cba, stepwise):
        assert (other["id"], other["sha256"], other["object"], other["name"]) == \
            (abc["id"], abc["sha256"], abc["object"], abc["name"])
    assert abc["benchmarks"] == ["arc-agi-2", "gpqa-diamond", "mmlu-pro"]
    cases = api.ok("GET", f"/datasets/{abc['id']}/cases?limit=100")["cases"]
    order = [x["benchmark"] for x in cases]
    assert order == sorted(order)
    # each benchmark keeps its own selection order
    mmlu = [x["id"] for x in api.ok("GET", f"/datasets/{a['id']}/cases?limit=100")["cases"]]
    assert [x["id"] for x in cases if x["benchmark"] == "mmlu-pro"] == mmlu


def test_case_view_never_returns_answers(api, prepare) -> None:
    for m in (prepare("mmlu-pro"), prepare("arc-agi-2")):
        page = api.ok("GET", f"/datasets/{m['id']}/cases?limit=25")
        assert page["total"] == m["case_count"] == len(page["cases"])
        assert "answer" not in _keys(page), _keys(page)
        assert all(c["metadata"]["split"] == "dev" and c["messages"] for c in page["cases"])
    other = api.ok("GET", f"/datasets/{m['id']}/cases?benchmark=mmlu-pro")     # m is the ARC set
    assert other["total"] == 0 and other["cases"] == []


def test_objects_endpoint_never_returns_a_frozen_dataset(api, prepare) -> None:
    m = prepare("arc-agi-2")
    status, data = api.get(f"/objects/{m['object']}")
    assert status == 404 and "answer" not in str(data).replace("reference answers", ""), data
    assert api.get("/objects/not-a-digest")[0] == 400


def test_profile_too_small_for_the_source_is_a_clear_400(api, sources) -> None:
    msg = api.error("POST", "/datasets/prepare", {
        "benchmark": "mmlu-pro", "profile": "quick", "source_path": str(sources["mmlu-pro"]),
        "revision": SAMPLE_REVISION}, 400, "invalid_input")
    assert "quick" in msg and "500" in msg and "42" in msg, msg
    assert api.ok("GET", "/datasets")["total"] == 0


def test_a_cases_page_builds_the_views_of_its_own_cases_only(api, prepare, monkeypatch) -> None:
    """Issue 42, item 5: a page of a dataset's cases costs its page, not the dataset — the public view of a case
    is built for the page's cases only (it was built for every case of the dataset at each request), and the
    filters (benchmark, category, text) give the same pages as the views they are read from."""
    from srbench.service.datasets import views

    m = prepare("mmlu-pro")
    every = api.ok("GET", f"/datasets/{m['id']}/cases?limit=100")
    built: list[str] = []
    real = views.public_case
    monkeypatch.setattr(views, "public_case", lambda case: built.append(case.id) or real(case))
    page = api.ok("GET", f"/datasets/{m['id']}/cases?offset={every['total'] - 3}&limit=2")
    assert page["cases"] == every["cases"][-3:-1] and page["total"] == every["total"] > 10
    assert built == [c["id"] for c in page["cases"]]
    category = every["cases"][-1]["category"]
    words = every["cases"][-1]["question"].split()[:3]
    for query, keep in ((f"category={category}", lambda c: c["category"] == category),
                        ("benchmark=mmlu-pro", lambda c: True), ("benchmark=gpqa-diamond", lambda c: False),
                        (f"q={'+'.join(words).upper()}", lambda c: " ".join(words).casefold() in
                         (c["id"] + "\n" + c["question"]).casefold())):
        got = api.ok("GET", f"/datasets/{m['id']}/cases?{query}&limit=100")
        assert got["cases"] == [c for c in every["cases"] if keep(c)] and got["total"] == len(got["cases"]), query
