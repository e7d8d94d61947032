"""Issue 26 (item 1): the plan blocks that became models keep their bytes — benchmark options frozen for a
code benchmark (its sandbox grading options), ARC-AGI-2's attempts, τ³'s conversation roles and a judged
benchmark's judge; sampling and effective parameters with several generation fields; pinned source labels;
the dataset's evaluation roles. The digests were taken with the dict-typed planning code (before
BenchmarkOptions, GenerationParams and SourceLabel were built directly)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from srbench.benchmarks.tau3 import RELEASE, Tau3
from srbench.cas import ObjectStore, canonical_json
from srbench.schemas.dataset import Case, DatasetManifest
from srbench.schemas.target import Target
from srbench.stages.datasets.build import encode_cases
from srbench.stages.plan.freeze import build_plan, check_frozen

BENCHMARKS = ("livecodebench", "arc-agi-2", "tau3", "simpleqa-verified", "mmlu-pro")
PRICES = {"m": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}
PLAN_SHA256 = "b33fe0efff0ac28fed96ca2893b4f44be3794ddc59139f57d9f5a90c68966bba"
PLAN_BYTES_SHA256 = "b0cfe4af6c1fe1e406ddec39d67eafc654cccfab0dbda0f65a2a5b47f9df5672"


def _case(i: int, benchmark: str) -> Case:
    return Case.model_validate({"id": f"{benchmark}-{i}", "benchmark": benchmark,
                                "messages": [{"role": "user", "content": f"question {i}"}], "answer": "A",
                                "metadata": {"stratum": "all", "split": "dev", "source_revision": "r1"}})


def _target(tid: str, **params: Any) -> Target:
    return Target(id=tid, kind="single", base_url="http://127.0.0.1:9/v1", model="m", prices=PRICES,
                  request_params=params)


def _plan(root: Path) -> Any:
    store = ObjectStore(str(root))
    data = encode_cases([_case(i, b) for b in BENCHMARKS for i in range(2)])
    sha = hashlib.sha256(data).hexdigest()
    registered = DatasetManifest.model_validate({
        "id": "ds-2", "name": "ds", "path": "", "sha256": sha, "object": store.put_bytes(data), "case_count": 10,
        "profile": "smoke", "seed": 3, "split": "dev", "benchmarks": sorted(BENCHMARKS), "selection": {},
        "sources": {"mmlu-pro": {"url": "https://example.invalid/mmlu-pro", "revision": "r1", "files": [],
                                 "origin": "download", "check": "file-sha256"}},
        "evaluation": {"mmlu-pro": {"role": "retest", "snapshot_sha256": "c" * 64, "excluded": 4, "history": 2,
                                    "claims_disjoint": True}}})
    targets = {t.id: t for t in (_target("judge"), _target("sim", temperature=0.7),
                                 _target("strong", temperature=0.2, stop=["</s>"], seed=11,
                                         chat_template_kwargs={"enable_thinking": False}))}
    manifest = {"version": "sr-bench-1.0", "name": "options", "profile": "smoke", "seed": 3,
                "dataset": {"sha256": sha}, "targets": [{"id": "strong"}],
                "sampling": {"top_p": 0.9, "top_k": 20, "reasoning_effort": "low", "max_tokens": 1024},
                "limits": {"max_cost_usd": 2.0}}
    options = {"livecodebench": {"grader_version": "ignored", "test_timeout_s": 7},
               "arc-agi-2": {"attempts": 2},
               "tau3": {"release": RELEASE, "user_simulator": "sim", "judge": "judge"},
               "simpleqa-verified": {"judge": "judge", "grader_version": "sr-bench-reference-judge-v1"}}
    return build_plan(manifest, store, resolve_target=targets.get,
                      find_datasets=lambda s: [registered] if s == sha else [], options=options)


def test_options_sampling_sources_and_evaluation_keep_their_bytes(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(Tau3, "plan_problems", lambda self, cases: [])     # bytes, not this host's τ³ domains
    plan = _plan(tmp_path / "store")
    assert plan.plan_sha256 == PLAN_SHA256
    assert hashlib.sha256(canonical_json(plan.as_json())).hexdigest() == PLAN_BYTES_SHA256
    assert check_frozen(plan.as_json()).as_json() == plan.as_json()
    opts = plan.benchmark_options          # the fixture reaches every block it pins
    assert opts["tau3"].user_simulator == "sim" and opts["tau3"].judge == "judge" and opts["tau3"].grading
    assert opts["arc-agi-2"].attempts == 2 and opts["livecodebench"].grading["test_timeout_s"] == 7
    assert opts["simpleqa-verified"].judge == "judge" and set(plan.auxiliary_targets) == {"judge", "sim"}
    assert plan.targets[0].effective_params.body()["seed"] == 11 and plan.sampling.top_k == 20
    assert plan.dataset.evaluation and plan.dataset.sources and "mmlu-pro" in plan.dataset.sources
