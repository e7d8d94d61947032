""""Does routing pay?" as facts: the one function `report`, `compare` and the demo print from.

`routing_facts` reads the service's paired comparison (and, for latency, the two runs' reports) — the
same fields the Dashboard's panel reads (dashboard/static/headline.js: `delta`, `interval.ci`,
`claim`, `claim_rule`, `evidence.label`, `savings.{principal,total,cache_neutral}`, `routing.model_mix`,
`benchmarks[]`; latency from the report rows' `latency_p50_s`/`latency_p95_s`). `routing_answer` picks
the comparison as the panel does: the run's routers against the strongest single model of the same
run, else of the latest finished comparable run (or the one named).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from srbench.cli.output import table

SCOPES = ("principal", "total", "cache_neutral")
SCOPE_TEXT = {"principal": "principal (model calls)", "total": "total (with judge/simulator calls)",
              "cache_neutral": "cache-neutral (every input token uncached)"}
CLAIM_TEXT = {   # the Dashboard's words (headline.js CLAIM_TEXT)
    "improvement": "better than the strongest single model: the whole interval is above zero",
    "regression": "worse than the strongest single model: the whole interval is below zero",
    "inconclusive": "not settled: the interval spans zero, so this sample cannot tell the router from the baseline",
    "blocked": "no claim: the router's pinned config_hash was not confirmed by evidence",
}
COMPARABLE = ("completed", "failed", "stopped_early")


class Saving(BaseModel):
    scope: Literal["principal", "total", "cache_neutral"]
    candidate_usd: float | None
    baseline_usd: float | None
    saving_pct: float | None
    reason: str | None


class BenchmarkRow(BaseModel):
    benchmark: str
    n: int
    candidate_accuracy: float | None
    candidate_ci: list[float] | None
    baseline_accuracy: float | None
    baseline_ci: list[float] | None
    delta: float
    delta_ci: list[float] | None
    wins: int
    losses: int
    ties: int


class RouterFacts(BaseModel):
    router: str
    baseline: str
    baseline_run: str
    same_run: bool
    n: int
    delta: float
    ci: list[float] | None
    rule: str
    selection: str | None = None       # how the claim holds across choosing the baseline (issue 28)
    claim: str
    claim_text: str
    evidence: str
    formal: bool
    micro_delta: float | None
    savings: list[Saving]
    model_mix: dict[str, int]
    unattributed_calls: int
    latency_s: dict[str, tuple[float | None, float | None]]
    benchmarks: list[BenchmarkRow]
    config_note: str | None


class RoutingAnswer(BaseModel):
    run_id: str
    routers: list[RouterFacts]
    why_none: str | None = None


def _latency(report: dict[str, Any] | None, tid: str) -> tuple[float | None, float | None] | None:
    for t in ((report or {}).get("summary") or {}).get("targets", []):
        if t["target_id"] == tid:
            return t.get("latency_p50_s"), t.get("latency_p95_s")
    return None


def routing_facts(cmp: dict[str, Any], report: dict[str, Any] | None = None,
                  base_report: dict[str, Any] | None = None) -> list[RouterFacts]:
    """Per router (every candidate when none is a router): the headline facts and per-benchmark rows."""
    base = cmp["baseline"]
    ev = cmp.get("evidence") or {}
    out = []
    for c in [c for c in cmp["candidates"] if c["kind"] == "mom"] or cmp["candidates"]:
        d = c.get("detectability")
        text = CLAIM_TEXT.get(c["claim"], c["claim"])
        if c["claim"] == "inconclusive" and d:
            text += f" (its half-width is ±{d['half_width']:.3f})"
        ni = c.get("non_inferiority") or {}
        if ni.get("non_inferior"):
            text += f"; non-inferior (margin {ni['margin']})"
        routing = c.get("routing") or {}
        lat = {k: v for k, v in ((c["target_id"], _latency(report, c["target_id"])),
                                 (base["target_id"], _latency(base_report or report, base["target_id"]))) if v}
        hev = c.get("config_hash_evidence") or {}
        sel = c.get("selection") or {}
        out.append(RouterFacts(
            router=c["target_id"], baseline=base["target_id"], baseline_run=cmp["baseline_run"]["run_id"],
            same_run=cmp["baseline_run"]["run_id"] == cmp["candidate_run"]["run_id"], n=c["n"], delta=c["delta"],
            ci=(c.get("interval") or {}).get("ci"), rule=c.get("claim_rule") or cmp.get("claim_rule") or "hoeffding",
            selection=f"adjusted for choosing the strongest of K = {sel['k']} singles" if sel.get("adjusted") else None,
            claim=c["claim"], claim_text=text, evidence=ev.get("label") or "unknown", formal=bool(ev.get("formal")),
            micro_delta=c.get("micro_delta"),
            savings=[Saving(scope=k, **{f: c["savings"][k].get(f) for f in ("candidate_usd", "baseline_usd",
                                                                            "saving_pct", "reason")}) for k in SCOPES],
            model_mix=routing.get("model_mix") or {}, unattributed_calls=routing.get("unattributed_calls") or 0,
            latency_s=lat, config_note=None if not hev or hev.get("confirmed") else
            f"config_hash not confirmed: {hev.get('reason')}",
            benchmarks=[BenchmarkRow(
                benchmark=b["benchmark"], n=b["n"], candidate_accuracy=b.get("candidate_accuracy"),
                candidate_ci=b.get("candidate_accuracy_ci95"), baseline_accuracy=b.get("baseline_accuracy"),
                baseline_ci=b.get("baseline_accuracy_ci95"), delta=b["delta"],
                delta_ci=(b.get("delta_interval") or {}).get("ci"), wins=b["wins"], losses=b["losses"],
                ties=b["ties"]) for b in c.get("benchmarks", [])]))
    return out


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
             f"  evidence: {f.evidence}",
             "  cost saving: " + "; ".join(saving(s) for s in f.savings) + ".",
             f"  model mix: {mix}."]
    if f.latency_s:
        lines.append("  latency p50/p95: " + "; ".join(f"{t} {_f(a, '{:.2f}')}/{_f(b, '{:.2f}')} s"
                                                         for t, (a, b) in f.latency_s.items()) + ".")
    if f.config_note:
        lines.append(f"  {f.config_note}")
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


def partial_answer(report: dict[str, Any]) -> str:
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


def routing_answer(client: Any, run: dict[str, Any], report: dict[str, Any], baseline: str | None = None
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
    if baseline:
        tries = [baseline]
    elif "single" in kinds.values():
        tries = [rid]
    else:
        tries = [r["id"] for r in client.get("/runs")["runs"] if r["id"] != rid and r.get("mode") == "live"
                 and r["status"] in COMPARABLE and r.get("profile") == run.get("profile")][:6]
    why = "no finished run with a single model compares with this one (same cases and protocol)"
    from srbench.errors import SrBenchError

    for b in tries:
        try:
            cmp = client.post("/comparisons", {"baseline_run_id": b, "candidate_run_id": rid})
        except SrBenchError as exc:
            why = exc.message
            continue
        base_report = report if b == rid else client.get(f"/runs/{b}/report")
        return RoutingAnswer(run_id=rid, routers=routing_facts(cmp, report, base_report))
    return RoutingAnswer(run_id=rid, routers=[], why_none=f"no baseline to weigh the router against: {why}")
