"""`plan`, `run`, `runs`, `show`, `report`, `cancel`: freeze a manifest, run it, read it back."""

from __future__ import annotations

import contextlib
import json
import shlex
import stat
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from srbench import TERMINAL_STATUSES as TERMINAL
from srbench.cli import views
from srbench.cli.answer import benchmark_rows_table, fact_lines, routing_answer
from srbench.cli.common import Ctx, emit
from srbench.cli.env import check_targets, plan_targets, warn_targets
from srbench.cli.manifests import read_manifest
from srbench.cli.output import SafeConsole, WholeTable, human, table
from srbench.cli.plan_checks import money_warnings, plan_warnings
from srbench.errors import InvalidInput, NotFound
from srbench.schemas.wire import WireJSON


def without_volatile(value: WireJSON) -> WireJSON:
    """A derived document as written to a file: without whether this read was a cache hit, and why."""
    return {k: v for k, v in value.items() if k not in ("cache_hit", "explain")}


def write_json(path: str, value: Any) -> None:
    """`value` as JSON at `path`, whole or not at all (a temporary file beside it, then renamed)."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def check_output(path: Path) -> None:
    """An existing `path` that is not a regular file (a device such as /dev/full, a FIFO, a socket, /dev/stdout)
    is refused: the rename that writes a file whole would have replaced it with a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return                          # absent (or unreadable): the write itself says what is wrong
    if not stat.S_ISREG(mode):
        raise InvalidInput(f"{path} exists and is not a regular file (a device, FIFO or socket), which writing it "
                           "whole would replace: give the path of a file (without --output the answer is printed)")


def write_text(path: str, text: str) -> None:
    """`text` at `path`, whole or not at all (a temporary file beside it, then renamed)."""
    p = Path(path)
    check_output(p)
    tmp = p.with_name(p.name + ".tmp")
    try:
        tmp.write_text(text)
        tmp.replace(p)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc} (give --output a path in a writable "
                           "directory)") from None


@click.command()
@click.option("--manifest", required=True, type=click.Path(dir_okay=False), help="candidate.yaml or .json")
@click.option("--output", default=None, type=click.Path(dir_okay=False),
              help="Where to write the frozen plan (without it: printed whole in the JSON answer).")
@click.pass_obj
def plan(obj: Ctx, manifest: str, output: str | None) -> None:
    """Validate and freeze a manifest; no model is called."""
    raw = read_manifest(obj, manifest)
    if isinstance(raw, dict) and raw.get("kind") == "plan":
        raise InvalidInput(f"--manifest {manifest} is a frozen plan already (plan_sha256 {raw.get('plan_sha256')}): "
                           f"run it (`sr-bench run --manifest {shlex.quote(manifest)}`), or plan the manifest it was "
                           "frozen from")
    res = obj.client.post("/plans", {"manifest": raw})
    if output is not None:
        write_json(output, res["manifest"])
    plan_story(res)
    warn_targets(obj, plan_targets(res["manifest"]), probe=True)     # keys the service lacks; one probe per target
    emit({"plan_sha256": res["plan_sha256"], "total": res["total"], "output": output, "model_requests": 0,
          "planning": res.get("planning"), **({"manifest": res["manifest"]} if output is None else {})},
         views.plan_view)


def plan_story(res: WireJSON) -> None:
    """What `plan` says on stderr about a frozen plan (`POST /plans`'s answer): the targets and their request
    parameters, notices, the declared margin, sample-size planning, the estimate, then its warnings."""
    frozen = res["manifest"]
    table = WholeTable("target", "kind", "model", "effective request parameters")
    params = {p["id"]: p["effective_params"] for p in frozen.get("target_profiles", [])}
    for t in frozen["targets"]:
        table.add_row(t["id"], t["kind"], t["model"], json.dumps(params.get(t["id"]), sort_keys=True))
    console = SafeConsole(stderr=True)
    console.print(table)
    for n in frozen.get("notices", []):
        console.print(f"note: {n}")
    stats = frozen.get("statistics") or {}
    console.print("declared in advance (REP-7): non-inferiority margin "
                  f"{stats.get('margin') if stats.get('margin') is not None else 'none (no parity can be claimed)'}; "
                  f"primary benchmarks {', '.join(stats.get('primary_benchmarks') or []) or 'all'}")
    if res.get("planning"):
        for t in planning_tables(res["planning"]):
            console.print(t)
    est = res.get("estimate")
    if est:
        up = est["upper_cost_usd"]["total"]
        console.print(f"requests planned: {est['requests']['subject']} subject + {est['requests']['judge']} judge = "
                      f"{est['requests']['total']}; upper cost estimate "
                      f"{'unknown' if up is None else f'{up:.4f} USD'} ({est['note']})", markup=False)
        for n in est["notes"]:
            console.print(f"note: {n}", markup=False)

    for w in plan_warnings(frozen, est):    # before any money is spent; the plan is frozen all the same
        click.echo(f"warning: {w}", err=True)


def _pts(v: Any) -> str:
    return "not reachable" if v is None else f"{100 * v:.1f} pts"


def _needed(n: WireJSON | None) -> str:
    if n is None:
        return "more than 10⁴× the plan"
    return f"{n['total']} ({', '.join(f'{b} {k}' for b, k in n['per_benchmark'].items())})"


def planning_tables(p: WireJSON) -> list[Table]:
    """Sample-size planning as `plan` prints it: the declared rule first, the other beside it."""
    a = p["assumptions"]
    t = WholeTable(title=f"planning at {100 * a['power']:.0f}% power, tie rate {100 * a['tie_rate']:.0f}% "
                    f"(assumed; the claim rule is {p['claim_rule']}"
                    + (f", against the strongest of K = {p['singles']} single(s)" if p.get("singles") else "") + ")")
    for col in ("rule", "radius at Δ=0", "smallest detectable effect", f"power at +{100 * a['effect']:.1f} pts",
                f"cases for +{100 * a['effect']:.1f} pts", "non-inferiority: power / cases"):
        t.add_column(col)
    for key in ("declared", "other"):
        r = p[key]
        ni = "no margin declared" if r["margin"] is None else (
            f"margin {r['margin']}: {100 * (r['power_non_inferiority'] or 0):.0f}% / {_needed(r['needed_for_margin'])}")
        t.add_row(f"{r['rule']}{' (makes claims)' if key == 'declared' else ''}", f"±{r['radius_at_zero']:.4f}",
                  _pts(r["detectable_effect"]),
                  "n/a" if r["power_at_effect"] is None else f"{100 * r['power_at_effect']:.0f}%",
                  _needed(r["needed_for_effect"]), ni)
    out: list[Table] = [t]
    sized = _sized_table(p)
    if sized is not None:
        out.append(sized)
    ties = WholeTable(title="smallest detectable effect by tie rate (share of cases where both agree)")
    rules = [p["claim_rule"], p["other"]["rule"]]
    for col in ("tie rate", *rules):
        ties.add_column(col)
    for row in p["detectable_by_tie_rate"]:
        ties.add_row(f"{100 * row['tie_rate']:.0f}%", *(_pts(row[r]) for r in rules))
    return [*out, ties]


def _sized_table(p: WireJSON) -> Table | None:
    """Per-benchmark sizes (stats/sizing.py) of each rule, for the effect and the margin; None when absent."""
    rows = [(p[key], what, p[key].get(f"sized_for_{what}")) for key in ("declared", "other")
            for what in ("effect", "margin")]
    rows = [r for r in rows if r[2] is not None]
    if not rows:
        return None
    t = WholeTable(title=f"per-benchmark sizes ({rows[0][2]['basis']}; each weighs its benchmark, none above the "
                         "cases its pinned source holds: * = all of them) instead of one common scale")
    for col in ("rule", "for", "cases", "power", "per benchmark"):
        t.add_column(col)
    for r, what, z in rows:
        goal = f"+{100 * r['effect']:.1f} pts" if what == "effect" else f"margin {r['margin']}"
        per = ", ".join(f"{b} {n}{'*' if b in z['at_available'] else ''}" for b, n in z["per_benchmark"].items())
        t.add_row(r["rule"], goal, str(z["total"]) if z["reached"] else "not reachable with these sources",
                  f"{100 * z['power']:.0f}%", per)
    return t


def _f(v: Any, fmt: str = "{:.3f}") -> str:
    return "unknown" if v is None else fmt.format(v)


def targets_table(report: WireJSON, width: int) -> Table:
    """The per-target summary that fits `width`: with the token buckets and TTFT where there is room
    (120 columns), else the compact one `report` shows (at 80 columns the wide one split numbers and
    words mid-way: "correc/t", "0.0005/4")."""
    return summary_table(report) if width >= 120 else views.report_targets_table(report)


def summary_table(report: WireJSON) -> Table:
    """One row per target: micro and macro accuracy, cost, the four token buckets, latency."""
    f = _f
    title = f"{report['run_id']} — {views.shown_status(report)}" + ("" if report["complete"] else " (not complete)")
    t = Table(title=title, caption="micro = correct / all planned cells pooled; macro = weighted mean of the "
                                   "per-benchmark accuracies (REP-4 weights)")
    t.add_column("target", no_wrap=True, overflow="fold")       # ids whole; the other cells wrap
    for col in ("correct", "micro accuracy [95% Wilson]", "macro", "cost USD",
                "tokens in/cached/write/out", "p50/p95 s", "ttft p50"):
        t.add_column(col, overflow="fold")
    for s in report["summary"]["targets"]:
        ci = s["accuracy_ci95"]
        tok = s["tokens"]
        t.add_row(f"{s['target_id']} ({s['kind']})", f"{s['correct']}/{s['total']}",
                  f"{f(s['accuracy'], '{:.2f}')} [{f(ci[0], '{:.2f}') if ci else '?'}, {f(ci[1], '{:.2f}') if ci else '?'}]",
                  f(s.get("macro_accuracy"), "{:.3f}"), f(s["cost_usd"], "{:.5f}"),
                  "unknown" if tok is None else f"{tok['input']}/{tok['cached_input']}/{tok['cache_write']}/{tok['output']}",
                  f"{f(s['latency_p50_s'], '{:.2f}')}/{f(s['latency_p95_s'], '{:.2f}')}", f(s["ttft_p50_s"], "{:.3f}"))
    return t


def score_lines(report: WireJSON) -> list[str]:
    """Per target: the full sr-bench score with its interval, or why there is none (REP-4, CAT-2)."""
    out = []
    for s in report["summary"]["targets"]:
        ci = s.get("sr_bench_score_ci95")
        if s.get("sr_bench_score") is not None and ci:
            out.append(f"{s['target_id']}: sr-bench score {s['sr_bench_score']:.3f} [95% {ci[0]:.3f}, {ci[1]:.3f}] "
                       f"— {s.get('score_scope')}")
        else:
            out.append(f"{s['target_id']}: {s.get('score_scope')}")
    return out


def benchmark_table(report: WireJSON) -> Table:
    """One row per benchmark and target: sr-bench's score beside the published rule's, and how many
    answers the two grade differently; each benchmark's published rule and note once, below."""
    t = table("benchmark", "target", "sr-bench acc. [95% CI]", "published", "graded differently",
              ids=["benchmark", "target"], short=["graded differently"],
              title="per benchmark: sr-bench's rule beside the published rule (same answers, no model call)")
    notes: dict[str, str] = {}            # per benchmark: its published rule, and why there is no figure or how it relates
    for b in report.get("benchmarks", []):
        if "accuracy" not in b:           # preview / replay rows carry no measured score
            continue
        ci, pub = b.get("accuracy_ci95"), b.get("published") or {}
        note = pub.get("reason") if pub.get("rule") is None else pub.get("note")
        notes.setdefault(b["benchmark"], f"{pub.get('rule') or 'published rule unavailable'}"
                         + (f" — {note}" if note else ""))
        acc = f"{_f(b['accuracy'], '{:.2f}')} [{_f(ci[0], '{:.2f}')}, {_f(ci[1], '{:.2f}')}]" if ci else "unknown"
        differ = pub.get("graded_differently")
        metric = pub.get("metric", "accuracy")
        t.add_row(b["benchmark"], b["target_id"], acc,
                  "n/a" if pub.get("score") is None else f"{metric} {_f(pub['score'])}",
                  "-" if differ is None else f"{differ} of {pub.get('n')}")
    t.caption = "\n".join(["published = the benchmark's upstream rule on the same answers (a diagnostic); "
                           "SimpleQA's published headline is F1. Published rules:",
                           *(f"{k}: {v}" for k, v in sorted(notes.items()))])
    return t


def wait_for(obj: Ctx, run_id: str) -> WireJSON:
    # deferred: rich's progress bars load only when a run is followed live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = SafeConsole(stderr=True)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task(run_id, total=None)
            while True:
                run = obj.client.get(f"/runs/{run_id}")
                p = run["progress"]         # upstream's service counts {total, completed, failed, running}
                done = p["completed"] + p["failed"] + p.get("cancelled", 0) + p.get("ambiguous", 0)
                bar.update(task, total=p["total"], completed=done,
                           description=f"{run_id} {run['status']} (failed {p['failed']})")
                if run["status"] in TERMINAL:
                    return run
                time.sleep(0.3)
    except KeyboardInterrupt:
        console.print(f"stopped waiting; the run goes on. Follow it with `sr-bench show {run_id}`, "
                      f"stop it with `sr-bench cancel {run_id}`.")
        raise SystemExit(130) from None


@click.command()
@click.option("--manifest", required=True, type=click.Path(dir_okay=False),
              help="A frozen plan (from `plan`); a manifest not frozen yet is planned first, with plan's warnings.")
@click.option("--detach", is_flag=True, help="Return at once with the run id.")
@click.option("--idempotency-key", default=None, help="Re-submitting with the same key binds the same run.")
@click.pass_obj
def run(obj: Ctx, manifest: str, detach: bool, idempotency_key: str | None) -> None:
    """Start a run of a frozen plan. Ctrl-C stops only the waiting; `cancel` stops the work.

    A manifest `plan` has not frozen is frozen now: plan's warnings are printed before anything is sent,
    and a warning about money (the cost cap, an unknown cost) refuses the run, pointing at `plan`."""
    obj.refuse_detach(detach)
    data = preflight(obj, manifest, read_manifest(obj, manifest))
    r = obj.client.post("/runs", {"manifest": data, "idempotency_key": idempotency_key})
    created = r.get("created")          # upstream's service answers the bare run: whether it is new is not said
    if created is False:
        click.echo(f"idempotency key already bound to {r['id']}: no new request sent", err=True)
    if detach:
        emit({"run_id": r["id"], "status": views.shown_status(r), "created": created}, views.run_result_view)
        return
    final = wait_for(obj, r["id"])
    rep = obj.client.get(f"/runs/{r['id']}/report")
    if "report_version" not in rep:      # upstream's service: its own report, summed up in one line per target
        for line in upstream_report_lines(rep):
            click.echo(line, err=True)
        _run_result(final)
        return
    err = SafeConsole(stderr=True)
    err.print(targets_table(rep, err.width))
    SafeConsole(stderr=True).print(benchmark_table(rep))
    for line in score_lines(rep):
        SafeConsole(stderr=True).print(line)
    if partial_line(rep):
        SafeConsole(stderr=True).print(partial_line(rep), markup=False)
    if rep.get("early_stop"):
        SafeConsole(stderr=True).print(stop_line(rep["early_stop"]))
    print_failures(obj, final)
    _run_result(final)


def _run_result(final: WireJSON) -> None:
    emit({"run_id": final["id"], "status": views.shown_status(final), "error": final.get("error"),
          "progress": final["progress"]}, views.run_result_view)
    if final["status"] != "completed":
        raise SystemExit(1)


def upstream_report_lines(rep: WireJSON) -> list[str]:
    """Per target of upstream's report: correct of planned, accuracy, macro accuracy and spend."""
    out = []
    for t in (rep.get("summary") or {}).get("targets") or []:
        acc, macro, spend = t.get("accuracy"), t.get("macro_accuracy"), t.get("total_spend_usd")
        out.append(f"{t.get('id')}: {t.get('correct')} of {t.get('total')} correct, accuracy {_f(acc, '{:.3f}')}, "
                   f"macro {_f(macro, '{:.3f}')}, spend {_f(spend, '{:.4f}')} USD")
    return out


def preflight(obj: Ctx, path: str, data: Any) -> Any:
    """What `run` checks before it sends anything: a manifest not frozen yet is frozen now with plan's
    warnings (refused on one about money); then the keys the service lacks (refused, one line per variable)
    and one probe per target (warnings). Returns the manifest to submit."""
    if isinstance(data, dict) and data.get("kind") != "plan":
        res = obj.client.post("/plans", {"manifest": data})
        if not isinstance(res.get("manifest"), dict):      # upstream's service: it checks the manifest itself
            return data
        data, est = res["manifest"], res.get("estimate")
        money = money_warnings(data, est)
        for w in plan_warnings(data, est):
            if w not in money:
                click.echo(f"warning: {w}", err=True)
        if money:
            for w in money[:-1]:
                click.echo(f"error: {w}", err=True)
            raise InvalidInput(f"{money[-1]} — {path} is not a frozen plan and this is about money, so nothing was "
                               f"sent: review it with `sr-bench plan --manifest {path} --output frozen.json`, then "
                               "`sr-bench run --manifest frozen.json`")
    if isinstance(data, dict):
        keys, problems = check_targets(obj, plan_targets(data), probe=True)
        for line in problems:
            click.echo(f"warning: {line}", err=True)
        if keys:
            for line in keys[:-1]:
                click.echo(f"error: {line}", err=True)
            raise InvalidInput(keys[-1], code="preflight_failed")
    return data


def print_failures(obj: Ctx, final: WireJSON) -> None:
    """A run with failed or ambiguous cells: why, per target, on stderr (an upstream service has no such page)."""
    p = final.get("progress") or {}
    if not (p.get("failed") or p.get("ambiguous")):
        return
    try:
        failures = obj.client.get(f"/runs/{final['id']}/failures")
    except NotFound:
        return
    for line in failure_lines(failures):
        click.echo(line, err=True)


def failure_lines(failures: WireJSON) -> list[str]:
    """Why cells failed, per target: each class with its count, its first message and what to check."""
    out = []
    for t in failures["targets"]:
        total = sum(c["cells"] for c in t["classes"])
        out.append(f"target {t['target_id']}: {total} cell(s) failed"
                   + (f" ({t['base_url']})" if t.get("base_url") else ""))
        for c in t["classes"]:
            first = (c.get("first_error") or "").strip()
            out.append(f"  {c['cells']} × {c['error_class']}: {c.get('hint') or first}"
                       + (f" — first: {first}" if c.get("hint") and first else ""))
    return out


def partial_line(rep: WireJSON) -> str | None:
    """A run without an answer in every cell: its label and, per target, accuracy over the planned
    cells and over the answered cells (issue 27)."""
    p = rep.get("partial")
    if not p:
        return None
    per = "; ".join(f"{t['target_id']} {_f(t.get('accuracy'))} over {t['total']} planned, "
                    f"{_f(t.get('accuracy_answered'))} over {t['completed']} answered"
                    for t in rep["summary"]["targets"])
    return f"{p['label']} — accuracy {per}"


def stop_line(stop: WireJSON) -> str:
    saved = stop.get("estimated_saving_usd")
    return (f"stopped early ({stop['reason']}: {stop['summary']}) after {stop['decided_at_cases']} of "
            f"{stop['planned_cases']} cases: {stop.get('cells_not_sent')} cells not sent, estimated USD "
            f"{'unknown' if saved is None else f'{saved:.4f}'} not spent")


@click.command()
@click.pass_obj
def runs(obj: Ctx) -> None:
    """List runs, newest first (a table on a terminal, JSON on a pipe or with --json)."""
    emit(obj.client.get("/runs"), views.runs_view)


@click.command()
@click.argument("run_id")
@click.option("--calls", "what", flag_value="calls", help="A page of call summaries.")
@click.option("--results", "what", flag_value="results", help="A page of per-cell results.")
@click.option("--events", "what", flag_value="events", help="Events after --after (1000 a page).")
@click.option("--active", is_flag=True, help="Only calls in flight (with --calls).")
@click.option("--after", type=click.IntRange(min=0), default=0, show_default=True,
              help="The next_cursor of the previous page (events: the last sequence number seen).")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True, help="Calls/results a page.")
@click.option("--call-id", default=None, help="One full call (prompt, answer and metering).")
@click.pass_obj
def show(obj: Ctx, run_id: str, what: str | None, active: bool, after: int, limit: int, call_id: str | None) -> None:
    """Show a run, a page of its calls, results or events, or one call (RUN_ID: any unique prefix)."""
    run_id = obj.run_id(run_id)
    if call_id and what:
        raise InvalidInput("choose one view: --call-id or --calls/--results/--events")
    if active and what != "calls":
        raise InvalidInput("--active needs --calls")
    if call_id:
        emit(obj.client.get(f"/runs/{run_id}/calls/{call_id}"))
    elif what == "calls":
        emit(obj.client.get(f"/runs/{run_id}/calls", after=after, limit=limit, active="true" if active else None),
             views.calls_view)
    elif what == "results":
        emit(obj.client.get(f"/runs/{run_id}/results", after=after, limit=limit), views.results_view)
    elif what == "events":
        emit(obj.client.get(f"/runs/{run_id}/events", after=after))
    else:
        shown = obj.client.get(f"/runs/{run_id}")
        emit(shown, views.run_view)
        if human():                                # on a terminal: why cells failed, per target
            print_failures(obj, shown)


@click.command()
@click.argument("run_id")
@click.option("--output", type=click.Path(dir_okay=False), default=None)
@click.option("--explain", is_flag=True, help="Say whether the report was rebuilt and which input changed.")
@click.option("--baseline", default=None, help="On a terminal: weigh the run's routers against the strongest single "
              "model of this run (default: of the same run, else of the latest finished comparable run).")
@click.pass_obj
def report(obj: Ctx, run_id: str, output: str | None, explain: bool, baseline: str | None) -> None:
    """Build (or fetch from the action cache) the report of a run. On a terminal: does routing pay?
    (the run's routers against the strongest single model), then per benchmark and per target. While
    the run goes, on a terminal: its figures so far, kept up as cells finish (--json, --output or --explain:
    the report)."""
    run_id = obj.run_id(run_id)
    if human() and not output and not explain and obj.client.get(f"/runs/{run_id}")["status"] in ("queued", "running"):
        emit(obj.client.get(f"/runs/{run_id}/live"), views.live_view)    # while it goes, on a terminal: the figures
        return                                                            # so far (--json: the report, as always)
    res = obj.client.get(f"/runs/{run_id}/report")
    if explain:
        click.echo(f"report: {'up to date (cache hit)' if res['cache_hit'] else res['explain']}", err=True)
    if output:
        write_json(output, without_volatile(res))
        err = SafeConsole(stderr=True)
        err.print(targets_table(res, err.width))
        SafeConsole(stderr=True).print(benchmark_table(res))
        if partial_line(res):
            SafeConsole(stderr=True).print(partial_line(res), markup=False)
        if res.get("early_stop"):
            SafeConsole(stderr=True).print(stop_line(res["early_stop"]))
    else:
        base = obj.run_id(baseline) if baseline else None
        emit(res, lambda rep, con: report_view(obj, rep, con, base))


def report_view(obj: Ctx, rep: WireJSON, con: Console, baseline: str | None = None) -> None:
    """Does routing pay? — the headline and per-benchmark rows (answer.py, the Dashboard panel's facts),
    then the per-target summary."""
    run = obj.client.get(f"/runs/{rep['run_id']}")
    ans = routing_answer(obj.client, run, rep, baseline)
    if ans.why_none:
        con.print(f"Does routing pay? {ans.why_none}.", markup=False)
    for f in ans.routers:
        for line in fact_lines(f):
            con.print(line, markup=False)
        con.print(benchmark_rows_table(f))
    con.print(views.report_targets_table(rep))
    if partial_line(rep):
        con.print(partial_line(rep), markup=False)
    if rep.get("early_stop"):
        con.print(stop_line(rep["early_stop"]), markup=False)
    con.print(f"more: `sr-bench report {rep['run_id']} --json` (everything), `sr-bench compare {rep['run_id']}` "
              "(all candidates, both grading rules), the Dashboard (`sr-bench dashboard`)", markup=False)


@click.command()
@click.argument("run_id")
@click.pass_obj
def cancel(obj: Ctx, run_id: str) -> None:
    """Stop the work of a run (results so far are kept)."""
    r = obj.client.post(f"/runs/{obj.run_id(run_id)}/cancel")
    emit({"run_id": r["id"], "status": r["status"], "cancel_requested": r["cancel_requested"]})


def register(cli: click.Group) -> None:
    for c in (plan, run, runs, show, report, cancel):
        cli.add_command(c)
