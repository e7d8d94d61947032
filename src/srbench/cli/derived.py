"""`compare`, `regrade`, `export`: derived results of finished runs (cached rules, no model calls)."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console, Group, RenderableType
from rich.table import Table

from srbench.cli.answer import fact_lines, routing_facts
from srbench.cli.common import Ctx, FiniteFloat, emit, load_structured
from srbench.cli.diagnose import diagnose_view, write_diagnosis
from srbench.cli.manifests import read_manifest
from srbench.cli.output import SafeConsole, WholeTable, human, table
from srbench.cli.runs import wait_for, without_volatile, write_json
from srbench.errors import InvalidInput
from srbench.schemas.wire import WireJSON


def _explain(res: WireJSON, what: str) -> None:
    click.echo(f"{what}: {'up to date (cache hit)' if res['cache_hit'] else res['explain']}", err=True)


def _pct(v: Any) -> str:
    return "unknown" if v is None else f"{v:.1f}%"


def comparison_table(cmp: WireJSON) -> Table:
    """One row per candidate: Δ with the claim rule's interval and the other rule's beside it."""
    base = cmp["baseline"]
    rule = cmp.get("claim_rule", "hoeffding")
    other = "betting" if rule == "hoeffding" else "hoeffding"
    t = table("candidate", "macro quality", f"Δ ({rule} 95%, claim)", f"{other} 95%", "claim", "W/L/T",
              "saving p / t / c", ids=["candidate"], short=["W/L/T", "claim"], optional=[f"{other} 95%"],
              title=f"baseline {base['target_id']} (macro quality {base['quality']:.3f}) — {cmp['evidence']['label']} — "
                    f"claims by {rule}" + (f" — {cmp['cases']} of {cmp['planned_cases']} cases (stopped early)"
                                           if cmp.get("early_stop") else ""),
              caption="macro quality = weighted mean of per-benchmark accuracies; Δ = candidate − baseline "
                      "macro quality; W/L/T = cases only the candidate / only the baseline got right / tied; saving p / t / c "
                      "= principal (model calls) / total (with judge/simulator calls) / cache-neutral")
    for c in cmp["candidates"]:
        ci = c["interval"]["ci"]
        oi = (c.get("intervals") or {}).get(other)
        s = c["savings"]
        t.add_row(c["target_id"], f"{c['quality']:.3f}", f"{c['delta']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]",
                  "—" if oi is None else f"[{oi['ci'][0]:+.3f}, {oi['ci'][1]:+.3f}]" + ("" if oi["valid"] else " (invalid)"),
                  c["claim"], f"{c['wins']}/{c['losses']}/{c['ties']}",
                  " / ".join(_pct(s[k]["saving_pct"]) for k in ("principal", "total", "cache_neutral")))
    return t


def comparison_notes(cmp: WireJSON) -> list[str]:
    """Plain sentences a first-time reader needs: why a claim is inconclusive or blocked, how many
    cases would tell, and what the savings columns mean."""
    out = []
    for c in cmp["candidates"]:
        d = c.get("detectability")
        if d:
            tail = (f"about {d['cases_per_benchmark']} cases per benchmark ({d['total_cases']} in all, now "
                    f"{sum(d['cases_now'].values())}) would make a difference of this size ({abs(d['observed_delta']):.3f}) "
                    "detectable" if d.get("cases_per_benchmark") else d["note"])
            out.append(f"{c['target_id']}: inconclusive — the interval's half-width is ±{d['half_width']:.3f}, "
                       f"so Δ {c['delta']:+.3f} cannot be told from zero; {tail}.")
        elif c["claim"] == "inconclusive" and c.get("planning"):
            out.append(_planned(c))
        p = c.get("primary")
        if p and p.get("claim") is not None:
            ci = p["interval"]["ci"]
            out.append(f"{c['target_id']}: declared primary benchmarks {', '.join(p['benchmarks'])}: Δ {p['delta']:+.3f} "
                       f"[{ci[0]:+.3f}, {ci[1]:+.3f}] → {p['claim']}"
                       + ("" if p.get("non_inferior") is None else f"; non-inferior: {p['non_inferior']}") + ".")
        ev = c.get("config_hash_evidence")
        if ev and ev.get("confirmed"):
            out.append(f"{c['target_id']}: its pinned config_hash {ev['pinned']} was confirmed (probe before and after "
                       f"the run; header on {ev['responses_with_header']} of {ev['responses']} responses).")
        if c["claim"] == "blocked":
            ev = c.get("config_hash_evidence") or {}
            out.append(f"{c['target_id']}: claim blocked — its pinned config_hash was not confirmed ({ev.get('reason')}).")
    out.append("saving = principal (subject) cost; saving total also counts judge/simulator calls; cache-neutral "
               "prices every input token as uncached (REP-3).")
    return out


def needed_text(plan: WireJSON) -> str:
    """The cases the planned effect needs: per-benchmark sizes when the planning has them (a new plan:
    stats/planning.py with_sizes), else one scale of every benchmark."""
    sized, need = plan.get("sized_for_effect"), plan["needed_for_effect"]
    if sized is not None:
        per = ", ".join(f"{b} {k}{'*' if b in sized['at_available'] else ''}" for b, k in sized["per_benchmark"].items())
        if not sized["reached"]:
            return (f"more cases than the pinned sources hold (all {sized['total']} of them give "
                    f"{100 * sized['power']:.0f}% power; cases per benchmark: {per})")
        return (f"about {sized['total']} cases, each benchmark sized for its weight (cases per benchmark: {per}; "
                "* = all its source holds)")
    return "more than 10⁴ times these cases" if need is None else (
        f"about {need['total']} cases in all (cases per benchmark: "
        + ", ".join(f"{b} {k}" for b, k in need["per_benchmark"].items()) + ")")


def _planned(c: WireJSON) -> str:
    """An inconclusive claim of a rule other than Hoeffding, explained by its planning (claims.assess)."""
    lo, hi = c["interval"]["ci"]
    plan = c["planning"]["at_observed_ties"]
    tail = needed_text(plan)
    k = f", against K = {plan['singles']} singles" if plan.get("singles", 1) > 1 else ""
    return (f"{c['target_id']}: inconclusive — the interval's half-width is ±{(hi - lo) / 2:.3f}, so Δ {c['delta']:+.3f} "
            f"cannot be told from zero; {tail} would detect +{100 * plan['effect']:.1f} points with "
            f"{100 * plan['power']:.0f}% power at the observed tie rate ({plan['rule']}{k}).")


def _usd(v: Any) -> str:
    return "unknown" if v is None else f"{v:.5f} USD"


def _ci(ci: Any, fmt: str = "{:+.3f}") -> str:
    return "[unknown]" if not ci else f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]"


def headline_lines(cmp: WireJSON) -> list[str]:
    """"Does routing pay?": each router (every candidate when none is a router) against the strongest
    single model, in plain words with units and the aggregation named (answer.py: `report`'s facts)."""
    return [line for f in routing_facts(cmp) for line in fact_lines(f)]


def per_benchmark_table(cmp: WireJSON) -> RenderableType:
    """Per router and benchmark: both accuracies with Wilson 95% intervals and the paired Δ with its
    Hoeffding interval on that benchmark alone (descriptive; the claim is the weighted one). Each router
    gets its own table, named in the title, so every interval stays whole at 80 columns."""
    routers = [c for c in cmp["candidates"] if c["kind"] == "mom"] or cmp["candidates"]
    if len(routers) > 1:
        return Group(*(per_benchmark_table({**cmp, "candidates": [c]}) for c in routers))
    base = cmp["baseline"]["target_id"]
    one = len(routers) == 1
    cols = ("benchmark", "cases", "candidate accuracy [95% Wilson]", "baseline accuracy [95% Wilson]",
            "Δ [95% Hoeffding]", "W/L/T")
    who = f"{routers[0]['target_id']} " if one and routers else ""
    t = table(*(cols if one else ("candidate", *cols)), ids=[] if one else ["candidate"],
              short=["benchmark", "cases", "W/L/T"],
              title=f"per benchmark, {who}against {base} (accuracy = correct / cases of the benchmark)",
              caption="Δ interval: paired Hoeffding 95% on this benchmark's cases alone (descriptive; the claim "
                      "is the weighted interval above)")
    for col in t.columns:
        if "accuracy" in str(col.header) or str(col.header).startswith("Δ"):
            col.min_width = 12

    def acc(v: Any, ci: Any) -> str:
        return f"{v:.2f}" + ("" if not ci else f" [{ci[0]:.2f}, {ci[1]:.2f}]")
    for c in routers:
        for b in c["benchmarks"]:
            row = (b["benchmark"], str(b["n"]),
                   acc(b["candidate_accuracy"], b.get("candidate_accuracy_ci95")),
                   acc(b["baseline_accuracy"], b.get("baseline_accuracy_ci95")),
                   f"{b['delta']:+.2f} " + _ci((b.get("delta_interval") or {}).get("ci"), "{:+.2f}"),
                   f"{b['wins']}/{b['losses']}/{b['ties']}")
            t.add_row(*(row if one else (c["target_id"], *row)))
    return t


def published_table(cmp: WireJSON) -> Table:
    t = WholeTable(title="per benchmark: sr-bench's rule beside the published rule (same answers, no model call)")
    for col in ("candidate", "benchmark", "published metric", "candidate sr-bench / published",
                "baseline sr-bench / published", "graded differently (cand. / base.)"):
        t.add_column(col)

    def f(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    def g(v: Any) -> str:
        return "-" if v is None else str(v)
    notes: dict[str, str] = {}
    for p in cmp.get("published", []):
        c, b = p["candidate_rules"], p["baseline_rules"] or {}
        note = c.get("reason") if not c["published_rule"] else c.get("note")
        if note:
            notes.setdefault(p["benchmark"], note)
        t.add_row(p["candidate"], p["benchmark"], c["published_metric"] if c["published_rule"] else "unavailable",
                  f"{f(c['sr_bench_accuracy'])} / {f(c['published'])}",
                  f"{f(b.get('sr_bench_accuracy'))} / {f(b.get('published'))}",
                  f"{g(c['graded_differently'])} / {g(b.get('graded_differently'))}")
    if notes:
        t.caption = "\n".join(f"{k}: {v}" for k, v in sorted(notes.items()))
    return t


def inconclusive_lines(cmp: WireJSON) -> list[str]:
    """For each inconclusive candidate: what the sample could detect (the declared rule)."""
    out = []
    for c in cmp["candidates"]:
        p = c.get("planning")
        if not p:
            continue
        at = p["at_observed_ties"]
        mde = at["detectable_effect"]
        out.append(f"{c['target_id']}: inconclusive — at the observed tie rate {100 * p['observed_tie_rate']:.0f}% "
                   f"the {p['rule']} rule detects {('no effect' if mde is None else f'{100 * mde:.1f} pts')} with "
                   f"{100 * at['power']:.0f}% power at these sizes; +{100 * at['effect']:.1f} pts needs "
                   f"{needed_text(at)}")
    return out


@click.command()
@click.argument("baseline_id")
@click.argument("candidate_id", required=False)
@click.option("--margin", type=FiniteFloat(min=0, max=1), default=None,
              help="Non-inferiority margin (quality units). The candidate plan's declared statistics.margin is "
                   "used by default; a margin given only here is post hoc and never yields a claim (REP-7).")
@click.option("--output", type=click.Path(dir_okay=False), default=None)
@click.option("--explain", is_flag=True)
@click.option("--diagnose", "with_diagnosis", is_flag=True,
              help="Add the routing diagnostics: oracle, headroom, optimality, where the router loses, overhead "
                   "(from the stored runs; no model call).")
@click.option("--diagnose-output", type=click.Path(dir_okay=False), default=None,
              help="Write the diagnostics to this file: the outcome matrix as CSV for a .csv name, else JSON "
                   "(implies --diagnose).")
@click.pass_obj
def compare(obj: Ctx, baseline_id: str, candidate_id: str, margin: float | None, output: str | None,
            explain: bool, with_diagnosis: bool, diagnose_output: str | None) -> None:
    """Paired comparison of a candidate run against the strongest single model of a baseline run.

    With one RUN: the run's routers against the strongest single model of the same run (the
    baseline target is never compared with itself)."""
    baseline_id = obj.run_id(baseline_id)
    cand = obj.run_id(candidate_id) if candidate_id else baseline_id
    body: WireJSON = {"baseline_run_id": baseline_id, "candidate_run_id": cand}
    if margin is not None:              # sent only when given: upstream's service takes no other field
        body["margin"] = margin
    res = obj.client.post("/comparisons", body)
    if res.get("kind") != "comparison":     # upstream's service: its own answer, one line per candidate target
        if output:
            write_json(output, res)
        for line in upstream_comparison_lines(res):
            click.echo(line, err=True)
        emit(res)
        return
    if explain:
        _explain(res, "comparison")
    cmp = res
    diag = None
    if with_diagnosis or diagnose_output:
        diag = without_volatile(obj.client.get(f"/runs/{cand}/diagnose", baseline=baseline_id))
        cmp = {**res, "diagnose": diag}
        if diagnose_output:
            write_diagnosis(diagnose_output, diag)
    if output:
        write_json(output, without_volatile(cmp))
    if output or human():               # the tables: on stderr beside a file, on stdout for a person
        comparison_view(cmp, SafeConsole(stderr=not human(), highlight=False))
        if diag is not None:
            diagnose_view(diag, SafeConsole(stderr=not human(), highlight=False))
    else:
        for line in headline_lines(cmp):
            SafeConsole(stderr=True).print(line, markup=False, highlight=False)
        emit(cmp)


def upstream_comparison_lines(cmp: WireJSON) -> list[str]:
    """Per candidate target of upstream's comparison: Δ quality with its interval, savings, wins/losses/ties."""
    def pct(v: Any) -> str:
        return "unknown" if v is None else f"{v:.1f}%"
    out = [f"baseline: {cmp.get('baseline_selected_target_id')} of {cmp.get('baseline_run_id')}"]
    for r in cmp.get("comparisons") or []:
        ci = r.get("quality_delta_ci95") or [None, None]
        interval = "unknown" if None in ci else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"
        out.append(f"{r.get('candidate_target_id')}: Δ quality {r.get('quality_delta', 0):+.3f} {interval}; subject "
                   f"cost saving {pct(r.get('subject_cost_saving_percent'))}, total "
                   f"{pct(r.get('total_cost_saving_percent'))}; {r.get('wins')} wins, {r.get('losses')} losses, "
                   f"{r.get('ties')} ties")
    return out


def comparison_view(cmp: WireJSON, console: Console) -> None:
    for line in headline_lines(cmp):
        console.print(line, markup=False, highlight=False)
    console.print(comparison_table(cmp))
    console.print(per_benchmark_table(cmp))
    console.print(published_table(cmp))
    for line in comparison_notes(cmp) + inconclusive_lines(cmp):
        console.print(line, markup=False)


@click.command()
@click.argument("run_id")
@click.option("--output", type=click.Path(dir_okay=False), required=True)
@click.option("--explain", is_flag=True)
@click.pass_obj
def regrade(obj: Ctx, run_id: str, output: str, explain: bool) -> None:
    """Offline regrade of saved multiple-choice and grid answers (zero model calls)."""
    run_id = obj.run_id(run_id)                  # echoed whole, not the prefix given
    res = obj.client.post(f"/runs/{run_id}/regrade")
    if explain:
        _explain(res, "regrade")
    write_json(output, without_volatile(res))
    emit({"run_id": run_id, "changed_count": res["changed_count"], "output": output, "model_requests": 0})


@click.command()
@click.argument("run_id")
@click.option("--output", type=click.Path(dir_okay=False), required=True)
@click.pass_obj
def export(obj: Ctx, run_id: str, output: str) -> None:
    """Export a dev run as a training matrix (holdout and unknown splits are refused)."""
    run_id = obj.run_id(run_id)                  # echoed whole, not the prefix given
    res = obj.client.post(f"/runs/{run_id}/export")
    write_json(output, without_volatile(res))
    emit({"run_id": run_id, "cases": len(res["cases"]), "output": output})


@click.command()
@click.option("--manifest", required=True, type=click.Path(dir_okay=False), help="A preview manifest or frozen plan.")
@click.option("--detach", is_flag=True)
@click.option("--idempotency-key", default=None)
@click.pass_obj
def preview(obj: Ctx, manifest: str, detach: bool, idempotency_key: str | None) -> None:
    """Ask the router which decision and model each case gets (no inference, no capability score)."""
    obj.refuse_detach(detach)
    data = read_manifest(obj, manifest)
    if not isinstance(data, dict):
        raise InvalidInput(f"{manifest}: expected a mapping")
    if data.get("kind") != "plan":
        data.setdefault("mode", "preview")
    if data.get("mode") != "preview":
        raise InvalidInput("preview needs a manifest with mode: preview (use `run` for live runs)")
    res = obj.client.post("/runs", {"manifest": data, "idempotency_key": idempotency_key})
    run_id = res["id"]
    if detach:
        emit({"run_id": run_id, "status": res["status"], "created": res["created"]})
        return
    final = wait_for(obj, run_id)
    rep = obj.client.get(f"/runs/{run_id}/report")
    t = WholeTable(title=f"preview {run_id} — {final['status']} (routing only; no capability score)")
    for col in ("target", "models", "decisions", "selection statuses"):
        t.add_column(col)
    for s in rep["summary"]["targets"]:
        t.add_row(s["target_id"], _hist(s.get("models")), _hist(s.get("decisions")), _hist(s.get("selection_statuses")))
    SafeConsole(stderr=True).print(t)
    emit({"run_id": run_id, "status": final["status"]})


def _hist(h: dict[str, int] | None) -> str:
    return ", ".join(f"{k}: {v}" for k, v in (h or {}).items()) or "-"


@click.command()
@click.option("--baseline", "baseline_id", required=True)
@click.option("--preview", "preview_id", required=True)
@click.option("--idempotency-key", default=None, help="Accepted for upstream's CLI: the (baseline, preview) pair "
              "binds one replay run by itself.")
@click.pass_obj
def replay(obj: Ctx, baseline_id: str, preview_id: str, idempotency_key: str | None) -> None:
    """Estimate a routing change from saved single-model answers (no model call; not a measurement)."""
    res = obj.client.post("/replays", {"baseline_run_id": obj.run_id(baseline_id), "preview_run_id": obj.run_id(preview_id),
                                       "idempotency_key": idempotency_key})
    emit({"run_id": res["id"], "status": res["status"], "created": res["created"],
          "model_requests": 0, "evidence_mode": "offline_estimate"})


@click.command(name="reconcile-usage")
@click.argument("run_id")
@click.option("--router", "router_opts", multiple=True, metavar="TARGET=ROUTER",
              help="re-attribute a MoM target's calls with another router adapter (from the stored headers)")
@click.pass_obj
def reconcile_usage(obj: Ctx, run_id: str, router_opts: tuple[str, ...]) -> None:
    """Re-derive usage and cost from the retained SSE metering; append an idempotent correction."""
    chosen = {}
    for opt in router_opts:
        tid, sep, name = opt.partition("=")
        if not sep or not tid or not name:
            raise click.BadParameter(f"{opt!r} is not TARGET=ROUTER", param_hint="--router")
        chosen[tid] = name
    run_id = obj.run_id(run_id)
    c = obj.client.post(f"/runs/{run_id}/reconcile-usage", {"routers": chosen} if chosen else None)
    emit({"run_id": run_id, "correction": c["digest"], "appended": c["appended"], "verified": c["verified_count"],
          "changed": c["changed_count"], "unverifiable": c["unverifiable_count"],
          "old_known_cost_usd": c["old_known_cost_usd"], "new_known_cost_usd": c["new_known_cost_usd"],
          "routers": c.get("routers"), "model_requests": 0})


@click.command()
@click.argument("run_id")
@click.option("--prices", "prices_path", required=True, type=click.Path(dir_okay=False),
              help='JSON/YAML: {target id: {model: {input, cached_input, cache_write, output}}} (USD per 1M).')
@click.option("--reason", default=None)
@click.pass_obj
def reprice(obj: Ctx, run_id: str, prices_path: str, reason: str | None) -> None:
    """Reprice a finished run from its stored calls (zero model calls); reports then use the new prices."""
    run_id = obj.run_id(run_id)
    res = obj.client.post(f"/runs/{run_id}/reprice", {"prices": load_structured(prices_path), "reason": reason})
    emit({"run_id": run_id, "correction": res["correction"]["digest"], "appended": res["appended"],
          "targets": sorted(res["correction"]["prices"]), "model_requests": 0})


@click.command(name="recover-plan")
@click.argument("run_id")
@click.option("--mode", default="undispatched", show_default=True, type=click.Choice(["undispatched", "failed"]),
              help="undispatched: cells never sent; failed: cells that failed (a new, paid attempt).")
@click.option("--output", default=None, type=click.Path(dir_okay=False),
              help="Where to write the plan for `recover --plan` (without it: printed whole in the JSON answer).")
@click.pass_obj
def recover_plan(obj: Ctx, run_id: str, mode: str, output: str | None) -> None:
    """Review which cells of a terminated run a recovery may continue (edit selected_cells to narrow)."""
    run_id = obj.run_id(run_id)
    plan = obj.client.post(f"/runs/{run_id}/recover-plan", {"mode": mode})
    if output is not None:
        write_json(output, plan)
    emit({"parent": run_id, "mode": mode, "eligible": len(eligible_of(plan)), "excluded": excluded_of(plan),
          "output": output, "plan_sha256": plan["plan_sha256"], **({"plan": plan} if output is None else {})})


def eligible_of(plan: WireJSON) -> list[Any]:
    """A recovery plan's eligible cells: sr-bench's `eligible`, or upstream's `eligible_cells`."""
    return list(plan["eligible"] if "eligible" in plan else plan.get("eligible_cells") or [])


def excluded_of(plan: WireJSON) -> Any:
    """Why cells are not eligible: sr-bench's counts per reason, or upstream's excluded count."""
    return plan["excluded_counts"] if "excluded_counts" in plan else (plan.get("counts") or {}).get("excluded")


def recover_request(plan: Any, key: str, acknowledge: bool) -> WireJSON:
    """The body of `POST /runs/{id}/recover`: sr-bench's reviewed plan sent back whole, or, for a plan upstream's
    service wrote, upstream's form (its mode, hash and selected cells, else its eligible cells)."""
    if not isinstance(plan, dict):
        raise InvalidInput("a recovery plan is a JSON object: the file `recover-plan --output` wrote")
    if plan.get("kind") == "recovery-plan":
        return {"plan": plan, "idempotency_key": key, "acknowledge_new_attempt": acknowledge}
    cells = plan.get("selected_cells") or plan.get("eligible_cells") or []
    return {"mode": plan.get("mode"), "plan_sha256": plan.get("plan_sha256"), "cells": cells,
            "idempotency_key": key, "acknowledge_new_attempt": acknowledge}


@click.command()
@click.argument("run_id")
@click.option("--plan", "plan_path", required=True, type=click.Path(dir_okay=False))
@click.option("--idempotency-key", required=True)
@click.option("--acknowledge-new-attempt", is_flag=True, help="Mode failed: new attempts cost extra.")
@click.option("--detach", is_flag=True)
@click.pass_obj
def recover(obj: Ctx, run_id: str, plan_path: str, idempotency_key: str, acknowledge_new_attempt: bool,
            detach: bool) -> None:
    """Create a recovery child run over the plan's selected cells (the parent is kept as it is)."""
    obj.refuse_detach(detach)
    run_id = obj.run_id(run_id)
    child = obj.client.post(f"/runs/{run_id}/recover",
                            recover_request(load_structured(plan_path), idempotency_key, acknowledge_new_attempt))
    created = child.get("created")          # upstream's service answers the bare child run
    if created is False:
        click.echo(f"idempotency key already bound to {child['id']}: nothing new submitted", err=True)
    if detach:
        emit({"run_id": child["id"], "parent": run_id, "status": child["status"], "created": created})
        return
    final = wait_for(obj, child["id"])
    emit({"run_id": final["id"], "parent": run_id, "status": final["status"], "progress": final["progress"]})


def register(cli: click.Group) -> None:
    for c in (compare, regrade, export, preview, replay, reconcile_usage, reprice, recover_plan, recover):
        cli.add_command(c)
