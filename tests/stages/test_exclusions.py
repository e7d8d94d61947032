"""Named-history exclusions as stages (issue 13): canonical task identities (exact source, no aliasing),
the excluding cut, snapshot checks and bounds, and provenance through combine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.benchmarks.gpqa_diamond import GpqaDiamond
from srbench.benchmarks.mmlu_pro import MmluPro
from srbench.benchmarks.selection import order, select, select_excluding
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine
from srbench.rules.engine import MemoryActionCache
from srbench.schemas.dataset import Case, CaseMetadata, FrozenDataset, Message
from srbench.simulate import samples
from srbench.stages.datasets import exclusions as ex
from srbench.stages.datasets.build import combine, decode_cases, prepare

SMALL = {"smoke": 2, "quick": 6, "standard": 10}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(MmluPro, "profiles", dict(SMALL))
    monkeypatch.setattr(GpqaDiamond, "profiles", dict(SMALL))
    store = ObjectStore(str(tmp_path / "cas"))
    roots = {"mmlu-pro": samples.write_mmlu_pro(tmp_path / "mmlu"),
             "gpqa-diamond": samples.write_gpqa(tmp_path / "gpqa", rows=40)}
    return {"store": store, "engine": Engine(store, MemoryActionCache()), "roots": roots, "tmp": tmp_path}


def _prep(w: dict[str, Any], benchmark: str = "mmlu-pro", profile: str = "quick", *, revision: str = "rev-1",
          **kw: Any) -> FrozenDataset:
    bench = get_benchmark(benchmark)
    got = acquire(bench, cache_dir=w["tmp"] / "cache", source_path=str(w["roots"][benchmark]), revision=revision)
    return prepare(w["engine"], benchmark, profile, 1, kw.pop("limit", None), got.files, revision=got.revision,
                   url=bench.source.url, origin=got.origin, **kw)[0]


def _cases(w: dict[str, Any], m: FrozenDataset) -> list[Case]:
    return decode_cases(w["store"].get_bytes(m.object))


def _snap(w: dict[str, Any], *manifests: FrozenDataset) -> str:
    return str(w["store"].put_json(ex.compile_snapshot(w["store"], list(manifests), []).model_dump(mode="json")))


def test_identity_names_the_exact_source_and_native_id(world: dict[str, Any]) -> None:
    a = {c.id: c.metadata.task_identity for c in _cases(world, _prep(world, partition="test"))}
    b = {c.id: c.metadata.task_identity for c in _cases(world, _prep(world, partition="test",
                                                                     revision="rev-2"))}
    assert a.keys() == b.keys() and not set(a.values()) & set(b.values())     # another revision: other identities
    bench = get_benchmark("mmlu-pro")
    src = ex.source_identity(_prep(world, partition="test").sources["mmlu-pro"])
    some = next(iter(a))
    assert a[some] == ex.task_identity("mmlu-pro", src, some.removeprefix("mmlu-pro/"))
    # tau3's native id keeps the domain; GPQA's is the full digest of the unformatted question
    tau = get_benchmark("tau3")
    meta = CaseMetadata(stratum="airline")
    toy = [Case(id=f"tau3/{d}/7", benchmark="tau3", messages=[Message(role="system", content="x")], answer=None,
                metadata=meta) for d in ("airline", "retail")]
    assert tau.native_ids(toy, {}) == {"tau3/airline/7": "airline/7", "tau3/retail/7": "retail/7"}
    gpqa = get_benchmark("gpqa-diamond")
    g = _prep(world, "gpqa-diamond", "smoke", partition="diamond")
    files = acquire(gpqa, cache_dir=world["tmp"] / "c", source_path=str(world["roots"]["gpqa-diamond"]),
                    revision="rev-1").files
    natives = gpqa.native_ids(_cases(world, g), files)
    assert all(v.startswith("b3:") and len(v) == 67 and k.endswith(v[3:27]) for k, v in natives.items())
    with pytest.raises(InvalidInput, match="partition 'test'"):
        _prep(world, "gpqa-diamond", "smoke", partition="test")
    assert bench.source_partition == "test" and gpqa.source_partition == "diamond"


def test_the_excluding_cut_keeps_the_order_and_the_count() -> None:
    cases = [Case(id=f"t/{i}", benchmark="t", messages=[Message(role="user", content=str(i))], answer="A",
                  metadata=CaseMetadata(stratum="s" + str(i % 3))) for i in range(30)]
    counts = {"smoke": 2, "quick": 5, "standard": 8}
    plain = select(cases, "standard", counts, 3)
    same, out = select_excluding(cases, "standard", counts, 3, set(), benchmark="t")
    assert [c.id for c in same] == [c.id for c in plain] and out == 5 and same[0].metadata.split == "holdout"
    ordered = [c.id for c in order(cases, 3)]
    named = set(ordered[5:9]) | {ordered[0]}               # a quick case counts once
    got, out = select_excluding(cases, "standard", counts, 3, named, benchmark="t")
    assert [c.id for c in got] == [i for i in ordered if i not in set(ordered[:5]) | named][:8] and out == 9
    with pytest.raises(InvalidInput, match="needs 8 tasks but only 7") as exc:
        select_excluding(cases, "standard", counts, 3, set(ordered[5:23]), benchmark="t")
    assert exc.value.code == "exclusion_shortfall"
    got, _ = select_excluding(cases, "quick", counts, 3, {ordered[0]}, 2, benchmark="t")
    assert [c.id for c in got] == ordered[1:3]


def test_cross_revision_history_fails_and_never_aliases(world: dict[str, Any]) -> None:
    old = _prep(world, partition="test", revision="rev-1")
    snap = _snap(world, old)
    with pytest.raises(InvalidInput, match="another source") as exc:
        _prep(world, "mmlu-pro", "standard", partition="test", revision="rev-2", role="holdout", snapshot=snap)
    assert exc.value.code == "source_mismatch" and "rev-1" in exc.value.message and "rev-2" in exc.value.message
    # a history of another benchmark only: nothing of this one is excluded but the quick cut
    g = _prep(world, "gpqa-diamond", "smoke", partition="diamond")
    held = _prep(world, "mmlu-pro", "standard", partition="test", role="holdout", snapshot=_snap(world, g))
    assert held.evaluation is not None
    assert held.evaluation["mmlu-pro"].history == 0 and held.evaluation["mmlu-pro"].excluded == 6


def test_snapshot_checks_and_bounds(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    q = _prep(world, partition="test")
    snapshot = ex.compile_snapshot(world["store"], [q], [])
    s = snapshot.model_dump(mode="json")
    assert ex.check_snapshot(s) == snapshot
    for bad, code in (({**s, "sha256": "0" * 64}, "snapshot_mismatch"), ({**s, "kind": "other"}, "invalid_input"),
                      ({**s, "extra": 1}, "invalid_input"), ([], "invalid_input")):
        with pytest.raises(InvalidInput) as exc:
            ex.check_snapshot(bad)
        assert exc.value.code == code
    plain = _prep(world)
    with pytest.raises(InvalidInput, match="without a canonical task identity") as exc:
        ex.compile_snapshot(world["store"], [plain], [])
    assert exc.value.code == "no_task_identity"
    monkeypatch.setattr(ex, "MAX_IDENTITIES", 5)
    with pytest.raises(InvalidInput, match="more than 5 task identities") as exc:
        ex.compile_snapshot(world["store"], [q], [])
    assert exc.value.code == "too_large"
    with pytest.raises(InvalidInput, match="more than 5"):
        ex.check_snapshot(s)
    monkeypatch.setattr(ex, "MAX_BYTES", 100)
    with pytest.raises(InvalidInput, match="bound of 100 dataset bytes") as exc:
        ex.compile_snapshot(world["store"], [q], [])
    assert exc.value.code == "too_large"
    with pytest.raises(InvalidInput, match="at least one"):
        ex.compile_snapshot(world["store"], [], [])


def test_combine_keeps_the_evaluation_and_a_plain_combine_is_unchanged(world: dict[str, Any]) -> None:
    snap = _snap(world, _prep(world, partition="test"))
    held = _prep(world, "mmlu-pro", "standard", partition="test", role="holdout", snapshot=snap)
    g = _prep(world, "gpqa-diamond", "standard")
    both, _ = combine(world["engine"], [held, g])
    assert both.evaluation == held.evaluation and any("does not certify" in n for n in both.notices)
    plain, _ = combine(world["engine"], [_prep(world, "mmlu-pro", "standard"), g])
    assert "evaluation" not in plain.model_dump() and both.id != plain.id
    assert plain.id.startswith("ds-") and plain.sources == {
        "gpqa-diamond": g.sources["gpqa-diamond"], "mmlu-pro": _prep(world, "mmlu-pro", "standard").sources["mmlu-pro"]}
