"""The upstream wire format (vLLM Semantic Router's sr-bench 1.0 API): projections of sr-bench's views.

sr-bench keeps its own records (runs and cells in the journal, plans, reports and comparisons as
content-addressed objects); this module only shapes what the API answers so that an upstream client
reads it unchanged, with sr-bench's own fields beside upstream's (clients ignore fields they do not
know):

- times are ISO-8601 in UTC; a run carries its `manifest` (the frozen plan, targets as plain target
  objects, `target_profiles` keeping each target's effective parameters so the wire form freezes back
  to the same plan: `plan_from_wire`);
- events are ``{seq, at, kind, data}``; a call is ``{id, case_id, target_id, role, status, …}`` with
  ``id = call-<32 hex>``, a reversible encoding of the cell's sequence number and the call's role,
  masked by the run id (`call_id` / `parse_call_id`);
- a page is ``{<items>, total, limit, next_cursor}`` with an integer `after` cursor;
- an error is ``{"error": message, "code": code}``.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, NamedTuple

from srbench.cas import canonical_json
from srbench.schemas.cell import wire_status
from srbench.schemas.comparison import Comparison
from srbench.schemas.plan import Plan
from srbench.schemas.wire import WireJSON
from srbench.service.api.responses import Event, RunView
from srbench.service.runs.state import Progress, RunState
from srbench.service.wire.figures import NO_FIGURES, Figures, merge
from srbench.stages.compare.headline import routing_facts

# a single target's report leaves these null (no router); upstream counts the models that answered
SINGLE_FILLED = ("selected_models", "decisions")

ROLES = ("subject", "judge", "simulator")
ROLE_BITS = 8
CURSOR_STRIDE = 8                      # calls-page cursor = seq * 8 + role index
SUMMARY_KEYS = ("kind", "version", "name", "mode", "profile", "seed", "cost_policy", "limits", "sampling",
                "benchmark_weights", "adapter_versions", "grader_versions", "experiment", "plan_sha256",
                "case_sha256", "total", "baseline_run_id")


PROFILES = [{"id": "smoke", "purpose": "integration check: a few cases per benchmark, never a result"},
            {"id": "quick", "purpose": "fixed dev cases: tune and iterate"},
            {"id": "standard", "purpose": "frozen holdout, disjoint from quick: accept a change"}]
MODES = ["live", "preview"]


def iso(ts: float | None) -> str | None:
    """An epoch time as ISO-8601 in UTC (microseconds), or None."""
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def epoch(text: str) -> float:
    """The inverse of `iso` (the CLI's table prints local times)."""
    return datetime.fromisoformat(text).timestamp()


def error_body(message: str, code: str, **extra: Any) -> WireJSON:
    return {"error": message, "code": code, **extra}


# -- plans as upstream manifests ------------------------------------------------------------------
def wire_manifest(frozen: Plan) -> WireJSON:
    """A frozen plan as upstream's frozen manifest: `targets` plain, `auxiliary_targets` {id: target}."""
    plan: WireJSON = frozen.as_json()        # the stored plan as upstream's wire JSON
    out = dict(plan)
    out["targets"] = [pt["target"] for pt in plan["targets"]]
    out["target_profiles"] = [{"id": pt["target"]["id"], "effective_params": pt["effective_params"],
                               "registered": pt["registered"]} for pt in plan["targets"]]
    aux = plan.get("auxiliary_targets") or {}
    out["auxiliary_targets"] = {tid: pt["target"] for tid, pt in aux.items()}
    out["auxiliary_profiles"] = {tid: {"effective_params": pt["effective_params"], "registered": pt["registered"]}
                                 for tid, pt in aux.items()}
    return out


def plan_from_wire(manifest: WireJSON) -> WireJSON:
    """The frozen plan a wire manifest stands for (a plan file in sr-bench's own form passes unchanged).
    Anything that does not fit is left for the plan's own check (its hash) to refuse."""
    if "target_profiles" not in manifest:
        return manifest
    out = {k: v for k, v in manifest.items() if k not in ("target_profiles", "auxiliary_profiles")}
    profiles = {p.get("id"): p for p in manifest["target_profiles"] if isinstance(p, dict)}
    targets = manifest.get("targets")
    if isinstance(targets, list):
        out["targets"] = [{"target": t, "effective_params": profiles.get(t.get("id"), {}).get("effective_params"),
                           "registered": profiles.get(t.get("id"), {}).get("registered")}
                          if isinstance(t, dict) else t for t in targets]
    aux, aux_profiles = manifest.get("auxiliary_targets"), manifest.get("auxiliary_profiles") or {}
    if isinstance(aux, dict) and isinstance(aux_profiles, dict):
        out["auxiliary_targets"] = {tid: {"target": t, **(aux_profiles.get(tid) or {})} for tid, t in aux.items()}
    return out


def summary_manifest(frozen: Plan) -> WireJSON:
    """What a run list carries of the manifest (upstream's `run_summary`): no per-target profiles."""
    plan: WireJSON = frozen.as_json()        # the stored plan as upstream's wire JSON
    out = {k: plan[k] for k in SUMMARY_KEYS if k in plan}
    out["targets"] = [pt["target"] for pt in plan["targets"]]
    ds = plan.get("dataset") or {}
    out["dataset"] = {k: ds[k] for k in ("id", "sha256", "case_count", "split", "benchmarks") if k in ds}
    if plan.get("recovery"):
        rec = plan["recovery"]
        out["recovery"] = {"parent_run_id": rec.get("parent"), "mode": rec.get("mode"),
                           "selected_cells_sha256": rec.get("cells_sha256"),
                           "selected_cell_count": len(rec.get("cells") or [])}
    return out


def experiment_roles(plan: Plan) -> list[str]:
    """The experiment roles a run can take (upstream's rule): recovery; preview; estimate (replay);
    baseline (live with a single target); validation (live standard); initial and candidate (live
    with a router), and smoke on the smoke profile."""
    if plan.recovery:
        return ["recovery"]
    mode, profile = plan.mode, plan.profile
    kinds = {pt.target.kind for pt in plan.targets}
    if mode == "preview":
        return ["preview"]
    if mode == "replay":
        return ["estimate"]
    roles = []
    if "single" in kinds:
        roles.append("baseline")
    if profile == "standard":
        roles.append("validation")
    else:
        if "mom" in kinds:
            roles += ["initial", "candidate"]
        if profile == "smoke":
            roles.append("smoke")
    return roles


def wire_run(run: RunState, manifest: WireJSON, owner: str, roles: list[str], summary: bool = False
             ) -> RunView:
    """A run in upstream's shape (id, owner, status, ISO times, manifest, error, progress) with sr-bench's
    fields beside it (those `run` has: a listed run has no lineage, budget or early stop); the idempotency
    key as the caller gave it; `summary`: the manifest is a run list's summary of it."""
    out = {key: getattr(run, key) for key in run.model_fields_set}
    if run.early_stop is not None:
        out["early_stop"] = run.early_stop.dump()          # the record's fields as stored
    out.update(status=wire_status(run.status), stopped_early=run.status == "stopped_early")
    for key in ("created_at", "started_at", "finished_at", "updated_at"):
        out[key] = iso(out[key])
    given = run.idempotency_key
    if isinstance(given, str) and given.startswith(OWNER_KEY_PREFIX):      # actor ids are printable: no \x1f
        out["idempotency_key"] = given[len(OWNER_KEY_PREFIX):].partition("\x1f")[2]
    out.update(owner=owner, manifest=manifest, experiment_roles=roles)
    if summary:
        out["manifest_summary"] = True
    return RunView.model_validate(out)


# idempotency keys of scoped actors are kept as "actor\x1f<owner>\x1f<key>": one owner's key never binds
# another owner's run (upstream binds (owner, key)); a local caller's keys are stored as given
OWNER_KEY_PREFIX = "actor\x1f"


def scoped_key(owner: str, key: str | None) -> str | None:
    if key is None or owner == "local":
        return key
    return f"{OWNER_KEY_PREFIX}{owner}\x1f{key}"


# -- events, calls, results -----------------------------------------------------------------------
def wire_event(row: Any, data: WireJSON) -> Event:
    return Event(seq=row.seq, at=datetime.fromtimestamp(row.ts, UTC).isoformat(), kind=row.type, data=data)


def _mask(run_id: str) -> int:
    return int(hashlib.sha256(run_id.encode()).hexdigest()[:32], 16)


def call_id(run_id: str, seq: int, role: str) -> str:
    """``call-<32 hex>``: the cell's sequence number and the role, masked by the run (reversible)."""
    value = ((seq << ROLE_BITS) | ROLES.index(role)) ^ _mask(run_id)
    return "call-" + format(value, "032x")


def parse_call_id(run_id: str, text: str) -> tuple[int, str] | None:
    """(seq, role) of a call id of this run, or None when it is not one."""
    if not (text.startswith("call-") and len(text) == 37):
        return None
    try:
        value = int(text[5:], 16) ^ _mask(run_id)
    except ValueError:
        return None
    role = value & ((1 << ROLE_BITS) - 1)
    if role >= len(ROLES):
        return None
    return value >> ROLE_BITS, ROLES[role]


def call_status(state: str, error_class: str | None, record_status: str | None, role: str) -> str:
    """Upstream's call status: sent (in flight), sent_unknown (in flight when the service stopped: it may
    have been billed), replayed, or the finished call's own status."""
    in_flight = "judge_dispatching" if role == "judge" else "dispatching"
    if state == in_flight:
        return "sent"
    ambiguous = "ambiguous_judge_dispatch" if role == "judge" else "ambiguous_dispatch"
    if state == "ambiguous" and (error_class == ambiguous or record_status is None):
        return "sent_unknown"
    return record_status or ("failed" if state in ("failed", "cancelled") else state)


def usage_tokens(usage: WireJSON | None) -> WireJSON | None:
    """sr-bench's four buckets under upstream's result field names."""
    if usage is None:
        return None
    return {"input_tokens": usage.get("input"), "cached_input_tokens": usage.get("cached_input"),
            "cache_write_tokens": usage.get("cache_write"), "output_tokens": usage.get("output")}


def wire_tokens(tokens: Any) -> Any:
    """A report's four-bucket token totals with upstream's names beside sr-bench's (upstream's Dashboard
    `tokenTotal()` reads ``total_tokens`` or the four ``*_tokens`` buckets)."""
    if not isinstance(tokens, dict):
        return tokens
    named = usage_tokens(tokens) or {}
    total = sum(v for v in named.values() if isinstance(v, int)) if all(
        isinstance(v, int) for v in named.values()) else None
    return {**tokens, **named, "total_tokens": total}


def wire_result(row: WireJSON) -> WireJSON:
    """A report row as upstream's case result: status, score and token usage beside sr-bench's fields
    (`tokens` keeps the four buckets under sr-bench's names)."""
    out = dict(row)
    out.update(status=row["state"], score=None if row.get("correct") is None else int(bool(row["correct"])),
               tokens=row.get("usage"), usage=usage_tokens(row.get("usage")))
    return out


# -- reports and comparisons ----------------------------------------------------------------------
def wire_report(report: WireJSON, digest: str, cache_hit: bool, explain: str,
                figures: Figures = NO_FIGURES, context: ReportContext | None = None) -> WireJSON:
    """The report object itself with upstream's fields beside sr-bench's: summary rows carry `id` (the
    target) and upstream's figures (`figures.py`, from the report's rows: per target and per target and
    benchmark), token totals under both names, upstream's `failure`, `child_attempts` and provenance
    (`context`: the run's wire manifest and recovery children); with its digest and why it was (re)built."""
    out = dict(report)
    summary = dict(report.get("summary") or {})
    summary["targets"] = [_tokens({**merge(t, figures.targets.get(t["target_id"]), SINGLE_FILLED), "id": t["target_id"]})
                          for t in summary.get("targets", [])]
    out["summary"] = summary
    out["benchmarks"] = [_tokens({**merge(b, figures.benchmarks.get((b["target_id"], b["benchmark"]))),
                                  "id": b["target_id"]}) for b in report.get("benchmarks", [])]
    if context is not None:
        out.update(failure=figures.failure, child_attempts=context.children,
                   provenance={**report.get("provenance", {}), **_provenance(report, context.manifest)})
    out.update(report_digest=digest, cache_hit=cache_hit, explain=explain, **status_fields(report.get("status")))
    return out


def status_fields(status: Any) -> WireJSON:
    """A stored run status as the wire says it: upstream's (`stopped_early` is `completed`) and whether the run
    stopped early beside it."""
    return {"status": wire_status(status) if status == "stopped_early" else status,
            "stopped_early": status == "stopped_early"}


class ReportContext(NamedTuple):
    """What a report's wire form reads beside the report: the run's wire manifest, its recovery children."""

    manifest: WireJSON
    children: list[WireJSON]


def _provenance(report: WireJSON, manifest: WireJSON) -> WireJSON:
    """Upstream's provenance fields the report object does not hold, from the run's frozen manifest."""
    ds = manifest.get("dataset") or {}
    return {"case_sha256": manifest.get("case_sha256"), "sampling": manifest.get("sampling"),
            "custom_subset": bool(ds.get("custom_subset", False)), "runner": None,
            "accounting_correction": report.get("accounting_correction"),
            "target_profiles": [{"id": t.get("id"), "model": t.get("model"), "kind": t.get("kind"),
                                 "request_params": t.get("request_params") or {},
                                 "config_hash": t.get("config_hash")} for t in manifest.get("targets") or []]}


def _tokens(row: WireJSON) -> WireJSON:
    return {**row, "tokens": wire_tokens(row["tokens"])} if "tokens" in row else row


def _upstream_interval(c: WireJSON) -> tuple[WireJSON, str | None]:
    """What upstream's `quality_delta_ci95` fields carry: REP-6's weighted Hoeffding interval (the seed's
    conservative interval) and its qualification, whichever interval makes sr-bench's claim (`claim`,
    `claim_rule`, `claim_ci95` beside them); a claim blocked by evidence stays blocked."""
    hoeffding = (c.get("intervals") or {}).get("hoeffding")
    if hoeffding is None or hoeffding.get("makes_claim"):
        return c.get("interval") or {}, c.get("claim")
    said = (c.get("claims_by_rule") or {}).get("hoeffding")
    return hoeffding, c["claim"] if c.get("claim") == "blocked" else said


def wire_comparison(cmp: WireJSON, base_report: WireJSON, cand_report: WireJSON,
                    digest: str, cache_hit: bool, explain: str,
                    figures: tuple[Figures, Figures] | None = None) -> WireJSON:
    """sr-bench's comparison with upstream's fields beside it: the runs, their targets' metrics, the
    baseline selection and one `comparisons` row per candidate target (Δ with REP-6's Hoeffding interval
    as upstream has it and sr-bench's claim beside it, the stratified bootstrap interval, savings per
    cost scope, wins/losses/ties); `figures`: upstream's figures of the two reports (`wire_report`)."""
    base = cmp["baseline"]
    tied = base.get("tied_strongest") or []
    principal = {c["target_id"]: c["savings"]["principal"] for c in cmp["candidates"]}
    neutral = {c["target_id"]: c["savings"]["cache_neutral"] for c in cmp["candidates"]}
    rows = []
    for c in cmp["candidates"]:
        interval, qualification = _upstream_interval(c)
        boot = c.get("bootstrap") or {}
        p, n = principal[c["target_id"]], neutral[c["target_id"]]
        rows.append({
            "baseline_target_id": base["target_id"], "candidate_target_id": c["target_id"], "paired_cases": c["n"],
            "quality_delta": c["delta"], "quality_delta_ci95": interval.get("ci"),
            "quality_delta_ci95_method": interval.get("method") or cmp.get("claim_rule"),
            "quality_delta_ci95_qualification": qualification,
            "claim": c.get("claim"), "claim_rule": c.get("claim_rule"), "claim_ci95": (c.get("interval") or {}).get("ci"),
            "quality_delta_bootstrap_ci95": boot.get("ci"),
            "cost_saving_percent": p.get("saving_pct"), "baseline_cost_usd": p.get("baseline_usd"),
            "candidate_cost_usd": p.get("candidate_usd"),
            "cache_neutral_baseline_cost_usd": n.get("baseline_usd"),
            "cache_neutral_candidate_cost_usd": n.get("candidate_usd"),
            "cache_neutral_cost_saving_percent": n.get("saving_pct"),
            **_cost_scopes(c, base), "micro_quality_delta": c.get("micro_delta"),
            "quality_metric": (cmp.get("aggregation") or {}).get("quality"),
            "wins": c["wins"], "losses": c["losses"], "ties": c["ties"]})
    blocked = cmp.get("savings_blocked")
    bfig, cfig = figures if figures is not None else (NO_FIGURES, NO_FIGURES)
    cost_known = all(t.get("cost_complete") for t in tied)
    return {**cmp, "comparison_digest": digest, "cache_hit": cache_hit, "explain": explain,
            "baseline_run_id": cmp["baseline_run"]["run_id"], "candidate_run_id": cmp["candidate_run"]["run_id"],
            "baseline_status": status_fields(cmp["baseline_run"]["status"])["status"],
            "candidate_status": status_fields(cmp["candidate_run"]["status"])["status"],
            "baseline_quality_complete": bool(base_report.get("complete")),
            "candidate_quality_complete": bool(cand_report.get("complete")),
            "baseline_targets": wire_report(base_report, "", False, "", bfig)["summary"]["targets"],
            "candidate_targets": wire_report(cand_report, "", False, "", cfig)["summary"]["targets"],
            "quality_denominator": "every planned cell (a failed or missing cell counts as incorrect)",
            "baseline_selection": BASELINE_SELECTION, "baseline_selected_target_id": base["target_id"],
            "baseline_selection_qualification": base.get("rule"),
            "baseline_tied_best_target_ids": [t["target_id"] for t in tied],
            "baseline_tie_policy": "complete and lowest principal cost, then target id",
            "baseline_cost_comparison_eligible": blocked is None and cost_known,
            "baseline_cost_comparison_reason": blocked if blocked is not None else (
                None if cost_known else "a tied strongest baseline has an unknown cost"),
            "comparisons": rows,
            "routing_facts": [f.model_dump(mode="json") for f in routing_facts(Comparison.model_validate(cmp))]}


BASELINE_SELECTION = ("the strongest single target of the baseline run by exact weighted quality on the compared "
                      "cases (a failed or missing cell counts as incorrect); selection uncertainty is not included")


def _cost_scopes(c: WireJSON, base: WireJSON) -> WireJSON:
    """A candidate's costs per scope as upstream names them: subject (sr-bench's principal), total (principal
    plus auxiliary), evaluation (auxiliary: judge, simulator, scaffolding), on the compared cases."""
    p, t = c["savings"]["principal"], c["savings"]["total"]
    chosen = next((x for x in base.get("tied_strongest") or [] if x["target_id"] == base["target_id"]), None)
    return {"subject_cost_saving_percent": p.get("saving_pct"), "baseline_subject_cost_usd": p.get("baseline_usd"),
            "candidate_subject_cost_usd": p.get("candidate_usd"), "total_cost_saving_percent": t.get("saving_pct"),
            "baseline_total_cost_usd": t.get("baseline_usd"), "candidate_total_cost_usd": t.get("candidate_usd"),
            "baseline_evaluation_cost_usd": None if chosen is None else chosen["costs"].get("auxiliary"),
            "candidate_evaluation_cost_usd": (c.get("costs") or {}).get("auxiliary"),
            "total_cost_comparison_reason": t.get("reason"), "cache_neutral_cost_basis": COMPARE_NEUTRAL_BASIS}


COMPARE_NEUTRAL_BASIS = ("subject cost only, cached and cache-written input priced as fresh input, against the "
                         "same selected baseline; excludes auxiliary calls; a counterfactual, not billed spend")


def wire_correction(body: WireJSON) -> WireJSON:
    """A usage correction with upstream's receipt fields beside sr-bench's."""
    evidence = hashlib.sha256(canonical_json({k: v for k, v in body.items() if k != "digest"})).hexdigest()
    return {**body, "id": "accounting-" + evidence[:24], "evidence_sha256": evidence,
            "qualified": bool(body.get("qualified", body.get("unverifiable_count") == 0)),
            "corrected_call_count": body.get("changed_count"), "verified_call_count": body.get("verified_count"),
            "unverifiable_call_count": body.get("unverifiable_count"),
            "original_known_spend_usd": body.get("old_known_cost_usd"),
            "corrected_known_spend_usd": body.get("new_known_cost_usd"), "original_receipts_preserved": True}


# -- recovery plans -------------------------------------------------------------------------------
def wire_recovery_plan(plan: WireJSON, progress: Progress, budget_usd: float | None) -> WireJSON:
    """sr-bench's recovery plan (sent back whole by sr-bench's CLI) with upstream's fields beside it;
    `parent` is upstream's parent snapshot object (`progress`: the parent's), the parent's id is
    `parent_run_id`."""
    snap = plan["parent_snapshot"]
    return {**plan, "parent_run_id": plan["parent"],
            "eligible_cells": [{"case_id": e["case_id"], "target_id": e["target_id"]} for e in plan["eligible"]],
            "counts": {"eligible": len(plan["eligible"]), "excluded": len(plan["excluded"])},
            "parent": {"status": status_fields(snap["status"])["status"], "progress": progress.model_dump(),
                              "known_spend_usd": snap.get("known_cost_usd"),
                              "spend_complete": snap.get("known_cost_usd") is not None},
            "new_attempt_budget_usd": budget_usd,
            "requires_new_attempt_acknowledgment": plan["requires_acknowledgement"],
            "scope": "selected cells of the parent only; never a complete evaluation on its own"}
