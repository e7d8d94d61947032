"""Issue 12 end to end on the real service: a pinned router config is confirmed only by evidence (IT-2),
an unconfirmed one is never called an improvement; report and compare carry the published-rule figures
beside sr-bench's (MMLU-Pro chain, SimpleQA F1 with the official autorater prompt pinned)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from srbench.benchmarks.official_judges import SIMPLEQA_AUTORATER
from srbench.simulate import samples
from srbench.simulate.behaviour import MCQ_STYLES, RouterRule, SimModel, load_answer_key, messages_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import PRICE, freeze, manifest, single

PRICES = {"strong": PRICE, "weak": PRICE}


def _mom(tid: str, url: str, pin: str, preview: bool) -> dict:
    return {"id": tid, "kind": "mom", "base_url": url, "model": "MoM", "prices": PRICES, "config_hash": pin,
            "max_inference_calls": 1, "models": ["strong", "weak"], **({"preview_url": url + "/preview"} if preview else {})}


def _run(api, ds, targets) -> str:
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, targets))})["id"]
    api.wait(run_id)
    return run_id


def test_config_hash_needs_evidence_and_blocks_the_claim(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    models = [SimModel("strong", skill=1.0), SimModel("weak", skill=0.0)]
    speaking = RouterRule(strong="strong", weak="weak", long_prompt_chars=0, keywords=(), config_hash="cfg-1")
    silent = RouterRule(strong="strong", weak="weak", long_prompt_chars=0, keywords=(), config_hash="cfg-1",
                        reports_config_hash=False)
    key = load_answer_key(ds["path"])
    with SimulatorThread(models=models, router=speaking, answer_key=key) as sim, \
            SimulatorThread(models=models, router=silent, answer_key=key) as mute:
        api.ok("POST", "/targets", {"targets": [
            single("weak", sim.v1_url), _mom("mom", sim.router_url, "cfg-1", True),
            _mom("mom-no-probe", sim.router_url, "cfg-1", False), _mom("mom-silent", mute.router_url, "cfg-1", True),
            _mom("mom-other", sim.router_url, "cfg-2", True)]})
        base = _run(api, ds, [{"id": "weak"}])
        runs = {t: _run(api, ds, [{"id": t}]) for t in ("mom", "mom-no-probe", "mom-silent")}
        n_before = len(sim.log)
        runs["mom-other"] = _run(api, ds, [{"id": "mom-other"}])
        assert len(sim.log) == n_before            # a reported mismatch stops the run before any inference
    other = api.ok("GET", f"/runs/{runs['mom-other']}")
    assert other["status"] == "failed" and "config_hash" in other["error"] and other["progress"]["completed"] == 0

    expect = {"mom": (True, None), "mom-no-probe": (False, "no preview_url"),
              "mom-silent": (False, "probe before: missing")}
    for tid, (confirmed, reason) in expect.items():
        rep = api.ok("GET", f"/runs/{runs[tid]}/report")
        ev = rep["summary"]["targets"][0]["config_hash_evidence"]
        assert ev["confirmed"] is confirmed and ev["pinned"] == "cfg-1", ev
        assert ev["responses"] == 14
        assert ev["responses_with_header"] == (0 if tid == "mom-silent" else 14)
        named = [x for x in rep["limitations"] if f"Target {tid}: its pinned config_hash" in x]
        rows = [b for b in rep["benchmarks"] if b["target_id"] == tid]
        if confirmed:
            assert not named and all("limitations" not in b for b in rows)
        else:
            assert reason in ev["reason"] and len(named) == 1
            assert all(named[0] in b["limitations"] for b in rows)
        c = api.ok("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": runs[tid]})
        cand = c["candidates"][0]
        assert cand["delta"] == 1.0                     # every answer right against every answer wrong
        if confirmed:
            assert cand["claim"] == "improvement"
        else:
            assert cand["claim"] == "blocked" and cand["interval_claim"] == "improvement"
            assert any(f"Candidate {tid}" in x and "no improvement" in x for x in c["limitations"])
    events = api.ok("GET", f"/runs/{runs['mom-no-probe']}/events")["events"]
    assert [e["data"]["evidence"] for e in events if e["kind"] == "config_hash_checked"] == ["unavailable"] * 2


def _style(text: str) -> str:
    for name, template in MCQ_STYLES.items():
        if re.fullmatch(re.escape(template).replace(re.escape("{x}"), "[A-J]").replace(re.escape("{y}"), "[A-J]"),
                        text):
            return name
    raise AssertionError(text)


def test_published_figures_in_report_and_compare_with_the_official_autorater(api, prepare, service,
                                                                               tmp_path: Path) -> None:
    mm = prepare("mmlu-pro")
    src = samples.write_simpleqa(tmp_path / "sq")
    sq = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    ds = api.ok("POST", "/datasets/combine", {"manifests": [mm, sq]})
    styles = tuple(MCQ_STYLES)
    models = [SimModel("a", skill=0.7, mcq_styles=styles), SimModel("b", skill=0.5, mcq_styles=styles),
              SimModel("judge-model", skill=1.0)]
    (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps(
        {"simpleqa-verified": {"judge": "judge", "grader_version": SIMPLEQA_AUTORATER}}))
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url), single("b", sim.v1_url),
                                                single("judge", sim.v1_url, "judge-model")]})
        plan = freeze(api, manifest(ds, [{"id": "a"}]))
        assert plan["grader_versions"]["simpleqa-verified"] == SIMPLEQA_AUTORATER
        base = _run(api, ds, [{"id": "a"}])
        cand = _run(api, ds, [{"id": "b"}])
        log = list(sim.log)
    assert len([e for e in log if e["model"] == "judge-model"]) == 2 * 5
    rep = api.ok("GET", f"/runs/{base}/report")
    rows = api.ok("GET", f"/runs/{base}/results?offset=0&limit=100")["results"]
    calls = {r["cell_id"]: api.ok("GET", f"/objects/{r['call']}") for r in rows if r["call"]}
    # the judge saw the official template and answered with a letter
    judged = [r for r in rows if r["benchmark"] == "simpleqa-verified"]
    jcall = api.ok("GET", f"/objects/{judged[0]['judge_call']}")
    jreq = api.ok("GET", f"/objects/{jcall['request']}")
    assert "Gold target:" in jreq["body"]["messages"][0]["content"] and jcall["text"] in ("A", "B", "C")

    # MMLU-Pro: what each reply style gets under each rule (by reading them, as in test_golden.py):
    # "Answer: X" / "The answer is (X)" → X under both; "The correct option is X." → unparsed for
    # sr-bench, X (last standalone letter) for the chain; "I first thought the answer is Y, … the
    # answer is (X)" → ambiguous for sr-bench, Y (first "answer is") for the chain.
    cases = {c.id: c for c in decode_cases(Path(ds["path"]).read_bytes())}
    truth = {e["messages_digest"]: e["correct"] for e in log if e["model"] == "a"}
    mrows = [r for r in rows if r["benchmark"] == "mmlu-pro"]
    expect_sr = expect_pub = 0
    for r in mrows:
        text, case = calls[r["cell_id"]]["text"], cases[r["case_id"]]
        style, letters = _style(text), re.findall(r"\b[A-J]\b", text)
        right = truth[messages_key([m.model_dump() for m in case.messages])]
        expect_sr += style in ("answer_colon", "answer_is") and right
        expect_pub += (style != "second_thought" and right) or (style == "second_thought" and letters[0] == case.answer)
        assert r["grade_status"] == {"option": "unparsed", "second_thought": "ambiguous"}.get(
            style, "correct" if right else "incorrect")
    brow = next(b for b in rep["benchmarks"] if b["benchmark"] == "mmlu-pro")
    assert brow["correct"] == expect_sr
    pub = brow["published"]
    assert pub["rule"] == "mmlu-pro-official-chain-v1" and pub["score"] == expect_pub / len(mrows)
    differ = sum(1 for r in mrows if float(bool(r["correct"])) != r["published_score"])
    assert pub["graded_differently"] == differ and differ > 0
    assert any(x.startswith("mmlu-pro: the published rule") and f"grades {differ} of" in x for x in rep["limitations"])

    # SimpleQA: F1 is the headline, accuracy beside it, both from the autorater's letters
    srow = next(b for b in rep["benchmarks"] if b["benchmark"] == "simpleqa-verified")
    assert srow["sr_bench_rule"] == SIMPLEQA_AUTORATER and srow["headline"]["metric"] == "f1"
    assert srow["published"]["judge"] == SIMPLEQA_AUTORATER
    letters = [api.ok("GET", f"/objects/{r['judge_call']}")["text"] for r in judged if r["judge_call"]]
    n = len(judged)
    acc, att = letters.count("A") / n, letters.count("A") + letters.count("B")
    cga = letters.count("A") / att if att else 0.0
    f1 = 2 * acc * cga / (acc + cga) if acc + cga else 0.0
    assert abs(srow["headline"]["value"] - f1) < 1e-12 and abs(srow["published"]["score"] - f1) < 1e-12
    assert srow["accuracy"] == acc

    # compare shows both rules for both sides
    c = api.ok("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand})
    pm = next(p for p in c["published"] if p["benchmark"] == "mmlu-pro")
    assert pm["baseline_rules"]["published"] == pub["score"] and pm["baseline_rules"]["graded_differently"] == differ
    cb = next(b for b in api.ok("GET", f"/runs/{cand}/report")["benchmarks"] if b["benchmark"] == "mmlu-pro")
    assert pm["candidate_rules"]["published"] == cb["published"]["score"]
    assert c["aggregation"]["quality"].startswith("macro")


def test_margin_and_primary_benchmarks_declared_in_the_manifest(api, prepare) -> None:
    mm, arc = prepare("mmlu-pro"), prepare("arc-agi-2")
    ds = api.ok("POST", "/datasets/combine", {"manifests": [mm, arc]})
    models = [SimModel("strong", skill=0.8), SimModel("weak", skill=0.4)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url), single("weak", sim.v1_url)]})
        bad = manifest(ds, [{"id": "weak"}], statistics={"margin": 0.02, "primary_benchmarks": ["hle"]})
        assert "primary_benchmarks names hle" in api.error("POST", "/plans", {"manifest": bad}, 400)
        assert api.error("POST", "/plans", {"manifest": manifest(ds, [{"id": "weak"}], statistics={"margin": 2})}, 400)
        declared = manifest(ds, [{"id": "weak"}], statistics={"margin": 0.02, "primary_benchmarks": ["mmlu-pro"]})
        plan = freeze(api, declared)
        assert plan["statistics"] == {"margin": 0.02, "primary_benchmarks": ["mmlu-pro"], "claim_rule": "betting",
                                      "baseline_selection": "adjusted"}          # a new plan's defaults, recorded
        unsaid = freeze(api, manifest(ds, [{"id": "weak"}]))["statistics"]
        assert (unsaid["claim_rule"], unsaid["baseline_selection"], unsaid["margin"]) == ("betting", "adjusted", None)
        base = _run(api, ds, [{"id": "strong"}])
        cand = api.ok("POST", "/runs", {"manifest": plan})["id"]
        api.wait(cand)
        plain = _run(api, ds, [{"id": "weak"}])
    c = api.ok("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand})
    assert c["margin"] == 0.02 and c["margin_source"] == "declared in the plan"
    p = c["candidates"][0]["primary"]
    mm_row = next(b for b in c["candidates"][0]["benchmarks"] if b["benchmark"] == "mmlu-pro")
    assert p["benchmarks"] == ["mmlu-pro"] and p["delta"] == mm_row["delta"]
    assert any("arc-agi-2 are secondary" in x for x in c["limitations"])
    assert api.error("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": cand, "margin": 0.05},
                     400, "margin_conflict")
    post = api.ok("POST", "/comparisons", {"baseline_run_id": base, "candidate_run_id": plain,
                                           "margin": 0.05})
    ni = post["candidates"][0]["non_inferiority"]
    assert post["margin_source"].startswith("post hoc") and ni["label"] == "post hoc" and ni["non_inferior"] is None
