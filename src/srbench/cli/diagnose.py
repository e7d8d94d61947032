"""The "diagnose" section of `sr-bench compare --diagnose` (issue 43): the routing diagnosis the service's
GET /runs/{candidate}/diagnose answers, printed for a person and written as JSON or CSV (one row per router and
case: the outcome matrix). Figures are defined in docs/statistics.md ("Routing diagnostics")."""

from __future__ import annotations

import csv
import io

from rich.console import Console
from rich.table import Table

from srbench.cli.runs import write_json, write_text
from srbench.schemas.wire import WireJSON

SHOWN_LOSSES = 20


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f} %"


def _q(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _usd(v: float | None) -> str:
    if v is None:
        return "unknown"
    r = round(v, 4) + 0.0          # no "-$0.0000" for a difference smaller than the shown digits
    return f"{'-' if r < 0 else ''}${abs(r):.4f}"


def _ci(ci: list[float] | None, scale: float = 1.0, unit: str = "") -> str:
    digits = 1 if unit else 3
    return "" if not ci else f" [{ci[0] * scale:.{digits}f}{unit}, {ci[1] * scale:.{digits}f}{unit}]"


def _s(v: float | None) -> str:
    return "n/a" if v is None else f"{v:+.3f} s"


def diagnose_lines(d: WireJSON) -> list[str]:
    """The headline facts of a diagnosis, one router after another."""
    o = d["oracle"]
    q = o["quality"]
    out = [f"diagnose: the routers of run {d['candidate_run']} against the {len(d['singles'])} singles of run "
           f"{d['baseline_run']} on {d['cases']} cases (no model called)",
           f"  oracle ceiling {_q(q['estimate'])}{_ci(q['ci'])} ({o['cases_no_single_correct']} cases no single gets); "
           f"cheapest-correct oracle: the same accuracy for {_usd(o['cheapest_cost_usd'])}; best single "
           f"{o['best_single']} {_q(o['best_single_quality'])} for {_usd(o['best_single_cost_usd'])}"]
    for r in d["routers"]:
        h, op = r["headroom"], r["optimality"]
        captured = _pct(h["captured_pct"]) + (_ci(h["captured_ci_pct"], unit=" %") if h["captured_ci_pct"] else "")
        out.append(f"  {r['target_id']}: {_q(r['quality'])} for {_usd(r['cost_usd'])}; captures {captured} of the "
                   f"available headroom (+{_q(h['available']['estimate'])}{_ci(h['available']['ci'])})"
                   + (f" — {h['reason']}" if h["reason"] else ""))
        out.append(f"    gap to the oracle {_q(h['gap_to_oracle']['estimate'])}{_ci(h['gap_to_oracle']['ci'])}")
        away = ", ".join(f"{m} ×{n}" for m, n in op["elsewhere_models"].items()) or "none"
        rate = None if op["selection_rate"] is None else 100 * op["selection_rate"]
        out.append(f"    optimality (RouterArena) on {op['cases_in_pool']} in-pool cases (elsewhere: {away}): "
                   f"optimal selection {_pct(rate)}{_ci(op['selection_ci95'], 100, ' %')}, optimal cost "
                   f"{_pct(op['cost_ratio_pct'])}, optimal accuracy {_pct(op['accuracy_ratio_pct'])}")
        t, lat = r["ttft"], r["latency"]
        out.append(f"    routing overhead vs the same model direct: TTFT p50 {_s(t['p50_s'])} p95 {_s(t['p95_s'])} "
                   f"({t['pairs']} pairs); latency p50 {_s(lat['p50_s'])} p95 {_s(lat['p95_s'])} ({lat['pairs']} pairs)")
        out.append(f"    losses: {len(r['losses'])} cases the served model failed and a cheaper or equally priced "
                   f"single got right" + (f" ({r['losses_cost_unknown']} more with a cost unknown)"
                                          if r["losses_cost_unknown"] else ""))
    return out


def _regret_table(r: WireJSON) -> Table:
    t = Table(title=f"where {r['target_id']} loses: regret per benchmark and subject")
    for col in ("benchmark", "subject", "n", "router", "oracle", "points", "dollars"):
        t.add_column(col)
    for g in r["regret"]:
        t.add_row(g["benchmark"], g["stratum"] or "(all)", str(g["n"]), _q(g["router_accuracy"]),
                  _q(g["oracle_accuracy"]), f"{g['quality_points']:.1f}", _usd(g["dollars"]))
    return t


def _confusion_table(r: WireJSON) -> Table:
    cols = sorted({c["cheapest_correct"] for c in r["confusion"]})
    rows = sorted({c["served"] for c in r["confusion"]})
    counts = {(c["served"], c["cheapest_correct"]): c["cases"] for c in r["confusion"]}
    t = Table(title=f"{r['target_id']}: model served (rows) × cheapest correct model (columns)")
    t.add_column("served")
    for c in cols:
        t.add_column(c)
    for s in rows:
        t.add_row(s, *(str(counts.get((s, c), 0)) for c in cols))
    return t


def _loss_table(r: WireJSON) -> Table:
    t = Table(title=f"{r['target_id']}: served model failed, a cheaper or equally priced single succeeded")
    for col in ("case", "benchmark", "served", "decision", "router answer (run / cell)", "single answer (run / cell)"):
        t.add_column(col)
    for x in r["losses"][:SHOWN_LOSSES]:
        ra, sa = x["router"], x["single"]
        t.add_row(x["case_id"], x["benchmark"], f"{ra['model']} {_usd(ra['cost_usd'])}", x["decision"] or "-",
                  f"{ra['run_id']} / {ra['cell_id']}", f"{sa['run_id']} / {sa['cell_id']} ({sa['model']} "
                  f"{_usd(sa['cost_usd'])})")
    more = len(r["losses"]) - SHOWN_LOSSES
    t.caption = ("each answer: sr-bench show RUN --call-id CELL" + (f"; {more} more in the JSON" if more > 0 else ""))
    return t


def diagnose_view(d: WireJSON, console: Console) -> None:
    """The diagnose section on a terminal."""
    for line in diagnose_lines(d):
        console.print(line, markup=False, highlight=False)
    for r in d["routers"]:
        console.print(_regret_table(r))
        console.print(_confusion_table(r))
        if r["losses"]:
            console.print(_loss_table(r))


def case_rows(d: WireJSON) -> list[WireJSON]:
    """The outcome matrix as flat rows (one per router and case), for CSV."""
    out = []
    for r in d["routers"]:
        lost = {x["case_id"]: x["single"]["target_id"] for x in r["losses"]}
        for c in r["cases"]:
            row: WireJSON = {
                "router": r["target_id"], "case_id": c["case_id"], "benchmark": c["benchmark"],
                "stratum": c["stratum"], "served_model": c["served_model"], "served_single": c["served_single"],
                "router_correct": c["router_correct"], "router_cost_usd": c["router_cost_usd"],
                "oracle_correct": c["oracle_correct"], "cheapest_correct": c["cheapest_correct"],
                "optimal": c["optimal"], "loss_single": lost.get(c["case_id"])}
            for s in c["singles"]:
                row[f"{s['target_id']}_correct"] = s["correct"]
                row[f"{s['target_id']}_cost_usd"] = s["cost_usd"]
            out.append(row)
    return out


def write_diagnosis(path: str, d: WireJSON) -> None:
    """The diagnosis at `path`: the outcome matrix as CSV for a .csv name, else the whole document as JSON."""
    if not path.lower().endswith(".csv"):
        write_json(path, d)
        return
    rows = case_rows(d)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["router", "case_id"], lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    write_text(path, buf.getvalue())
