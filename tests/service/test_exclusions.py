"""Named-history exclusions on the real service (issue 13: `dataset exclusions`, `dataset prepare
--source-partition --exclusion-snapshot --evaluation-role`): the snapshot holds identities and digests
only; a holdout standard cut is disjoint from the named history and from quick with the exact count, or
fails with nothing published; datasets without identity are refused with a clear line; retest needs no
snapshot; the read role and another owner's run are refused. MMLU-Pro's profiles are made small so the
synthetic 42-question source (3 per subject) holds quick + standard + a history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks.mmlu_pro import MmluPro
from srbench.cli.main import main as cli_main
from srbench.service.api.exclusions import ExclusionSnapshot
from srbench.service.api.responses import WireDataset
from srbench.stages.datasets import exclusions
from srbench.stages.datasets.build import decode_cases

from .helpers import REVISIONS, Api, freeze, manifest, single

SMALL = {"smoke": 2, "quick": 6, "standard": 10}


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    monkeypatch.setattr(MmluPro, "profiles", dict(SMALL))
    return SMALL


@pytest.fixture
def prep(api: Api, sources: dict[str, Path], small: dict[str, int]) -> Any:
    def _prep(profile: str = "quick", *, status: int = 200, seed: int = 1, **extra: Any) -> dict[str, Any]:
        body = {"benchmark": "mmlu-pro", "profile": profile, "seed": seed, "source_path": str(sources["mmlu-pro"]),
                "revision": REVISIONS["mmlu-pro"], **extra}
        got, data = api.post("/datasets/prepare", body)
        assert got == status, (got, data)
        return data
    return _prep


def _cases(service: Any, m: dict[str, Any]) -> list[Any]:
    return decode_cases(service.service.objects.get_bytes(m["object"]))


def _ids(service: Any, m: dict[str, Any]) -> set[str]:
    return {c.id for c in _cases(service, m)}


def _datasets(api: Api) -> list[str]:
    return sorted(d["id"] for d in api.ok("GET", "/datasets")["datasets"])


def test_the_snapshot_holds_identities_and_digests_never_a_question(api: Api, service: Any, prep: Any) -> None:
    quick = prep("quick", source_partition="test")
    assert quick["sources"]["mmlu-pro"]["partition"] == "test" and "evaluation" not in quick
    cases = _cases(service, quick)
    assert len({c.metadata.task_identity for c in cases}) == 6
    snap = api.ok("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]})
    ExclusionSnapshot.model_validate(snap)
    text = json.dumps(snap)
    for c in cases:                              # no question, option or answer body, no case id
        lines = [line.removeprefix("Question: ")[3 if line[1:3] == ". " else 0:]
                 for line in c.messages[0].content.splitlines() if len(line) > 12]
        assert lines and not [line for line in lines if line in text]
        assert c.id not in text
    assert '"answer"' not in text and '"messages"' not in text
    [fam] = snap["families"]
    assert fam["benchmark"] == "mmlu-pro" and fam["count"] == 6 and fam["source"]["partition"] == "test"
    assert fam["task_identities"] == sorted(c.metadata.task_identity for c in cases)
    assert snap["references"]["datasets"] == [{"id": quick["ref"], "sha256": quick["sha256"], "name": quick["name"],
                                               "case_count": 6}]
    assert "does not certify" in snap["limitation"]
    # immutable: the same names give the same snapshot, stored in the store under its sha256
    assert api.ok("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]}) == snap
    ref = service.service.journal.get_ref("exclusion-snapshot", snap["sha256"])
    assert service.service.objects.get_json(ref["object"]) == snap


def test_holdout_is_disjoint_from_the_named_history_and_quick_with_the_exact_count(
        api: Api, service: Any, prep: Any, sim: Any) -> None:
    quick = prep("quick", source_partition="test")
    used = prep("standard", source_partition="test")               # the plain standard cut: a history
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("dead", "http://127.0.0.1:9/v1", "dead")]})
    run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(used, [{"id": "strong"}, {"id": "dead"}]))})
    assert api.wait(run["id"], timeout=60)["status"] in ("completed", "failed")
    snap = api.ok("POST", "/datasets/exclusions", {"run_ids": [run["id"]]})
    assert snap["references"]["runs"][0]["case_count"] == 10     # every planned case, answered or failed
    assert snap["references"]["runs"][0]["plan_sha256"] == run["plan_sha256"]
    assert snap["families"][0]["count"] == 10
    holdout = prep("standard", source_partition="test", exclusion_snapshot=snap, evaluation_role="holdout")
    WireDataset.model_validate(holdout)
    chosen = _ids(service, holdout)
    assert len(chosen) == holdout["case_count"] == 10
    assert not chosen & _ids(service, quick) and not chosen & _ids(service, used)
    ev = holdout["evaluation"]["mmlu-pro"]
    assert ev == {"role": "holdout", "snapshot_sha256": snap["sha256"], "excluded": 16, "history": 10,
                  "claims_disjoint": True}
    assert holdout["name"] == "mmlu-pro/standard/holdout" and holdout["id"] != used["id"]
    assert any("does not certify" in n for n in holdout["notices"])
    # by digest (the store holds it): the same dataset
    assert prep("standard", source_partition="test", exclusion_snapshot=snap["sha256"],
                evaluation_role="holdout")["id"] == holdout["id"]
    # the provenance stays through the dataset detail, a combine and a frozen plan
    detail = api.ok("GET", f"/datasets/{holdout['id']}")
    assert detail["provenance"]["evaluation"] == holdout["evaluation"]
    assert detail["provenance"]["sources"][0]["partition"] == "test"
    plan = freeze(api, manifest(holdout, [{"id": "strong"}]))
    assert plan["dataset"]["evaluation"] == holdout["evaluation"]
    assert any("does not certify" in n for n in plan["notices"])
    composed = api.ok("POST", "/datasets/compose", {"dataset_ids": [holdout["id"]], "benchmarks": ["mmlu-pro"]})
    assert composed["dataset"]["evaluation"] == holdout["evaluation"]
    held_run = api.ok("POST", "/runs", {"manifest": plan})
    api.wait(held_run["id"])
    assert any("does not certify" in n for n in api.ok("GET", f"/runs/{held_run['id']}/report")["limitations"])


def test_a_shortfall_fails_and_publishes_nothing(api: Api, service: Any, prep: Any, small: dict[str, int],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    used = prep("standard", source_partition="test")
    snap = api.ok("POST", "/datasets/exclusions", {"dataset_ids": [used["id"]]})
    monkeypatch.setattr(MmluPro, "profiles", {**small, "standard": 30})    # 42 - 6 quick - 10 named = 26 left
    before = _datasets(api)
    err = prep("standard", status=400, source_partition="test", exclusion_snapshot=snap, evaluation_role="holdout")
    assert err["code"] == "exclusion_shortfall" and "needs 30 tasks but only 26" in err["error"], err
    assert _datasets(api) == before
    # the same through a preparation job: it fails, nothing is registered
    job = api.ok("POST", "/dataset-preparations", {"benchmark": "mmlu-pro", "profile": "standard", "seed": 1,
                                                   "source_partition": "test", "evaluation_role": "holdout",
                                                   "exclusion_snapshot": snap["sha256"]})["preparation"]
    assert job["exclusion_snapshot"] == snap["sha256"] and job["evaluation_role"] == "holdout"
    deadline = __import__("time").monotonic() + 60
    while job["status"] not in ("completed", "failed"):
        assert __import__("time").monotonic() < deadline, job
        job = api.ok("GET", f"/dataset-preparations/{job['id']}")["preparation"]
    assert job["status"] == "failed" and _datasets(api) == before


def test_without_the_new_options_datasets_are_unchanged(api: Api, sources: dict[str, Path]) -> None:
    """Pinned from main before named-history exclusions existed (GPQA's sample CSV is byte-stable; the
    MMLU-Pro parquet's bytes name the pyarrow version, so only its cases' sha256 is pinned)."""
    def plain(benchmark: str, profile: str, seed: int) -> dict[str, Any]:
        return api.ok("POST", "/datasets/prepare", {"benchmark": benchmark, "profile": profile, "seed": seed,
                                                    "source_path": str(sources[benchmark]),
                                                    "revision": REVISIONS[benchmark]})
    g = plain("gpqa-diamond", "smoke", 7)
    assert (g["ref"], g["sha256"]) == ("ds-22a52bd323b359d4c50f39e0409ad7bc",
                                      "d77084249718ff5284ea853d5698ce0fab3409340be2d098b89686bb7bb2d67d")
    g = plain("gpqa-diamond", "quick", 1)
    assert (g["ref"], g["sha256"]) == ("ds-063c98dcc42a1d8c8c92eab9177f2c17",
                                      "9a68a986be75ec10c81ba37dfe79cddd2cfe9aae4462c3048bd4e3ef6ca1477b")
    m = plain("mmlu-pro", "smoke", 1)
    assert m["sha256"] == "e7dab6c1dc802ca6a60e675732d5c58616d97c79387a713173c3eca577201bb5"
    for d in (g, m):
        assert "evaluation" not in d and "partition" not in next(iter(d["sources"].values()))


def test_a_dataset_without_identity_is_refused_with_a_clear_line(api: Api, service: Any, prep: Any, sim: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    plain = prep("quick")
    msg = api.error("POST", "/datasets/exclusions", {"dataset_ids": [plain["id"]]}, 400, "no_task_identity")
    assert plain["id"] in msg and "--source-partition test" in msg and "never matches tasks by their text" in msg
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    run = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(plain, [{"id": "strong"}]))})
    api.wait(run["id"])
    msg = api.error("POST", "/datasets/exclusions", {"run_ids": [run["id"]]}, 400, "no_task_identity")
    assert run["id"] in msg and plain["id"] in msg
    assert api.error("POST", "/datasets/exclusions", {"dataset_ids": ["ds-nope"]}, 404, "not_found")
    assert api.error("POST", "/datasets/exclusions", {}, 400, "invalid_input")
    quick = prep("quick", source_partition="test")
    monkeypatch.setattr(exclusions, "MAX_IDENTITIES", 5)                # an oversized history: nothing stored
    assert "more than 5" in api.error("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]}, 400, "too_large")
    assert service.service.journal.list_refs("exclusion-snapshot") == []
    assert "partition 'test'" in api.error("POST", "/datasets/prepare", {
        "benchmark": "mmlu-pro", "profile": "quick", "source_partition": "validation"}, 400, "invalid_input")


def test_the_options_are_checked_and_retest_needs_no_snapshot(api: Api, service: Any, prep: Any) -> None:
    quick = prep("quick", source_partition="test")
    retest = prep("quick", source_partition="test", evaluation_role="retest")
    assert retest["evaluation"]["mmlu-pro"] == {"role": "retest", "snapshot_sha256": None, "excluded": 0,
                                                "history": 0, "claims_disjoint": False}
    assert _ids(service, retest) == _ids(service, quick) and retest["id"] != quick["id"]
    assert retest["sha256"] != quick["sha256"]                        # the role is in the bytes: plans tell them apart
    assert {c.metadata.evaluation_role for c in _cases(service, retest)} == {"retest"}
    assert any("retest families" in n and "mmlu-pro" in n for n in retest["notices"])
    assert not any("does not certify" in n for n in retest["notices"])        # no snapshot, no disjointness claim
    plan = freeze(api, manifest(retest, [single("t", "http://127.0.0.1:9/v1")]))
    assert plan["dataset"]["evaluation"] == retest["evaluation"]
    assert any("retest families" in n and "mmlu-pro" in n for n in plan["notices"])
    # a snapshot given with retest still excludes (the quick cut itself here)
    snap = api.ok("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]})
    again = prep("quick", source_partition="test", evaluation_role="retest", exclusion_snapshot=snap)
    assert not _ids(service, again) & _ids(service, quick) and again["case_count"] == 6
    assert again["evaluation"]["mmlu-pro"]["claims_disjoint"] is False
    bad = prep("standard", status=400, source_partition="test", evaluation_role="holdout")
    assert "--exclusion-snapshot" in bad["error"] and "retest" in bad["error"]
    assert "needs --source-partition" in prep("standard", status=400, exclusion_snapshot=snap,
                                              evaluation_role="holdout")["error"]
    assert prep("standard", status=400, source_partition="test", evaluation_role="final")["code"] == "invalid_input"
    edited = {**snap, "families": [{**snap["families"][0], "task_identities": snap["families"][0]["task_identities"][1:],
                                    "count": 5}]}
    err = prep("standard", status=400, source_partition="test", exclusion_snapshot=edited, evaluation_role="holdout")
    assert err["code"] == "snapshot_mismatch", err
    assert prep("standard", status=404, source_partition="test", exclusion_snapshot="0" * 64,
                evaluation_role="holdout")["code"] == "not_found"


def test_the_read_role_and_another_owners_run(api: Api, service: Any, prep: Any, sim: Any) -> None:
    from .test_actors import _as

    quick = prep("quick", source_partition="test")
    viewer, bob, alice = _as(service, "viewer", "read"), _as(service, "bob", "write"), _as(service, "alice", "write")
    try:
        before = service.service.journal.list_refs("exclusion-snapshot")
        assert viewer.error("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]}, 403, "read_only")
        assert service.service.journal.list_refs("exclusion-snapshot") == before == []
        api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
        run = alice.ok("POST", "/runs", {"manifest": freeze(alice, manifest(quick, [{"id": "strong"}]))})
        api.wait(run["id"])
        assert bob.error("POST", "/datasets/exclusions", {"run_ids": [run["id"]]}, 404, "not_found")
        assert alice.ok("POST", "/datasets/exclusions", {"run_ids": [run["id"]]})["families"][0]["count"] == 6
        assert bob.ok("POST", "/datasets/exclusions", {"dataset_ids": [quick["id"]]})["families"][0]["count"] == 6
    finally:
        for a in (viewer, bob, alice):
            a.close()


def test_cli_snapshot_files_fail_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SR_BENCH_URL", raising=False)
    garbled = tmp_path / "garbled.json"
    garbled.write_text('{"kind": "sr-bench-exclusion-snapshot", "families": [')
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    other = tmp_path / "other.json"
    other.write_text('{"datasets": []}')
    for path, expected in ((tmp_path / "missing.json", "no such file"), (garbled, "not valid JSON"),
                           (binary, "not UTF-8 JSON"), (other, "not an exclusion snapshot")):
        with pytest.raises(SystemExit) as exc:
            cli_main(["--store", str(tmp_path / "store"), "dataset", "prepare", "--benchmark", "mmlu-pro",
                      "--profile", "standard", "--source-partition", "test", "--evaluation-role", "holdout",
                      "--exclusion-snapshot", str(path)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and expected in err and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
    assert not (tmp_path / "store").exists()                            # refused before any service started
