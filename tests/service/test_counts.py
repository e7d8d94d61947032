"""Counts that must equal the fake endpoint's own request log (issue 27, item 3): per-role calls and
tokens over every cell of a run that mixes single calls (MMLU-Pro), judged single calls (SimpleQA) and
conversations (τ³: agent, user simulator, judge), and a router's model mix that counts each τ³ turn
at the model the router served it with — in the report and in `compare`, never "unattributed"."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from srbench.benchmarks.judge import JUDGE_GRADER
from srbench.service.api import responses as rs
from srbench.simulate import samples
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.tau_mini import REVISION, write_mini_domain
from srbench.simulate.tau_script import script_hook
from srbench.simulate.thread import SimulatorThread

from .helpers import PRICE, freeze, manifest, single

ROLE_OF_MODEL = {"agent-strong": "subject", "agent-weak": "subject", "sim-user": "user_simulator",
                 "judge-model": "judge"}


def _dataset(api: Any, tmp_path: Path, sources: dict[str, Path]) -> dict[str, Any]:
    tau = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "revision": REVISION,
                                               "source_path": str(write_mini_domain(tmp_path / "tau-src"))})
    mmlu = api.ok("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "smoke", "limit": 4,
                                                "source_path": str(sources["mmlu-pro"]),
                                                "revision": samples.SAMPLE_REVISION})
    sq = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke", "limit": 3,
                                              "source_path": str(samples.write_simpleqa(tmp_path / "sq")),
                                              "revision": "synthetic"})
    return api.ok("POST", "/datasets/combine", {"manifests": [tau, mmlu, sq]})


def _tokens(entries: list[dict[str, Any]]) -> dict[str, int]:
    return {"input": sum(e["usage"]["prompt_tokens"] for e in entries), "cached_input": 0, "cache_write": 0,
            "output": sum(e["usage"]["completion_tokens"] for e in entries)}


def test_role_counts_and_the_model_mix_equal_the_endpoint_log(api, service, sources, tmp_path) -> None:
    ds = _dataset(api, tmp_path, sources)
    router = RouterRule(strong="agent-strong", weak="agent-weak", long_prompt_chars=1500)
    models = [SimModel(n, skill=1.0) for n in ROLE_OF_MODEL]
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"]),
                         script=script_hook({"agent-strong"}, router)) as sim:
        api.ok("POST", "/targets", {"targets": [
            single("careful", sim.v1_url, "agent-strong"),
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "max_inference_calls": 1,
             "prices": {"agent-strong": PRICE, "agent-weak": PRICE}, "models": ["agent-strong", "agent-weak"],
             "config_hash": router.config_hash},
            single("user", sim.v1_url, "sim-user"), single("judge", sim.v1_url, "judge-model")]})
        (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps({
            "tau3": {"user_simulator": "user", "judge": "judge", "release": "1.0.1"},
            "simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
        plan = freeze(api, manifest(ds, [{"id": "careful"}, {"id": "mom"}]))
        run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
        assert api.wait(run_id, timeout=90)["status"] == "completed"
        log = [e for e in sim.log if e["completed"]]
    assert len(log) == len(sim.log)
    rep = api.ok("GET", f"/runs/{run_id}/report")
    by = {t["target_id"]: t for t in rep["summary"]["targets"]}

    # per role, summed over the two targets: the calls the endpoint answered and their tokens
    per_role: dict[str, list[dict[str, Any]]] = {}
    for e in log:
        per_role.setdefault(ROLE_OF_MODEL[e["model"]], []).append(e)
    assert set(per_role) == {"subject", "user_simulator", "judge"}
    for role, entries in per_role.items():
        assert sum(t["calls_by_role"].get(role, 0) for t in by.values()) == len(entries), role
        got = [t["tokens_by_role"][role] for t in by.values() if role in t["tokens_by_role"]]
        assert {k: sum(g[k] for g in got) for k in got[0]} == _tokens(entries), role
    assert sum(t["call_count"] for t in by.values()) == len(log)
    # each target's subject calls are its own endpoint's: the single model's, the router's
    routed = [e for e in log if e["endpoint"] == "router"]
    direct = [e for e in log if e["endpoint"] == "single" and e["model"] == "agent-strong"]
    assert by["mom"]["calls_by_role"]["subject"] == len(routed) and by["mom"]["tokens_by_role"]["subject"] == _tokens(routed)
    assert by["careful"]["calls_by_role"]["subject"] == len(direct)
    own = _tokens(direct)
    assert by["careful"]["tokens_by_role"]["subject"] == own == {k: by["careful"]["tokens"][k] for k in own}
    judged = [r for r in api.ok("GET", f"/runs/{run_id}/results?limit=500")["results"] if r.get("judge_call")]
    assert len(judged) == 6 and all(r["judge_usage"]["input"] > 0 for r in judged)   # 3 SimpleQA × 2 targets

    # the model mix: every τ³ turn counted at the model the router served it with
    mix = dict(sorted(Counter(e["model"] for e in routed).items()))
    assert len(mix) == 2                                  # long τ³ prompts go strong, short questions weak
    assert by["mom"]["routing"]["model_mix"] == mix and by["mom"]["routing"]["unattributed_calls"] == 0
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": run_id, "candidate_run_id": run_id})
    rs.Comparison.model_validate(cmp)          # the answer is its declared model (the stored comparison's fields)
    got = next(c for c in cmp["candidates"] if c["target_id"] == "mom")["routing"]
    assert got["model_mix"] == mix and got["unattributed_calls"] == 0 and got["answered_calls"] == len(routed)
    paired = next(c for c in rep["paired"]["candidates"] if c["target_id"] == "mom")["routing"]
    assert paired["model_mix"] == mix


def test_a_judge_key_missing_on_the_service_is_refused_before_any_call(api, service, tmp_path, monkeypatch) -> None:
    """Preflight checks every key the run needs — the judge's too, not only the subjects': a run whose
    judge key is unset would otherwise send every subject call and fail each judge call."""
    monkeypatch.delenv("H29_JUDGE_KEY", raising=False)
    sq = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke", "limit": 2,
                                              "source_path": str(samples.write_simpleqa(tmp_path / "sq")),
                                              "revision": "synthetic"})
    with SimulatorThread(models=[SimModel("subject-model", skill=1.0), SimModel("judge-model", skill=1.0)],
                         answer_key={}) as sim:
        api.ok("POST", "/targets", {"targets": [single("subject", sim.v1_url, "subject-model"),
                                                single("judge", sim.v1_url, "judge-model", api_key_env="H29_JUDGE_KEY")]})
        (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps({
            "simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
        plan = freeze(api, manifest(sq, [{"id": "subject"}]))
        err = api.error("POST", "/runs", {"manifest": plan}, 400, "preflight_failed")
        assert len(sim.log) == 0
    msg = json.dumps(err)
    assert "environment variable H29_JUDGE_KEY (target judge) is not set" in msg
    assert str(Path(service.store_dir).parent / (Path(service.store_dir).name + ".env")) in msg
