"""`eval` and `retry`: the evaluation loop in one command each.

`eval` prepares (or reuses) the dataset, freezes the plan (its warnings shown, as `plan` shows them; one about
money refuses the run unless `--yes`), runs it and prints the report. Everything is content addressed: the dataset is reused when this profile and seed
were prepared before (the service's preparation job), the same inputs freeze to the same plan, and the run's
idempotency key is derived from the plan's hash — so running the same `eval` again binds the same run and
prints its report without a new model call. `retry` reviews a stopped run's recovery plan and submits the
recovery child at once, its idempotency key derived from the recovery plan's hash the same way.
"""

from __future__ import annotations

import time
from typing import Any

import click

from srbench import DEFAULT_SEED
from srbench.cli.common import Ctx, FiniteFloat, emit
from srbench.cli.derived import eligible_of, excluded_of, recover_request
from srbench.cli.output import SafeConsole, human
from srbench.cli.plan_checks import money_warnings
from srbench.cli.runs import plan_story, preflight, print_failures, report_view, wait_for
from srbench.errors import InvalidInput, SrBenchError
from srbench.schemas.wire import WireJSON

PROFILES = ("smoke", "quick", "standard")


def prepared(obj: Ctx, benchmarks: list[str], profile: str, seed: int, source: str) -> WireJSON:
    """The dataset of these benchmarks (each prepared or reused, then composed): the service's preparation
    job, followed with a line per phase on a terminal."""
    body: WireJSON = {"benchmarks": benchmarks, "profile": profile, "seed": seed}
    if source != "auto":
        body["source"] = source
    job = obj.client.post("/dataset-preparations", body)["preparation"]
    err = SafeConsole(stderr=True, highlight=False)
    with err.status(f"dataset: {job['phase']}", spinner="dots") as status:
        while job["status"] not in ("completed", "failed"):
            time.sleep(0.3)
            job = obj.client.get(f"/dataset-preparations/{job['id']}")["preparation"]
            parts = ", ".join(f"{i['benchmark']} {'reused' if i['reused'] else i['phase']}" for i in job["items"] or [])
            status.update(f"dataset: {job['phase']}" + (f" ({parts})" if parts else ""))
    if job["status"] == "failed":
        raise SrBenchError(f"dataset preparation failed: {job['error']} (`sr-bench dataset prepare --benchmark B "
                           f"--profile {profile}` says more)")
    ds = job["dataset"]
    reused = [i["benchmark"] for i in job["items"] or [] if i["reused"]]
    err.print(f"dataset {ds['ref']}: {ds['case_count']} cases of {', '.join(ds['benchmarks'])} ({profile}, seed "
              f"{seed})" + (f"; reused the prepared {', '.join(reused)}" if reused else ""), markup=False,
              soft_wrap=True)
    return ds


@click.command(name="eval")
@click.option("--benchmark", "benchmarks", multiple=True, required=True, help="A benchmark id; repeatable.")
@click.option("--profile", required=True, type=click.Choice(PROFILES))
@click.option("--target", "targets", multiple=True, required=True, help="A registered target id; repeatable.")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True)
@click.option("--source", type=click.Choice(["auto", "download", "mirror"]), default="auto", show_default=True,
              help="Where the pinned files come from (as `dataset prepare --source`).")
@click.option("--max-cost-usd", type=FiniteFloat(min=0, min_open=True), default=None,
              help="The run's budget in USD (limits.max_cost_usd).")
@click.option("--name", default=None, help="The run's name (default: eval BENCHMARKS PROFILE).")
@click.option("--idempotency-key", default=None,
              help="Default: derived from the plan's hash, so the same eval binds the same run; give a new key "
                   "for another run of the same plan.")
@click.option("--yes", "accept_cost", is_flag=True,
              help="Run although the plan warns about money (a cost that will be 'unknown', an estimate above "
                   "--max-cost-usd); without it such a plan is refused before anything is sent.")
@click.pass_obj
def eval_cmd(obj: Ctx, benchmarks: tuple[str, ...], profile: str, targets: tuple[str, ...], seed: int, source: str,
             max_cost_usd: float | None, name: str | None, idempotency_key: str | None, accept_cost: bool) -> None:
    """Prepare (or reuse) the dataset, freeze the plan (its warnings shown), run it, print the report.

    Running the same eval again reuses the dataset and the plan and binds the same run: its report is
    printed again, no model is called.

    \b
    Example:
      sr-bench eval --benchmark arc-agi-2 --profile smoke --target large \\
        --target mom --source mirror
      sr-bench eval --benchmark mmlu-pro --benchmark gpqa-diamond \\
        --profile quick --target mom --max-cost-usd 5"""
    ds = prepared(obj, list(dict.fromkeys(benchmarks)), profile, seed, source)
    manifest: WireJSON = {"version": "sr-bench-1.0", "name": name or f"eval {'+'.join(ds['benchmarks'])} {profile}",
                          "profile": profile, "seed": seed, "dataset": {"sha256": ds["sha256"]},
                          "targets": [{"id": t} for t in dict.fromkeys(targets)]}
    if max_cost_usd is not None:
        manifest["limits"] = {"max_cost_usd": max_cost_usd}
    planned = obj.client.post("/plans", {"manifest": manifest})
    plan_story(planned)
    money = money_warnings(planned["manifest"], planned.get("estimate"))
    if money and not accept_cost:      # as `run` refuses an unfrozen manifest that warns about money
        raise InvalidInput(f"{len(money)} warning(s) above are about money ({money[0]}), so nothing was sent: "
                           "fix them, or run it anyway with `sr-bench eval … --yes`")
    preflight(obj, "eval", planned["manifest"])       # keys the service lacks (refused), one probe per target
    key = idempotency_key or f"eval-{planned['plan_sha256'][:40]}"
    run = obj.client.post("/runs", {"manifest": planned["manifest"], "idempotency_key": key})
    if not run["created"]:
        click.echo(f"the same plan already ran as {run['id']} (key {key}): its report, no new request sent; "
                   "another run of it: --idempotency-key NEW", err=True)
    finish(obj, run["id"], {"plan_sha256": planned["plan_sha256"], "dataset": ds["ref"], "created": run["created"]})


def finish(obj: Ctx, run_id: str, extra: WireJSON) -> None:
    """Wait for the run, then its report: the `report` view on a terminal, else JSON with the report in it.
    Exits 1 when the run did not complete."""
    final = wait_for(obj, run_id)
    rep = obj.client.get(f"/runs/{run_id}/report")
    print_failures(obj, final)                     # why cells failed, per target (stderr)
    if human():
        con = SafeConsole(highlight=False)
        report_view(obj, rep, con)
        p = final["progress"]
        con.print(f"run {final['id']}: {final['status']} ({p['completed']} of {p['total']} cells completed, "
                  f"{p['failed']} failed)" + (f"; error: {final['error']}" if final["error"] else ""), markup=False)
    else:
        emit({"run_id": final["id"], "status": final["status"], "error": final["error"],
              "progress": final["progress"], **extra, "report": rep})
    if final["status"] not in ("completed", "stopped_early"):
        raise SystemExit(1)


@click.command()
@click.argument("run_id")
@click.option("--failed", is_flag=True, help="Also attempt the failed and ambiguous cells again (new attempts cost "
              "extra: this flag acknowledges it). Default: only the cells never sent.")
@click.pass_obj
def retry(obj: Ctx, run_id: str, failed: bool) -> None:
    """Continue a stopped run: review its recovery plan and submit the recovery child in one (RUN_ID: any
    unique prefix). The same retry again binds the same child.

    \b
    Example:
      sr-bench retry run-5f3a             # the cells never sent
      sr-bench retry run-5f3a --failed    # the failed ones too (new cost)"""
    run_id = obj.run_id(run_id)
    mode = "failed" if failed else "undispatched"
    plan = obj.client.post(f"/runs/{run_id}/recover-plan", {"mode": mode})
    children = (obj.client.get(f"/runs/{run_id}").get("lineage") or {}).get("children") or []
    eligible, excluded = eligible_of(plan), excluded_of(plan)       # sr-bench's plan or upstream's
    if not eligible and isinstance(excluded, dict) and excluded.get("claimed") and children:
        click.echo(f"{run_id} is already continued by {children[-1]}: its report, no new request sent", err=True)
        finish(obj, children[-1], {"parent": run_id, "created": False})
        return
    if not eligible:
        raise InvalidInput(_nothing_to_retry(run_id, mode, excluded))
    key = f"retry-{plan['plan_sha256'][:40]}"
    click.echo(f"recovery of {run_id} ({mode}): {len(plan.get('selected_cells') or eligible)} cell(s); key {key}",
               err=True)
    child = obj.client.post(f"/runs/{run_id}/recover", recover_request(plan, key, failed))
    created = child.get("created")          # upstream's service answers the bare child run
    if created is False:
        click.echo(f"the same recovery already runs as {child['id']}: no new request sent", err=True)
    finish(obj, child["id"], {"parent": run_id, "created": created})


def _nothing_to_retry(run_id: str, mode: str, excluded: Any) -> str:
    """Why `retry` sends nothing, in one line: the other mode only where it has cells to try (a run whose cells
    all completed, or are continued by a child, has none in either mode)."""
    if not isinstance(excluded, dict):                              # upstream's plan: a bare count
        return f"{run_id}: no cell to retry in mode {mode} ({excluded} excluded)"
    counts = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in excluded.items())
    if set(excluded) <= {"completed", "claimed"}:
        return (f"{run_id}: nothing to retry: its cells are {counts} (continued by a child run where claimed); "
                f"its report: `sr-bench report {run_id}`")
    hint = "" if mode == "failed" else (f"; the failed or interrupted cells: `sr-bench retry {run_id} --failed` "
                                        "(new attempts cost extra)")
    return f"{run_id}: no cell to {'retry' if mode == 'failed' else 'continue'} in mode {mode} ({counts}){hint}"


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
    cli.add_command(retry)
