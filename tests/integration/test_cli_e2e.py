"""prepare → combine → plan → run → report through the CLI, the real service and a fake endpoint.

The figures in the report are checked against what the fake server really served: correct answers,
the four token buckets (with cached tokens) and the cost at the registered prices.
"""

from __future__ import annotations

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.benchmarks.mmlu_pro import MmluPro
from srbench.simulate.behaviour import SimModel
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread

PRICES = {"big": {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0},
          "tiny": {"input": 0.1, "cached_input": 0.05, "cache_write": 0.1, "output": 0.4}}


def expected(log: list[dict], model: str, endpoint: str) -> dict:
    served = [e for e in log if e["model"] == model and e["endpoint"] == endpoint and e["completed"]]
    inp = sum(e["usage"]["prompt_tokens"] - e["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
              for e in served)
    cached = sum(e["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0) for e in served)
    out = sum(e["usage"]["completion_tokens"] for e in served)
    p = PRICES[model]
    return {"n": len(served), "correct": sum(bool(e["correct"]) for e in served),
            "tokens": {"input": inp, "cached_input": cached, "cache_write": 0, "output": out},
            "cost": (inp * p["input"] + cached * p["cached_input"] + out * p["output"]) / 1e6}


def test_prepare_combine_plan_run_report(cli, sources) -> None:
    m1 = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                  "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    m2 = cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                  "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    for key in ("id", "name", "path", "sha256", "case_count", "profile", "seed", "split", "benchmarks", "sources",
                "selection"):
        assert key in m1
    assert (m1["case_count"], m2["case_count"]) == (14, 2)
    assert m1["sources"]["mmlu-pro"]["files"][0]["name"] == "data/test-00000-of-00001.parquet"
    combined = cli.json("dataset", "combine", cli.write("a.json", m1), cli.write("b.json", m2))
    assert combined["case_count"] == 16 and combined["benchmarks"] == ["arc-agi-2", "mmlu-pro"]

    models = [SimModel("big", skill=0.8, cached_fraction=0.5), SimModel("tiny", skill=0.3)]
    with SimulatorThread(models=models, answer_key=_key(combined["path"])) as sim:
        targets = [{"id": "big", "kind": "single", "base_url": sim.v1_url, "model": "big",
                    "prices": {"big": PRICES["big"]}},
                   {"id": "tiny", "kind": "single", "base_url": sim.v1_url, "model": "tiny",
                    "prices": {"tiny": PRICES["tiny"]}, "request_params": {"temperature": 0.2}}]
        assert cli.json("target", "register", "--file", cli.write("targets.json", targets))["registered"] == ["big", "tiny"]
        manifest = cli.cwd / "candidate.yaml"
        manifest.write_text(
            "version: sr-bench-1.0\nname: e2e\nprofile: smoke\nseed: 20260918\n"
            f"dataset: {{path: {combined['path']}, sha256: {combined['sha256']}}}\n"
            "targets: [{id: big}, {id: tiny}]\nlimits: {concurrency: 3, total_timeout_s: 20, idle_timeout_s: 5}\n")
        planned = cli.json("plan", "--manifest", str(manifest), "--output", str(cli.cwd / "frozen.json"))
        assert planned["total"] == 32 and planned["model_requests"] == 0 and sim.log == []
        run = cli.json("run", "--manifest", str(cli.cwd / "frozen.json"))
        assert run["status"] == "completed", run
        first = cli.run("report", run["run_id"], "--output", str(cli.cwd / "r.json"), "--explain")
        assert "rebuilt" in first.stderr or "up to date" in first.stderr
        second = cli.run("report", run["run_id"], "--explain")
        assert "up to date (cache hit)" in second.stderr
        import json

        report = json.loads(second.stdout)
        log = list(sim.log)
    assert len(log) == 32 and report["complete"] is True and report["status"] == "completed"
    rows = {t["target_id"]: t for t in report["summary"]["targets"]}
    for tid in ("big", "tiny"):
        want = expected(log, tid, "single")
        got = rows[tid]
        assert want["n"] == got["total"] == got["completed"] == 16
        assert got["correct"] == want["correct"]
        assert {k: got["tokens"][k] for k in want["tokens"]} == want["tokens"]    # upstream's names sit beside
        assert got["tokens"]["total_tokens"] == sum(want["tokens"].values())
        assert abs(got["cost_usd"] - want["cost"]) < 1e-12
        assert got["accuracy"] == want["correct"] / 16
    assert rows["big"]["tokens"]["cached_input"] > 0
    assert report["summary"]["total_spend_usd"] == rows["big"]["cost_usd"] + rows["tiny"]["cost_usd"]
    assert {b["benchmark"] for b in report["benchmarks"]} == {"mmlu-pro", "arc-agi-2"}
    assert report["provenance"]["plan_sha256"] == planned["plan_sha256"]
    # issue 27 item 1: the report says which source is not the pinned one, and which check the other passed
    assert (f"mmlu-pro: not the pinned source (revision {SAMPLE_REVISION}, pinned {MmluPro.source.revision}): not an "
            "sr-bench 1.0 result") in report["limitations"]
    assert ("arc-agi-2: pinned source, checked: the content sha256 of its canonical files equals the pin"
            in report["limitations"])
    calls = cli.json("show", run["run_id"], "--calls")
    assert calls["total"] == 32 and all(c["state"] == "completed" for c in calls["calls"])


def _key(path: str) -> dict:
    from srbench.simulate.behaviour import load_answer_key

    return load_answer_key(path)
