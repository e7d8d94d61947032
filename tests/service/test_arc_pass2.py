"""ARC-AGI-2 pass@2 (issue 12, item 1): two journaled attempts when the plan asks for them; sr-bench's
score keeps the first attempt (all-or-nothing), the published diagnostic is pass@2 per test input;
regrade recomputes the published-rule figures (and rebuilds when a published rule changes)."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections import Counter
from pathlib import Path

from tests.benchmarks.fixtures import conversation_record

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.benchmarks.published import ARC_PASS2_RULE, ARC_RULE, arc_pass2_grade
from srbench.benchmarks.published_grades import ArcPass2Published, published_json
from srbench.schemas.dataset import Case
from srbench.simulate.behaviour import SimModel, load_answer_key, messages_key
from srbench.simulate.scripted import Scripted
from srbench.simulate.thread import SimulatorThread

from .helpers import freeze, manifest, single


def _wrong(grids: list) -> list:
    out = copy.deepcopy(grids)
    out[0][0][0] = (out[0][0][0] + 1) % 10
    return out


def test_pass_at_2_end_to_end(api, service, prepare, monkeypatch) -> None:
    ds = prepare("arc-agi-2")
    cases = [json.loads(line) for line in Path(ds["path"]).read_text().splitlines()]
    assert len(cases) == 2
    key = load_answer_key(ds["path"])
    first, second = (messages_key(c["messages"]) for c in cases)
    seen: Counter[str] = Counter()

    def script(body):           # case 1: wrong, then right; case 2: right, then wrong
        k = messages_key(body["messages"])
        seen[k] += 1
        right = (seen[k] == 2) if k == first else (seen[k] == 1)
        return Scripted(content=json.dumps(key[k] if right else _wrong(key[k])))

    with SimulatorThread(models=[SimModel("solver", skill=1.0)], script=script) as sim:
        api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url)]})
        m = manifest(ds, [{"id": "solver"}])
        one = freeze(api, m)
        assert "arc-agi-2" not in one["benchmark_options"]          # one attempt: a single call, as before
        opts = Path(service.store_dir) / "benchmark-options.json"
        opts.write_text(json.dumps({"arc-agi-2": {"attempts": 3}}))
        assert "attempts must be 1 or 2" in api.error("POST", "/plans", {"manifest": m}, 400)
        opts.write_text(json.dumps({"arc-agi-2": {"attempts": 1}}))
        assert freeze(api, m)["plan_sha256"] == one["plan_sha256"]
        opts.write_text(json.dumps({"arc-agi-2": {"attempts": 2}}))
        plan = freeze(api, m)
        assert plan["benchmark_options"]["arc-agi-2"]["attempts"] == 2 and plan["total"] == 2
        run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
        assert api.wait(run_id)["status"] == "completed"
        log = list(sim.log)
    assert len(log) == 4 and seen[first] == seen[second] == 2
    with sqlite3.connect(Path(service.store_dir) / "journal.sqlite3") as conn:
        rows = conn.execute("SELECT cell_id, idx, role, state FROM calls WHERE run_id=? ORDER BY cell_id, idx",
                            (run_id,)).fetchall()
    assert [(r[1], r[2], r[3]) for r in rows] == [(0, "subject", "completed"), (1, "subject", "completed")] * 2
    rep = api.ok("GET", f"/runs/{run_id}/report")
    brow = rep["benchmarks"][0]
    assert brow["accuracy"] == 0.5 and brow["correct"] == 1           # sr-bench: the first attempt only
    pub = brow["published"]
    assert pub["rule"] == ARC_PASS2_RULE and pub["score"] == 1.0      # pass@2: both puzzles solved
    assert pub["graded_differently"] == 1 and pub["published_higher"] == 1
    assert pub["solved_inputs"] == pub["test_inputs"] == sum(len(c["answer"]) for c in cases)
    t = rep["summary"]["targets"][0]
    assert t["call_count"] == 4 and t["calls_by_role"] == {"subject": 4}
    results = {r["case_id"]: r for r in api.ok("GET", f"/runs/{run_id}/results")["results"]}
    assert results[cases[0]["id"]]["correct"] is False and results[cases[1]["id"]]["correct"] is True
    assert {r["published_score"] for r in results.values()} == {1.0}

    # regrade: the same verdicts, the published figures recomputed beside them, zero calls
    first_rg = api.ok("POST", f"/runs/{run_id}/regrade", {})
    assert first_rg["changed_count"] == 0 and first_rg["published_changed_count"] == 0
    assert first_rg["benchmarks"][0]["published"]["rule"] == ARC_PASS2_RULE
    assert first_rg["benchmarks"][0]["published"]["score"] == 1.0 and first_rg["benchmarks"][0]["accuracy"] == 0.5
    assert api.ok("POST", f"/runs/{run_id}/regrade", {})["cache_hit"] is True
    # a changed published rule regrades (before, regrade's key held only sr-bench's graders)
    monkeypatch.setattr(ArcAgi2, "published_conversation_rule", "arc-agi-2-pass-at-2-test")
    monkeypatch.setattr(ArcAgi2, "published_conversation",
                        lambda self, case, conv, grade, grader=None: ArcPass2Published(
                            rule=ARC_PASS2_RULE, score=0.0, solved_inputs=0, test_inputs=1, solved=[False], attempts=2,
                            solved_by_attempt=[[False], [False]]))
    again = api.ok("POST", f"/runs/{run_id}/regrade", {})
    assert again["cache_hit"] is False and again["published_changed_count"] == 2
    assert again["benchmarks"][0]["published"]["score"] == 0.0
    assert len(log) == 4


def test_pass_at_2_rule_by_hand() -> None:
    expected = [[[1, 2], [3, 4]], [[5]]]
    right, wrong0, wrong1 = json.dumps(expected), json.dumps([[[0, 2], [3, 4]], [[5]]]), json.dumps([expected[0],
                                                                                                    [[6]]])
    cases = [  # (attempt texts, solved per input) — read off the rule: an input is solved by either attempt
        ((right, right), [True, True]), ((wrong0, right), [True, True]), ((wrong0, wrong1), [True, True]),
        ((wrong0, wrong0), [False, True]), ((None, right), [True, True]), ((None, None), [False, False]),
        (("no json here", wrong1), [True, False]), ((f"reasoning… {wrong1}", None), [True, False])]
    for texts, solved in cases:
        g = arc_pass2_grade(list(texts), expected).stored()
        assert g["solved"] == solved and g["score"] == sum(solved) / 2 and g["rule"] == ARC_PASS2_RULE


def test_sr_bench_rule_is_the_first_attempt() -> None:
    bench = ArcAgi2()
    case = Case(id="arc-agi-2/x", benchmark="arc-agi-2", messages=[{"role": "user", "content": "p"}],
                answer=[[[1]]], metadata={"stratum": "all"})
    attempts = [{"attempt": 1, "status": "completed", "text": "[[[2]]]", "finish_reason": "stop", "error_class": None},
                {"attempt": 2, "status": "completed", "text": "[[[1]]]", "finish_reason": "stop", "error_class": None}]
    conv = conversation_record(outputs={"attempts": attempts})
    assert bench.grade_conversation(case, conv).correct is False
    assert published_json(bench.published_conversation(case, conv, None))["score"] == 1.0
    attempts[0].update(text="[[[1]]]", finish_reason="length")
    g = bench.grade_conversation(case, conversation_record(outputs={"attempts": attempts}))
    assert g.correct is False and g.status == "output_limit"       # a truncated first attempt never counts
    assert bench.published_summary([(False, None)]).stored()["rule"] == ARC_RULE


def test_a_named_actor_may_run_the_operators_pass_at_2_plan(api, service, prepare) -> None:
    """The actor policy rebuilds a plan's benchmark options the way planning froze them (judges, then each
    benchmark's own options such as ARC's attempts): the operator's pass@2 plan is not an override."""
    from .helpers import Api

    ds = prepare("arc-agi-2")
    (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps({"arc-agi-2": {"attempts": 2}}))
    with SimulatorThread(models=[SimModel("solver", skill=1.0)]) as sim:
        api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url)]})
        alice = Api(service.url, service.token)
        alice.http.headers.update({"X-SR-Bench-Actor-ID": "alice", "X-SR-Bench-Actor-Role": "write"})
        try:
            plan = alice.ok("POST", "/plans", {"manifest": manifest(ds, [{"id": "solver"}])})["manifest"]
            assert plan["benchmark_options"]["arc-agi-2"]["attempts"] == 2
            run_id = alice.ok("POST", "/runs", {"manifest": plan})["id"]
            assert alice.wait(run_id)["status"] == "completed"
        finally:
            alice.close()
