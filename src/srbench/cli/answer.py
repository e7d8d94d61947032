""""Does routing pay?" in the terminal: what `report`, `compare` and the demo print.

The facts are the service's: every comparison answer carries `routing_facts` (stages.headline), which the
Dashboard's panel (dashboard/static/headline.js) renders too, so the CLI and the panel say the same
from the same code. `routing_answer` picks the comparison as the panel does: the run's routers against
the strongest single model of the same run, else of the baseline run the service chooses (`GET
/runs/RUN/baselines`: finished, on the same cases and protocol, priced like it) or the one named.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from srbench.cli.output import table
from srbench.errors import SrBenchError
from srbench.schemas.wire import WireJSON
from srbench.stages.compare.headline import CLAIM_TEXT, SCOPES, BenchmarkRow, RouterFacts, Saving

__all__ = ["CLAIM_TEXT", "SCOPES", "BenchmarkRow", "RouterFacts", "RoutingAnswer", "Saving", "routing_facts"]

SCOPE_TEXT = {"principal": "principal (model calls)", "total": "total (with judge/simulator calls)",
              "cache_neutral": "cache-neutral (every input token uncached)"}
COMPARABLE = ("completed", "failed", "stopped_early")


class RoutingAnswer(BaseModel):
    run_id: str
    routers: list[RouterFacts]
    why_none: str | None = None


def routing_facts(cmp: WireJSON) -> list[RouterFacts]:
    """The facts the service's comparison answer carries (`routing_facts`, from stages.headline)."""
    return [RouterFacts.model_validate(f) for f in cmp["routing_facts"]]


def _f(v: float | None, fmt: str = "{:.3f}") -> str:
    return "unknown" if v is None else fmt.format(v)


def _ci(ci: list[float] | None, fmt: str = "{:+.3f}") -> str:
    return "[unknown]" if not ci else f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]"


def fact_lines(f: RouterFacts) -> list[str]:
    """The headline in plain words, with units and the aggregation named."""
    where = "of this run" if f.same_run else f"of run {f.baseline_run}"
    n = sum(f.model_mix.values())
    mix = ", ".join(f"{m} {k} calls ({100 * k / n:.0f}%)" for m, k in f.model_mix.items()) if n else \
        "no answered call names a served model"
    if f.unattributed_calls:
        mix += f"; {f.unattributed_calls} calls unattributed"

    def saving(s: Saving) -> str:
        if s.saving_pct is None:
            return f"{SCOPE_TEXT[s.scope]} unknown ({s.reason})"
        return f"{SCOPE_TEXT[s.scope]} {s.saving_pct:.1f}% ({_f(s.candidate_usd, '{:.5f}')} vs " \
               f"{_f(s.baseline_usd, '{:.5f}')} USD)"
    adjusted = f", {f.selection}" if f.selection else ""
    lines = [f"Does routing pay? {f.router} vs {f.baseline} (the strongest single model {where}): {f.claim.upper()}",
             f"  Δ macro quality {f.delta:+.3f} {_ci(f.ci)} (95% paired {f.rule} interval{adjusted}, {f.n} paired cases; "
             f"micro Δ per case {_f(f.micro_delta, '{:+.3f}')}): {f.claim_text}.",
             f"  evidence: {f.evidence}" + (f" — {f.standing_reason}" if f.standing_reason else ""),
             "  cost saving: " + "; ".join(saving(s) for s in f.savings) + ".",
             f"  model mix: {mix}."]
    lat = ((f.router, f.router_latency_s), (f.baseline, f.baseline_latency_s))
    if any(v is not None for _, pair in lat for v in pair):
        lines.append("  latency p50/p95: " + "; ".join(f"{t} {_f(a, '{:.2f}')}/{_f(b, '{:.2f}')} s"
                                                         for t, (a, b) in lat) + ".")
    if f.config_unconfirmed is not None:
        lines.append(f"  config_hash not confirmed: {f.config_unconfirmed}")
    return lines


def benchmark_rows_table(f: RouterFacts) -> Any:
    t = table("benchmark", "cases", f"{f.router} acc.", f"{f.baseline} acc.", "Δ [95% Hoeffding]", "W/L/T",
              ids=["benchmark"], short=["cases", "W/L/T"],
              title=f"per benchmark: {f.router} − {f.baseline} (accuracy = correct / cases; 95% Wilson)",
              caption="the Δ interval is this benchmark's alone (descriptive); the claim is the weighted one above")
    for b in f.benchmarks:
        t.add_row(b.benchmark, str(b.n), f"{_f(b.candidate_accuracy, '{:.2f}')} {_ci(b.candidate_ci, '{:.2f}')}",
                  f"{_f(b.baseline_accuracy, '{:.2f}')} {_ci(b.baseline_ci, '{:.2f}')}",
                  f"{b.delta:+.2f} {_ci(b.delta_ci, '{:+.2f}')}",
                  f"{b.wins}/{b.losses}/{b.ties}")
    return t


def partial_answer(report: WireJSON) -> str:
    """A run that will not finish (issue 27): what it answered, and its partial paired figure on the
    cases both sides answered (the report's), never a claim."""
    p = report.get("partial") or {}
    out = (p.get("label") or f"the run is {report.get('status')}") + "; it will not finish, so nothing is claimed"
    paired = report.get("paired") or {}
    for c in paired.get("candidates", []) if paired.get("partial") else []:
        if c.get("n"):
            out += (f"; {c['target_id']} vs {c['baseline_target_id']} on the {c['n']} of {c['planned_cases']} cases "
                    f"both answered: Δ macro quality {c['delta']:+.3f} {_ci(c['interval']['ci'])} (partial, descriptive)")
    return out


def routing_answer(client: Any, run: WireJSON, report: WireJSON, baseline: str | None = None
                   ) -> RoutingAnswer:
    """The run's routers weighed as the Dashboard's panel weighs them (or why there is nothing to weigh)."""
    rid = run["id"]
    kinds = {t["target_id"]: t.get("kind") for t in (report.get("summary") or {}).get("targets", [])}
    if run.get("mode", "live") != "live":
        return RoutingAnswer(run_id=rid, routers=[], why_none=f"a {run.get('mode')} run measures no quality")
    if "mom" not in kinds.values():
        return RoutingAnswer(run_id=rid, routers=[], why_none="this run holds no router (MoM) target; weigh a "
                             f"router run against it: `sr-bench report ROUTER_RUN --baseline {rid}`")
    if run["status"] in ("queued", "running"):
        p = run["progress"]
        return RoutingAnswer(run_id=rid, routers=[], why_none=f"the answer appears when the run has finished "
                             f"({run['status']}: {p['completed']} of {p['total']} cells completed)")
    if run["status"] not in COMPARABLE or (run["status"] == "failed" and report.get("partial")):
        return RoutingAnswer(run_id=rid, routers=[], why_none=partial_answer(report))
    why = "no finished run with a single model compares with this one (same cases and protocol)"
    if baseline:
        tries = [baseline]
    elif "single" in kinds.values():
        tries = [rid]
    else:              # the service's choice, as on the Dashboard: a run that can answer it (…/baselines)
        opts = client.get(f"/runs/{rid}/baselines")
        tries = [opts["chosen"]] if opts.get("chosen") else []
        left = [f"{o['name']} ({o['run_id']}): {o['left_out']}" for o in opts.get("options", []) if not o["usable"]]
        if left:
            why = "no run can answer it — " + "; ".join(left[:5]) + ("; …" if len(left) > 5 else "")

    for b in tries:
        try:
            cmp = client.post("/comparisons", {"baseline_run_id": b, "candidate_run_id": rid})
        except SrBenchError as exc:
            why = exc.message
            continue
        return RoutingAnswer(run_id=rid, routers=routing_facts(cmp))
    return RoutingAnswer(run_id=rid, routers=[], why_none=f"no baseline to weigh the router against: {why}")
