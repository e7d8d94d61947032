"""Terminal views of the commands' answers (output.py prints them only when stdout is a terminal).

Each takes the same JSON a pipe gets and prints a compact table or a few lines: ids whole, cells
wrapped, and for the catalog and `setup` one line per benchmark saying what is missing here.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console

from srbench.benchmarks import REGISTRY
from srbench.cli.output import generic_view, one_line, table
from srbench.schemas.wire import WireJSON
from srbench.service.wire.projections import epoch


def _when(v: Any) -> str:
    return "-" if v is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch(v)))


def _missing(items: list[str]) -> str:
    return "ready" if not items else "missing: " + "; ".join(one_line(i) for i in items)


def catalog_view(doc: WireJSON, con: Console) -> None:
    """The nine benchmarks, their weights and sizes, and what this host lacks for each (the same
    checks as `setup`, which also checks the store's judge and simulator pins)."""
    # deferred: srbench.service loads only for the commands that use it (the CLI starts light)
    from srbench.service.store.setup_checks import host_missing

    t = table("benchmark", "kind", "weight", "tasks", "on this host", ids=["benchmark"],
              short=["kind", "weight", "tasks"], title=f"{doc['version']}: {len(doc['benchmarks'])} benchmarks",
              caption="tasks = smoke/quick/standard profile sizes. " + (doc.get("weights_note") or ""))
    for b in doc["benchmarks"]:
        p = b.get("profiles") or {}
        here = host_missing(REGISTRY[b["id"]]) if b["id"] in REGISTRY else []
        plugin = b.get("plugin")
        name = b["id"] if not plugin else f"{b['id']} (plugin {plugin['package']} {plugin['version']})"
        t.add_row(name, b.get("kind", "-"), str(b.get("weight", "-")),
                  "/".join(str(p.get(k, "-")) for k in ("smoke", "quick", "standard")), _missing(here))
    con.print(t)
    for problem in doc.get("plugin_problems") or []:
        con.print(one_line(problem), markup=False)
    con.print("judge and simulator pins are per store: `sr-bench setup` checks them too; full reasons: "
              "`sr-bench setup --json`", markup=False)


def setup_view(res: WireJSON, con: Console) -> None:
    t = table("benchmark", "ready", "what is missing", ids=["benchmark"], short=["ready"],
              title="what each benchmark needs on the service host", caption=res.get("note"))
    for b in res["benchmarks"]:
        t.add_row(b["benchmark"], "yes" if b["ready"] else "no",
                  "-" if b["ready"] else "; ".join(one_line(m) for m in b["missing"]))
    con.print(t)
    if any(not b["ready"] for b in res["benchmarks"]):
        con.print("full reasons: `sr-bench setup --json`", markup=False)


def shown_status(r: WireJSON) -> str:
    """A run's own status: the wire answers upstream's `completed` for a run stopped early, `stopped_early` beside."""
    return "stopped_early" if r.get("stopped_early") else str(r["status"])


def runs_view(res: WireJSON, con: Console) -> None:
    wide = con.width >= 120
    cols = ("id", "status", "cells done", "targets", "name", *(("profile", "updated") if wide else ()))
    t = table(*cols, ids=["id"], short=["status", "cells done", "profile", "updated"],
              title="runs, newest first (any unique prefix of an id names the run)")
    for r in res["runs"]:
        p = r["progress"]
        bad = p["failed"] + p.get("ambiguous", 0)
        t.add_row(r["id"], shown_status(r), f"{p['completed']}/{p['total']}" + (f", {bad} failed" if bad else ""),
                  ", ".join(_targets_of(r)), _name_of(r),
                  *((r.get("profile") or "-", _when(r.get("updated_at"))) if wide else ()))
    con.print(t)
    if res.get("next_cursor"):
        con.print("more runs: --json lists this page as JSON", markup=False)


def _targets_of(r: WireJSON) -> list[str]:
    """A run's target ids (upstream's service names them only in its manifest)."""
    return list(r.get("targets") or [t.get("id", "?") for t in (r.get("manifest") or {}).get("targets", [])])


def _name_of(r: WireJSON) -> str:
    return str(r.get("name") or (r.get("manifest") or {}).get("name") or "-")


def run_view(r: WireJSON, con: Console) -> None:
    """One run: what it is, how far it got, and what to do next."""
    p = r["progress"]
    lines = [f"{r['id']}  {_name_of(r)}",
             f"status {shown_status(r)} ({r.get('mode', 'live')}, profile {r.get('profile')}); "
             f"{p['completed']} of {p['total']} cells completed, {p['failed']} failed, {p.get('ambiguous', 0)} "
             f"ambiguous, {p.get('pending', 0) + p.get('running', 0)} to go",
             f"targets: {', '.join(_targets_of(r))}",
             f"created {_when(r.get('created_at'))}, updated {_when(r.get('updated_at'))}"]
    budget = r.get("budget") or {}
    if budget:
        lines.append(f"spent {budget.get('spent_usd', 0):.5f} USD of the {budget.get('cap_usd')} USD cap")
    if r.get("error"):
        lines.append(f"error: {r['error']}")
    lines.append(f"next: `sr-bench report {r['id']}`; calls with `sr-bench show {r['id']} --calls`")
    for line in lines:
        con.print(line, markup=False)


def live_view(live: WireJSON, con: Console) -> None:
    """A running run's figures so far (GET /runs/{id}/live: kept up as cells finish, never a rebuilt report)."""
    p = live["progress"]
    con.print(f"{live['run_id']} {live['status']}: {p['completed']} of {p['total']} cells answered, {p['failed']} failed; "
              f"the figures hold {live['folded']} finished cells (kept up as cells finish; the full report comes at "
              "the end)", markup=False)
    t = table("target", "finished / planned", "correct / answered", "acc. answered", "acc. planned", "principal USD",
              "judge USD", ids=["target"], title="figures so far")

    def num(v: Any, f: str) -> str:
        return "unknown" if v is None else f.format(v)
    for x in live["targets"]:
        cost = num(x["cost_usd"], "{:.5f}") if x["cost_usd"] is not None else f"≥ {x['known_cost_usd']:.5f}"
        t.add_row(f"{x['target_id']} ({x['kind']})", f"{x['finished']} / {x['planned']}", f"{x['correct']} / {x['answered']}",
                  num(x["accuracy_answered"], "{:.3f}"), num(x["accuracy_planned"], "{:.3f}"), cost,
                  num(x["judge_cost_usd"], "{:.5f}") if live["judged"] else "—")
    con.print(t)


def targets_view(res: WireJSON, con: Console) -> None:
    """Ids, model names and URLs whole (a URL was cut mid-port, "http://127.0.0.1:800" / "0/v1", and a model
    name mid-word); the priced models where there is room (110 columns), else named in the caption."""
    wide = con.width >= 110
    cols = ("id", "kind", "model", "base_url", "key variable", *(("priced models",) if wide else ()))
    t = table(*cols, ids=["id", "model", "base_url"], short=["kind"],
              title="registered targets (keys are read from the service's environment, never stored)",
              caption=None if wide else "priced models: `sr-bench target list --json`")
    for x in res["targets"]:
        priced = ", ".join(sorted(x.get("prices") or {})) or "none"
        t.add_row(x["id"], x["kind"], x["model"], x["base_url"], x.get("api_key_env") or "-",
                  *((priced,) if wide else ()))
    con.print(t)


def datasets_view(res: WireJSON, con: Console) -> None:
    wide = con.width >= 140                 # the sha256 whole, or not at all (`dataset show ID` has it)
    t = table("id", "name", "profile", "split", "cases", *(("sha256",) if wide else ()), ids=["id", "sha256"],
              short=["profile", "split", "cases"], title="frozen datasets")
    for d in res["datasets"]:
        t.add_row(d.get("ref", d["id"]), d["name"], d["profile"], d["split"], str(d["case_count"]),
                  *((d["sha256"],) if wide else ()))
    con.print(t)
    if res["total"] > len(res["datasets"]):
        con.print(f"(first {len(res['datasets'])} of {res['total']})", markup=False)


def manifest_view(m: WireJSON, con: Console) -> None:
    if not isinstance(m, dict) or "case_count" not in m:
        generic_view(m, con)
        return
    for line in (f"dataset {m.get('ref', m['id'])}  {m['name']}",
                 f"{m['case_count']} cases of {', '.join(m.get('benchmarks') or [])}; profile {m.get('profile')}, "
                 f"seed {m.get('seed')}, split {m.get('split')}",
                 f"sha256 {m['sha256']}", f"file {m.get('path')}",
                 *(["frozen by upstream's vllm-sr and imported unchanged (its id is upstream's)"]
                   if m.get("upstream") else []),
                 "the manifest itself: add --json (or redirect: `… > manifest.json`)"):
        con.print(line, markup=False)


def plan_view(res: WireJSON, con: Console) -> None:
    if res["output"] is None:
        con.print(f"plan frozen (not written: give --output to keep it): {res['total']} cells, sha256 "
                  f"{res['plan_sha256']}, {res['model_requests']} model requests so far", markup=False)
        return
    con.print(f"plan frozen in {res['output']}: {res['total']} cells, sha256 {res['plan_sha256']}, "
              f"{res['model_requests']} model requests so far; next: `sr-bench run --manifest {res['output']}`",
              markup=False)


def run_result_view(res: WireJSON, con: Console) -> None:
    p = res.get("progress")
    done = "" if not p else f" ({p['completed']} of {p['total']} cells completed, {p['failed']} failed)"
    con.print(f"run {res['run_id']}: {res['status']}{done}", markup=False)
    if res.get("error"):
        con.print(f"error: {res['error']}", markup=False)
    con.print(f"next: `sr-bench report {res['run_id']}`", markup=False)


def report_targets_table(rep: WireJSON) -> Any:
    """Per target, compactly: correct, micro and macro accuracy, principal cost, latency (tokens: --json)."""
    t = table("target", "correct", "micro acc. [95% Wilson]", "macro", "cost USD", "p50/p95 s", ids=["target"],
              short=["correct", "macro", "p50/p95 s"],
              title=f"{rep['run_id']} — {shown_status(rep)}" + ("" if rep["complete"] else " (not complete)"),
              caption="micro = correct / all planned cells; macro = weighted mean of per-benchmark accuracies; "
                      "cost = principal (model calls) at the frozen prices")

    def f(v: Any, fmt: str) -> str:
        return "unknown" if v is None else fmt.format(v)
    for s in rep["summary"]["targets"]:
        ci = s.get("accuracy_ci95")
        t.add_row(f"{s['target_id']} ({s['kind']})", f"{s['correct']}/{s['total']}",
                  f"{f(s['accuracy'], '{:.2f}')}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""),
                  f(s.get("macro_accuracy"), "{:.3f}"), _cost(s),
                  f"{f(s.get('latency_p50_s'), '{:.2f}')}/{f(s.get('latency_p95_s'), '{:.2f}')}")
    if any(_cost(s).startswith("≥") for s in rep["summary"]["targets"]):
        t.caption = f"{t.caption}; ≥ = the known part (a call's cost is unknown, e.g. cancelled in flight)"
    return t


def _cost(s: WireJSON) -> str:
    """A target's principal cost; where some call's cost is unknown (a call cancelled in flight, an
    unpriced model), at least what is known ("≥0.00013"), never a bare "unknown" hiding known spend."""
    if s.get("cost_usd") is not None:
        return f"{s['cost_usd']:.5f}"
    known = s.get("known_cost_usd") or 0.0
    return f"≥{known:.5f}" if known > 0 else "unknown"


def _page_note(res: WireJSON, con: Console) -> None:
    shown = len(res.get("calls") or res.get("results") or [])
    more = f"; next page: --after {res['next_cursor']}" if res.get("next_cursor") is not None else ""
    con.print(f"{shown} of {res.get('total')} shown{more}; every field with --json (or --call-id ID for a call)",
              markup=False)


def calls_view(res: WireJSON, con: Console) -> None:
    wide = con.width >= 110                   # role and served model when there is room for them
    timed = con.width >= 90                   # call and case ids whole first (a case id was cut mid-id)
    t = table("id", "case", "target", *(("role", "model") if wide else ()), "status", *(("s",) if timed else ()),
              ids=["id", "case"], short=["s"], title="calls")
    for c in res["calls"]:
        extra = (c.get("role") or "-", c.get("response_model") or c.get("selected_model") or "-") if wide else ()
        t.add_row(c["id"], c.get("case_id") or "-", c.get("target_id") or "-", *extra, str(c.get("status")),
                  *(("-" if c.get("latency_s") is None else f"{c['latency_s']:.2f}",) if timed else ()))
    con.print(t)
    _page_note(res, con)


def results_view(res: WireJSON, con: Console) -> None:
    t = table("case", "target", "grade", "cost USD", "s", ids=["case"], short=["cost USD", "s"], title="results")
    for r in res["results"]:
        t.add_row(r.get("case_id") or "-", r.get("target_id") or "-", str(r.get("grade_status") or r.get("status")),
                  "unknown" if r.get("cost_usd") is None else f"{r['cost_usd']:.5f}",
                  "-" if r.get("latency_s") is None else f"{r['latency_s']:.2f}")
    con.print(t)
    _page_note(res, con)
