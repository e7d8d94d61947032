"""Byte pins of the dataset stages (issue 26, item 1), taken from main before their manifests, snapshots
and rule inputs became models: the digest of every stored manifest object (the prepare and combine rules'
outputs), the ids they name (plain, with a source partition, a retest role, an excluding holdout cut and
a combination), the exclusion snapshot's sha256 and object digest, and each manifest's 64-hex wire id.
GPQA's sample CSV is byte-stable (MMLU-Pro's parquet names the pyarrow version), so only GPQA is pinned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.benchmarks.gpqa_diamond import GpqaDiamond
from srbench.benchmarks.simpleqa_verified import SimpleQaVerified
from srbench.cas import ObjectStore
from srbench.cas.digest import digest_json
from srbench.errors import InvalidInput
from srbench.rules import Engine
from srbench.rules.engine import MemoryActionCache
from srbench.simulate import samples
from srbench.stages.datasets import exclusions as ex
from srbench.stages.datasets.build import combine, dataset_digest, prepare

SMALL = {"smoke": 2, "quick": 6, "standard": 10}


def _json(value: Any) -> Any:
    """A stage's answer as JSON, whether it is handed out as a model or as a dict."""
    return value if isinstance(value, dict) else value.model_dump(mode="json")


def _wire(m: dict[str, Any]) -> str:
    return dataset_digest(m["sha256"], m["sources"], m["profile"], m["seed"], bool(m.get("custom_subset")),
                          m["selection"], m.get("evaluation"))


@pytest.fixture
def gpqa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(GpqaDiamond, "profiles", dict(SMALL))
    monkeypatch.setattr(SimpleQaVerified, "profiles", dict(SMALL))
    store = ObjectStore(str(tmp_path / "cas"))
    engine = Engine(store, MemoryActionCache())
    roots = {"gpqa-diamond": samples.write_gpqa(tmp_path / "g", rows=40),
             "simpleqa-verified": samples.write_simpleqa(tmp_path / "s", rows=12)}

    def prep(profile: str, benchmark: str = "gpqa-diamond", **kw: Any) -> Any:
        bench = get_benchmark(benchmark)
        got = acquire(bench, cache_dir=tmp_path / "cache", source_path=str(roots[benchmark]), revision="rev-1")
        m, _ = prepare(engine, benchmark, profile, 1, kw.pop("limit", None), got.files, revision=got.revision,
                       url=bench.source.url, origin=got.origin, **kw)
        return m
    return store, engine, prep


def test_dataset_manifests_ids_and_snapshots_keep_their_bytes(gpqa: Any) -> None:
    store, engine, prep = gpqa
    got: dict[str, tuple[str, str, str]] = {}
    plain = prep("smoke")
    limited = prep("quick", limit=3)
    quick = prep("quick", partition="diamond")
    retest = prep("smoke", partition="diamond", role="retest")
    snap = _json(ex.compile_snapshot(store, [quick], []))
    snap_digest = store.put_json(snap)
    held = prep("standard", partition="diamond", role="holdout", snapshot=snap_digest)
    other = prep("smoke", "simpleqa-verified")
    both = combine(engine, [retest, other])[0]
    for name, m in (("plain", plain), ("limited", limited), ("quick", quick), ("retest", retest), ("held", held),
                    ("other", other), ("combined", both)):
        got[name] = (_json(m)["id"], digest_json(_json(m)), _wire(_json(m)))
    got["snapshot"] = (snap["sha256"], snap_digest, digest_json(snap))
    assert got == EXPECTED
    assert ex.check_snapshot(snap).model_dump(mode="json") == snap


EXPECTED: dict[str, tuple[str, str, str]] = {
    "plain": ("ds-3b0181dc7f1cc9ad719eacaa7f5bf068",
              "b3:bd0a748f19c698ca9df2804cce5f34ba5bac26eb7c5191e80c2d84492b98406b",
              "3b0181dc7f1cc9ad719eacaa7f5bf068e3547f7d67e8da2d4af433b77708ceb6"),
    "limited": ("ds-6e5f25c8770ba3b9260823eab2a55f3e",
                "b3:6ff1d46c47273f92ed474174d6fd26b07ff50d433f48f1f7c7a715adab338905",
                "6e5f25c8770ba3b9260823eab2a55f3e23e0ac2f59d33c24716f5e21170d831f"),
    "quick": ("ds-4daf9b2a1c9deec9c9d7d500b5cc858b",
              "b3:c08c0b00adeef1580bf8cd3f88520ef2ce278f94aa71036b69949f3dd9d037b7",
              "4daf9b2a1c9deec9c9d7d500b5cc858bcf8126aaf1b364cd84ba95c822795ff4"),
    "retest": ("ds-3e4716dd6f6b0a0f4da09c30662f5e33",
               "b3:cfbcbcf7b2cdc23b572a5099559b982295d639b62259d01ec7291dded8948069",
               "3e4716dd6f6b0a0f4da09c30662f5e33f2c6cae03eda8e1e57ac9b9767d60c68"),
    "held": ("ds-74870a8139e53402f8a4f78593bebe98",
             "b3:b7c7d51c390f1b423fe275a6cee8f01f9d01a01a36d4724ac6049d5052427ef3",
             "74870a8139e53402f8a4f78593bebe981267f8783827c626709546060014b86f"),
    "other": ("ds-b0bff43dd65d48abe5bb0598c877c5f4",
              "b3:b7f65785e8b51140da3e5b7551ea99a76afa9cfb4bb5fcb494681f59ef918c6b",
              "b0bff43dd65d48abe5bb0598c877c5f45119c3dc4b3c4b73a79cd93858a9eda1"),
    "combined": ("ds-296e0a166beb4c35a3e574f1bfb02900",
                 "b3:f251c0e7f98edd5b73d1673c3ee9a6126e0b9fafc269e8a45913035bfe8921fa",
                 "296e0a166beb4c35a3e574f1bfb02900304871c5a218927f33091caf580252fd"),
    "snapshot": ("d6fb4ac3f754f18499c9e1017f35d4ff86408299b25f95f18241ad22c6670cfa",
                 "b3:00bd6dd8c69766e2cba31496c86cdeacee3190323076379bd4dc839eee7bfdab",
                 "b3:00bd6dd8c69766e2cba31496c86cdeacee3190323076379bd4dc839eee7bfdab"),
}


@pytest.mark.parametrize("benchmark", ["mmlu-pro", "gpqa-diamond", "arc-agi-2", "livecodebench"])
def test_a_source_path_that_does_not_exist_is_named_as_such(benchmark: str, tmp_path: Path) -> None:
    """`--source-path nope` said 'data/test-00000-of-00001.parquet not found under nope' (as if the folder were
    there without its file)."""
    missing = tmp_path / "dáta with space" / "nope"
    with pytest.raises(InvalidInput) as refused:
        acquire(get_benchmark(benchmark), cache_dir=tmp_path / "cache", source_path=str(missing), revision="r1")
    assert refused.value.message == (
        f"--source-path {missing}: no such file or directory on the service's host (give the local copy of "
        f"{benchmark}, laid out like its upstream repository, or its native file)")
