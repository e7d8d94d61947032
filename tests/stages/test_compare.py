"""compare_reports on small hand-built runs: eligibility refusals, baseline choice, savings, labelling."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

from srbench.errors import InvalidInput
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import CUSTOM, DEV, FORMAL, NO_MARGIN, NotComparable, compare_reports
from srbench.stages.stats.paired import weighted_hoeffding

# Two benchmarks, weights 10 and 15; cases m1..m2 (mmlu-pro) and g1..g2 (gpqa-diamond).
CASES = {"m1": "mmlu-pro", "m2": "mmlu-pro", "g1": "gpqa-diamond", "g2": "gpqa-diamond"}
WEIGHTS = {"gpqa-diamond": 15, "mmlu-pro": 10}
# the standard profile's plans carry pinned, checked sources (a formal comparison needs them)
PINNED = {b: {"revision": "pinned-rev", "pinned": True, "check": "file-sha256"} for b in WEIGHTS}
PRICE = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.25, "output": 4.0}


def target(tid: str, kind: str = "single", model: str | None = None) -> dict[str, Any]:
    model = model or f"model-{tid}"
    return {"id": tid, "kind": kind, "base_url": "http://127.0.0.1:9/v1", "model": model,
            "prices": {model: PRICE}}


def plan(targets: list[dict[str, Any]], *, profile: str = "quick", policy: str = "require_priced",
         case_sha: str = "c" * 64, sampling: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "kind": "plan", "name": "p", "mode": "live", "profile": profile, "seed": 1, "cost_policy": policy,
        "dataset": {"sha256": "0" * 64, "object": "b3:" + "0" * 64, "case_count": len(CASES), "benchmarks": sorted(WEIGHTS),
                    "split": "holdout" if profile == "standard" else "dev",
                    **({"sources": PINNED} if profile == "standard" else {})},
        "case_sha256": case_sha, "targets": [{"target": t, "effective_params": {}, "registered": True}
                                             for t in targets],
        "sampling": sampling or {"temperature": 0}, "limits": {"max_output_tokens": 4096},
        "benchmark_weights": dict(WEIGHTS), "adapter_versions": {"mmlu-pro": "1", "gpqa-diamond": "1"},
        "grader_versions": {"mmlu-pro": "g1", "gpqa-diamond": "g1"}, "total": len(CASES) * len(targets),
        "plan_sha256": f"plan-{'-'.join(t['id'] for t in targets)}-{profile}-{policy}-{case_sha[:4]}",
    }


def rows_for(tid: str, outcome: dict[str, Any], cost: float | None = 0.01, neutral: float | None = None,
             **extra: Any) -> list[dict[str, Any]]:
    """outcome[case] is True/False (completed) or a state name (failed, pending, …)."""
    out = []
    for i, (case, bench) in enumerate(CASES.items()):
        o = outcome.get(case, False)
        state = "completed" if isinstance(o, bool) else o
        out.append({"cell_id": f"{case}:{tid}", "case_id": case, "target_id": tid, "benchmark": bench,
                    "stratum": None, "state": state, "correct": o if isinstance(o, bool) else None,
                    "cost_usd": cost, "cache_neutral_cost_usd": cost if neutral is None else neutral,
                    "usage": {"input": 100, "cached_input": 0, "cache_write": 0, "output": 10},
                    "latency_s": 1.0 + i, "ttft_s": 0.1 * (i + 1), **extra})
    return out


def report(p: dict[str, Any], status: str = "completed", run_id: str = "run") -> dict[str, Any]:
    return {"kind": "report", "run_id": run_id, "status": status, "mode": "live",
            "provenance": {"plan_sha256": p["plan_sha256"]}, "summary": {"targets": []}}


ALL = {c: True for c in CASES}
NONE: dict[str, Any] = {}


def run(spec: dict[str, tuple[str, list[dict[str, Any]]]], status: str = "completed",
        **plan_kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """spec: target id → (kind, rows)."""
    p = plan([target(t, kind) for t, (kind, _) in spec.items()], **plan_kw)
    rows = [r for _, rs in spec.values() for r in rs]
    return report(p, status), rows, p


def compare(base: tuple, cand: tuple, **kw: Any) -> dict[str, Any]:
    (br, brows, bp), (cr, crows, cp) = base, cand          # the plans as dicts, edited by the tests
    return compare_reports(br, brows, Plan.model_validate(bp), cr, crows, Plan.model_validate(cp), **kw).dump()


def refusal(base: tuple, cand: tuple, reason: str) -> NotComparable:
    with pytest.raises(NotComparable) as exc:
        compare(base, cand)
    assert exc.value.code == "not_comparable" and exc.value.reason == reason
    assert isinstance(exc.value, InvalidInput) and "\n" not in exc.value.message
    return exc.value


def test_baseline_choice_ties_break_on_complete_lowest_cost_then_id():
    # A and B: m1, g1 right → Q = (10·1/2 + 15·1/2)/25 = 1/2; C only m1,m2 right → Q = 10/25 = 2/5.
    half = {"m1": True, "g1": True}
    base = run({"A": ("single", rows_for("A", half, cost=0.10)), "B": ("single", rows_for("B", half, cost=0.05)),
                "C": ("single", rows_for("C", {"m1": True, "m2": True}, cost=0.001)),
                "D": ("single", rows_for("D", half, cost=0.05))})
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.01))})
    out = compare(base, cand)
    b = out["baseline"]
    # B and D cost 4·0.05 = 0.20, A 0.40: B wins on id order over D; C is cheaper but weaker
    assert b["target_id"] == "B" and b["quality_exact"] == "1/2" and b["quality"] == 0.5
    assert [t["target_id"] for t in b["tied_strongest"]] == ["B", "D", "A"]
    assert out["savings_blocked"] is None
    assert len(out["limitations"]) and any("3 single targets tie" in x for x in out["limitations"])
    json.dumps(out)                                           # plain JSON: no Fraction, no numpy scalar


def test_tie_with_an_unknown_cost_leaves_savings_unknown():
    half = {"m1": True, "g1": True}
    a_rows = rows_for("A", half, cost=0.05)
    a_rows[0]["cost_usd"] = None                              # A's principal cost is incomplete
    base = run({"A": ("single", a_rows), "B": ("single", rows_for("B", half, cost=0.05))})
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.01))})
    out = compare(base, cand)
    assert out["baseline"]["target_id"] == "B"               # a complete cost goes first
    assert [t["cost_complete"] for t in out["baseline"]["tied_strongest"]] == [True, False]
    for scope in ("principal", "total", "cache_neutral"):
        s = out["candidates"][0]["savings"][scope]
        assert s["saving_pct"] is None and s["saving_usd"] is None
        assert "A" in s["reason"] and "incomplete principal cost" in s["reason"]


def test_savings_by_hand_in_three_scopes():
    # principal: base 4 × 0.05 = 0.20, candidate 4 × 0.0125 = 0.05 → 100·(1 − 0.05/0.20) = 75.0
    # cache-neutral: base 4 × 0.075 = 0.30, candidate 4 × 0.025 = 0.10 → 100·(1 − 1/3) = 66.67
    # total (judge costs present): base 0.20 + 4·0.01 = 0.24, candidate 0.05 + 4·0.0175 = 0.12 → 50.0
    base = run({"B": ("single", rows_for("B", ALL, cost=0.05, neutral=0.075, judge_cost_usd=0.01))})
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.0125, neutral=0.025, judge_cost_usd=0.0175))})
    s = compare(base, cand)["candidates"][0]["savings"]
    assert s["principal"]["baseline_usd"] == pytest.approx(0.20)
    assert s["principal"]["candidate_usd"] == pytest.approx(0.05)
    assert s["principal"]["saving_usd"] == pytest.approx(0.15)
    assert s["principal"]["saving_pct"] == pytest.approx(75.0)
    assert s["principal"]["reason"] is None and s["principal"]["baseline_target_id"] == "B"
    assert s["cache_neutral"]["saving_pct"] == pytest.approx(200 / 3)
    assert s["total"]["baseline_usd"] == pytest.approx(0.24) and s["total"]["candidate_usd"] == pytest.approx(0.12)
    assert s["total"]["saving_pct"] == pytest.approx(50.0)
    # the caveat is true to the rows: simulator costs are absent, the metered judge costs make total ≠ principal
    notes = [x for x in compare(base, cand)["limitations"] if x.startswith("No row carries")]
    assert notes == ["No row carries simulator_cost_usd: those calls are not metered in these reports (counted 0); "
                     "the total cost adds the metered judge_cost_usd, so total and principal costs (and their "
                     "savings) differ."]


def test_zero_judge_costs_leave_total_equal_to_principal():
    base = run({"B": ("single", rows_for("B", ALL, cost=0.05, judge_cost_usd=0.0))})
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.0125, judge_cost_usd=0.0))})
    notes = [x for x in compare(base, cand)["limitations"] if x.startswith("No row carries")]
    assert notes and notes[0].endswith("the metered judge_cost_usd add nothing: total cost equals principal cost.")


def test_total_cost_without_judge_fields_equals_principal_and_says_so():
    base = run({"B": ("single", rows_for("B", ALL, cost=0.05))})
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.0125))})
    out = compare(base, cand)
    s = out["candidates"][0]["savings"]
    assert s["total"]["saving_pct"] == pytest.approx(75.0) == s["principal"]["saving_pct"]
    assert any("judge_cost_usd" in x and x.endswith("nothing else is metered: total cost equals principal cost.")
               for x in out["limitations"])


def test_total_cost_unknown_when_a_judge_field_is_missing_in_some_rows():
    c_rows = rows_for("mom", ALL, cost=0.0125, judge_cost_usd=0.01)
    del c_rows[2]["judge_cost_usd"]
    base = run({"B": ("single", rows_for("B", ALL, cost=0.05, judge_cost_usd=0.01))})
    s = compare(base, run({"mom": ("mom", c_rows)}))["candidates"][0]["savings"]
    assert s["total"]["saving_pct"] is None and "incomplete" in s["total"]["reason"]
    assert s["principal"]["saving_pct"] == pytest.approx(75.0)
    # metered judges in the baseline only: the candidate's total is unknown, never principal-only
    base_only = compare(base, run({"mom": ("mom", rows_for("mom", ALL, cost=0.0125))}))
    assert base_only["candidates"][0]["savings"]["total"]["saving_pct"] is None


def test_simulator_cost_on_conversation_rows_only_keeps_the_total_known():
    # a run mixing single calls (no simulator field) and conversations (simulator and scaffolding fields):
    # base total 4·0.05 + 2·0.01 = 0.22, candidate 4·0.0125 + 2·0.005 = 0.06 → 100·(1 − 0.06/0.22)
    def mixed(tid: str, cost: float, sim: float) -> list[dict[str, Any]]:
        rows = rows_for(tid, ALL, cost=cost, judge_cost_usd=0.0)
        for r in rows[:2]:
            r.update(simulator_cost_usd=sim, scaffolding_cost_usd=0.0)
        return rows
    base = run({"B": ("single", mixed("B", 0.05, 0.01))})
    cand = run({"mom": ("mom", mixed("mom", 0.0125, 0.005))})
    s = compare(base, cand)["candidates"][0]["savings"]
    assert s["total"]["baseline_usd"] == pytest.approx(0.22) and s["total"]["candidate_usd"] == pytest.approx(0.06)
    assert s["total"]["saving_pct"] == pytest.approx(100 * (1 - 0.06 / 0.22))
    # a conversation whose simulator cost is unknown makes the total unknown, never principal-only
    unknown = mixed("mom", 0.0125, 0.005)
    unknown[0]["simulator_cost_usd"] = None
    s2 = compare(base, run({"mom": ("mom", unknown)}))["candidates"][0]["savings"]
    assert s2["total"]["saving_pct"] is None and s2["principal"]["saving_pct"] == pytest.approx(75.0)


def test_unknown_candidate_cost_and_zero_baseline_cost():
    c_rows = rows_for("mom", ALL, cost=0.0125)
    c_rows[1]["cost_usd"] = None
    s = compare(run({"B": ("single", rows_for("B", ALL))}), run({"mom": ("mom", c_rows)}))["candidates"][0]["savings"]
    assert s["principal"]["saving_pct"] is None and "candidate" in s["principal"]["reason"]
    s = compare(run({"B": ("single", rows_for("B", ALL, cost=0.0))}),
                run({"mom": ("mom", rows_for("mom", ALL))}))["candidates"][0]["savings"]
    assert s["principal"]["saving_pct"] is None and "is 0" in s["principal"]["reason"]


def test_capability_only_claims_no_savings():
    base = run({"B": ("single", rows_for("B", ALL, cost=0.05))}, policy="capability_only")
    cand = run({"mom": ("mom", rows_for("mom", ALL, cost=0.01))}, policy="capability_only")
    out = compare(base, cand)
    assert "capability_only" in out["savings_blocked"]
    assert all(v["saving_pct"] is None and "capability_only" in v["reason"]
               for v in out["candidates"][0]["savings"].values())


def test_paired_delta_and_interval_by_hand():
    # baseline B: m1, g1, g2 right; candidate: m1, m2, g1 right; g2 failed (counts as incorrect).
    # d: m1 0, m2 +1, g1 0, g2 −1 → mmlu mean 1/2, gpqa mean −1/2; Δ = 0.4·0.5 − 0.6·0.5 = −0.1
    # Σ w²/n = 0.16/2 + 0.36/2 = 0.26; r = √(2·ln 40·0.26) = 1.3849 → CI = [−1, 1]
    base = run({"B": ("single", rows_for("B", {"m1": True, "g1": True, "g2": True}))})
    cand = run({"mom": ("mom", rows_for("mom", {"m1": True, "m2": True, "g1": True, "g2": "failed"}))},
               status="failed")
    c = compare(base, cand)["candidates"][0]
    assert c["delta"] == pytest.approx(-0.1) and c["delta_exact"] == "-1/10"
    assert c["micro_delta"] == 0.0 and (c["wins"], c["losses"], c["ties"]) == (1, 1, 2)
    assert c["both_correct"] == 2 and c["both_wrong"] == 0
    assert c["interval"]["radius"] == pytest.approx(math.sqrt(2 * math.log(40) * 0.26))
    assert c["interval"]["ci"] == [-1.0, 1.0] and c["claim"] == "inconclusive"
    hoeff = weighted_hoeffding({"mmlu-pro": [0, 1], "gpqa-diamond": [0, -1]}, WEIGHTS).model_dump()
    assert {k: c["interval"][k] for k in hoeff} == hoeff         # the declared (default) rule's interval
    assert c["claim_rule"] == "hoeffding" and c["interval"]["makes_claim"] is True
    assert c["intervals"]["hoeffding"] is c["interval"] or c["intervals"]["hoeffding"] == c["interval"]
    assert c["intervals"]["betting"]["makes_claim"] is False and c["claims_by_rule"]["betting"] == "inconclusive"
    assert c["bootstrap"]["diagnostic"] is True
    by = {b["benchmark"]: b for b in c["benchmarks"]}
    assert by["gpqa-diamond"]["candidate_correct"] == 1 and by["gpqa-diamond"]["baseline_correct"] == 2
    assert by["mmlu-pro"]["delta"] == 0.5 and by["mmlu-pro"]["wins"] == 1
    assert c["operations"]["candidate"]["incorrect_by_state"] == {"failed": 1}
    # latencies 1, 2, 3 over completed cells (g2 failed): p50 = 2, p95 = 2 + 0.9·1 = 2.9 (linear)
    assert c["operations"]["candidate"]["latency_p50_s"] == pytest.approx(2.0)
    assert c["operations"]["candidate"]["latency_p95_s"] == pytest.approx(2.9)
    assert c["operations"]["baseline"]["tokens"] == {"input": 400, "cached_input": 0, "cache_write": 0,
                                                     "output": 40}


def test_margin_given_or_not_and_dev_versus_holdout():
    base = run({"B": ("single", rows_for("B", ALL))})
    cand = run({"mom": ("mom", rows_for("mom", ALL))})
    c = compare(base, cand)["candidates"][0]
    assert c["non_inferiority"] == {"margin": None, "non_inferior": None, "label": None, "reason": NO_MARGIN,
                                    "rule": "hoeffding"}
    out = compare(base, cand, margin=0.05)
    ni = out["candidates"][0]["non_inferiority"]
    # REP-7: a dev run never yields a parity conclusion, whatever the interval
    assert ni["margin"] == 0.05 and ni["non_inferior"] is None and ni["label"] == DEV and "REP-7" in ni["reason"]
    assert out["evidence"]["formal"] is False and out["evidence"]["label"] == DEV
    assert any(DEV in x for x in out["limitations"])
    # holdout; baseline right on m1 only, candidate on all: d = 0, 1 | 1, 1 → Δ = 0.4·0.5 + 0.6·1 = 0.8,
    # r = 1.3849 → lower = max(−1, 0.8 − 1.3849) = −0.5849: non-inferior at margin 0.6, not at 0.5
    hb = run({"B": ("single", rows_for("B", {"m1": True}))}, profile="standard")
    hc = run({"mom": ("mom", rows_for("mom", ALL))}, profile="standard")
    out = compare(hb, hc, margin=0.6)
    ni = out["candidates"][0]["non_inferiority"]
    assert out["candidates"][0]["interval"]["ci"][0] == pytest.approx(0.8 - math.sqrt(2 * math.log(40) * 0.26))
    assert ni["non_inferior"] is True and ni["label"] == FORMAL and out["evidence"]["label"] == FORMAL
    assert compare(hb, hc, margin=0.5)["candidates"][0]["non_inferiority"]["non_inferior"] is False
    assert not any(DEV in x for x in out["limitations"])
    assert out["candidates"][0]["claim_label"] == FORMAL
    assert out["evidence"]["standing"] == "formal" and "pinned, checked source" in out["evidence"]["reason"]
    # issue 41: the standard holdout on a source that is not the pinned one is a custom source, never formal
    hc[2]["dataset"]["sources"] = {**PINNED, "gpqa-diamond": {"revision": "local-copy", "pinned": False}}
    custom = compare(hb, hc, margin=0.6)
    assert custom["evidence"]["formal"] is False and custom["evidence"]["label"] == CUSTOM
    assert custom["evidence"]["standing"] == "custom source"
    assert custom["evidence"]["reason"] == ("standard holdout, but gpqa-diamond is not the pinned source (revision "
                                            "local-copy): not an sr-bench 1.0 result")
    assert custom["candidates"][0]["non_inferiority"]["non_inferior"] is None
    assert f"{CUSTOM}: {custom['evidence']['reason']}." in custom["limitations"]
    del hb[2]["dataset"]["sources"], hc[2]["dataset"]["sources"]        # a plan frozen before sources were labelled
    assert compare(hb, hc)["evidence"]["reason"] == ("standard holdout, but the plan records no source labels (frozen "
                                                     "before sources were labelled): not an sr-bench 1.0 result")
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidInput) as exc:
            compare(hb, hc, margin=bad)
        assert exc.value.code == "invalid_margin"


def test_every_candidate_target_is_compared():
    base = run({"A": ("single", rows_for("A", {"m1": True})), "B": ("single", rows_for("B", ALL))})
    out = compare(base, base)
    assert out["baseline"]["target_id"] == "B"
    assert [c["target_id"] for c in out["candidates"]] == ["A", "B"]
    assert out["candidates"][1]["delta"] == 0 and out["candidates"][1]["ties"] == 4


def test_refuses_different_case_sets():
    base = run({"B": ("single", rows_for("B", ALL))})
    refusal(base, run({"mom": ("mom", rows_for("mom", ALL))}, case_sha="d" * 64), "case_set_mismatch")
    short = [r for r in rows_for("mom", ALL) if r["case_id"] != "g2"]
    refusal(base, run({"mom": ("mom", short)}), "case_set_mismatch")
    # within one run, a target planned on fewer cases than the others
    two = run({"A": ("single", rows_for("A", ALL)), "B": ("single", rows_for("B", ALL)[:3])})
    refusal(two, run({"mom": ("mom", rows_for("mom", ALL))}), "case_set_mismatch")


@pytest.mark.parametrize("status,reason", [("running", "run_not_finished"), ("queued", "run_not_finished"),
                                           ("interrupted", "run_not_comparable"),
                                           ("cancelled", "run_not_comparable")])
def test_refuses_unfinished_or_stopped_runs(status, reason):
    base = run({"B": ("single", rows_for("B", ALL))})
    refusal(base, run({"mom": ("mom", rows_for("mom", ALL))}, status=status), reason)
    refusal(run({"B": ("single", rows_for("B", ALL))}, status=status), base, reason)


def test_refuses_pending_and_ungraded_cells():
    base = run({"B": ("single", rows_for("B", ALL))})
    refusal(base, run({"mom": ("mom", rows_for("mom", {"m1": "pending"}))}, status="failed"), "cell_pending")
    refusal(base, run({"mom": ("mom", rows_for("mom", {"m1": "dispatching"}))}, status="failed"), "cell_pending")
    ungraded = rows_for("mom", ALL)
    ungraded[0]["correct"] = None
    refusal(base, run({"mom": ("mom", ungraded)}), "cell_not_graded")


def test_failed_cancelled_and_ambiguous_cells_count_as_incorrect():
    base = run({"B": ("single", rows_for("B", ALL))})
    cand = run({"mom": ("mom", rows_for("mom", {"m1": "failed", "m2": "cancelled", "g1": "ambiguous",
                                                 "g2": True}))}, status="failed")
    c = compare(base, cand)["candidates"][0]
    assert (c["wins"], c["losses"], c["ties"]) == (0, 3, 1)
    assert c["quality_exact"] == "3/10"                        # (10·0 + 15·1/2)/25


def test_run_level_limits_may_differ_and_are_named():
    base = run({"B": ("single", rows_for("B", ALL))})
    cand = copy.deepcopy(run({"mom": ("mom", rows_for("mom", ALL))}))
    cand[2]["limits"].update(concurrency=16, max_cost_usd=2.5)
    out = compare(base, cand)
    note = [x for x in out["limitations"] if "run-level limits" in x]
    # the plans are validated: a limit the fixture leaves out is its default (concurrency 4, max_cost_usd 5.0),
    # quoted as the stored plan reads back (5, not 5.0)
    assert len(note) == 1 and "limits.concurrency 4 (baseline) vs 16 (candidate)" in note[0]
    assert "limits.max_cost_usd 5 (baseline) vs 2.5 (candidate)" in note[0] and "max_run_seconds" not in note[0]
    assert not [x for x in compare(base, run({"mom": ("mom", rows_for("mom", ALL))}))["limitations"]
                if "run-level" in x]
    timeout = copy.deepcopy(cand)
    timeout[2]["limits"]["idle_timeout_s"] = 5                 # how one question is asked: still refused
    assert "limits" in refusal(base, timeout, "protocol_mismatch").message


def test_refuses_protocol_differences_and_other_mismatches():
    base = run({"B": ("single", rows_for("B", ALL))})
    err = refusal(base, run({"mom": ("mom", rows_for("mom", ALL))}, sampling={"temperature": 0.7}),
                  "protocol_mismatch")
    assert "sampling" in err.message
    other = copy.deepcopy(run({"mom": ("mom", rows_for("mom", ALL))}))
    other[2]["grader_versions"]["mmlu-pro"] = "g2"
    assert "grader_versions" in refusal(base, other, "protocol_mismatch").message
    priced = copy.deepcopy(run({"B": ("single", rows_for("B", ALL))}))
    priced[2]["targets"][0]["target"]["prices"]["model-B"] = {**PRICE, "output": 9.0}
    assert "prices[model-B]" in refusal(base, priced, "protocol_mismatch").message
    moms = run({"mom": ("mom", rows_for("mom", ALL))})
    refusal(moms, moms, "no_single_baseline")
    preview = copy.deepcopy(base)
    preview[2]["mode"] = "preview"
    refusal(preview, base, "not_live")
    mismatched = (report(plan([target("X")])), base[1], base[2])
    refusal(mismatched, base, "plan_mismatch")
    stray = (base[0], base[1] + rows_for("Z", ALL), base[2])
    refusal(stray, base, "case_set_mismatch")


def test_a_source_that_is_not_the_pinned_one_is_named_in_the_limitations():
    """Issue 27 item 1: the plan's frozen source labels reach the comparison."""
    from srbench.stages.datasets import source_labels

    base = run({"A": ("single", rows_for("A", ALL))})
    cand = run({"mom": ("mom", rows_for("mom", ALL))})
    from srbench.schemas.dataset import SourceRecord
    record = SourceRecord(url="https://example.invalid/mmlu-pro", revision="my-edit-1", files=[], origin="download")
    labels = source_labels.labels({"mmlu-pro": record}, {"mmlu-pro": {"my-edit-1"}, "gpqa-diamond": {None}})
    for _, _, p in (base, cand):
        p["dataset"]["sources"] = {b: lab.model_dump() for b, lab in labels.items()}
    out = compare(base, cand)
    assert any(x.startswith("mmlu-pro: not the pinned source (revision my-edit-1, pinned ") and
               x.endswith("not an sr-bench 1.0 result") for x in out["limitations"])
    assert any(x.startswith("gpqa-diamond: not the pinned source") for x in out["limitations"])
    plain = compare(run({"A": ("single", rows_for("A", ALL))}), run({"mom": ("mom", rows_for("mom", ALL))}))
    assert not any("pinned source" in x for x in plain["limitations"])
