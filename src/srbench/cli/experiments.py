"""`experiment …`, `candidate-plan`, `replay-options`, `comparison-options` (upstream's commands)."""

from __future__ import annotations

import click

from srbench.cli.common import Ctx, emit
from srbench.cli.runs import write_json

ROLES = ("smoke", "baseline", "initial", "preview", "candidate", "validation", "estimate", "recovery")


@click.group()
def experiment() -> None:
    """Group the iterations of one routing change: baseline, candidates, holdout acceptance."""


@experiment.command("create")
@click.argument("name")
@click.option("--idempotency-key", default=None, help="The same key binds the same experiment (never reusable).")
@click.pass_obj
def create(obj: Ctx, name: str, idempotency_key: str | None) -> None:
    emit(obj.client.post("/experiments", {"name": name, "idempotency_key": idempotency_key}))


@experiment.command("list")
@click.option("--after", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=20, show_default=True)
@click.pass_obj
def list_(obj: Ctx, after: int, limit: int) -> None:
    emit(obj.client.get("/experiments", after=after, limit=limit))


@experiment.command("show")
@click.argument("experiment_id")
@click.option("--runs", "with_runs", is_flag=True, help="The runs of the experiment and their roles.")
@click.option("--after", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--limit", type=click.IntRange(1, 50), default=20, show_default=True)
@click.pass_obj
def show(obj: Ctx, experiment_id: str, with_runs: bool, after: int, limit: int) -> None:
    if with_runs:
        emit(obj.client.get(f"/experiments/{experiment_id}/runs", after=after, limit=limit))
    else:
        emit(obj.client.get(f"/experiments/{experiment_id}"))


@experiment.command("attach")
@click.argument("experiment_id")
@click.argument("run_id")
@click.option("--role", required=True, type=click.Choice(ROLES))
@click.option("--hypothesis", default="", help="What this iteration should show (at most 2000 characters).")
@click.pass_obj
def attach(obj: Ctx, experiment_id: str, run_id: str, role: str, hypothesis: str) -> None:
    emit(obj.client.post(f"/experiments/{experiment_id}/runs", {"run_id": obj.run_id(run_id), "role": role,
                                                                 "hypothesis": hypothesis}))


@experiment.command("delete")
@click.argument("experiment_id")
@click.pass_obj
def delete(obj: Ctx, experiment_id: str) -> None:
    """Delete the experiment; its runs are kept."""
    emit(obj.client.delete(f"/experiments/{experiment_id}"))


@click.command("candidate-plan")
@click.argument("baseline_run_id")
@click.option("--target", "target_ids", multiple=True, required=True, help="A registered MoM target (repeatable).")
@click.option("--mode", type=click.Choice(["live", "preview"]), default="live", show_default=True)
@click.option("--name", default=None)
@click.option("--experiment", "experiment_id", default=None, help="Join this experiment …")
@click.option("--role", type=click.Choice(ROLES), default=None, help="… in this role (default: candidate, or "
              "preview in mode preview).")
@click.option("--hypothesis", default="")
@click.option("--output", required=True, type=click.Path(dir_okay=False), help="Where to write the frozen plan.")
@click.pass_obj
def candidate_plan(obj: Ctx, baseline_run_id: str, target_ids: tuple[str, ...], mode: str, name: str | None,
                   experiment_id: str | None, role: str | None, hypothesis: str, output: str) -> None:
    """Freeze a plan on a finished baseline's questions and protocol with registered routers as subjects."""
    body: dict[str, object] = {"target_ids": list(target_ids), "mode": mode, "name": name}
    if experiment_id:
        body["experiment"] = {"id": experiment_id, "role": role or ("preview" if mode == "preview" else "candidate"),
                              "hypothesis": hypothesis}
    res = obj.client.post(f"/runs/{obj.run_id(baseline_run_id)}/candidate-plan", body)
    write_json(output, res["manifest"])
    emit({"plan_sha256": res["plan_sha256"], "total": res["total"], "output": output, "model_requests": 0})


def _options(kind: str) -> click.Command:
    @click.command(f"{kind}-options")
    @click.argument("baseline", required=False)
    @click.option("--after", default=None, help="The next_cursor of the previous page.")
    @click.option("--limit", type=click.IntRange(1, 25), default=10, show_default=True)
    @click.pass_obj
    def command(obj: Ctx, baseline: str | None, after: str | None, limit: int) -> None:
        emit(obj.client.get(f"/{kind}-options", baseline_run_id=obj.run_id(baseline) if baseline else None, after=after, limit=limit))
    command.help = (f"Baselines that have a {kind} partner, or the runs BASELINE can be "
                    f"{'replayed with' if kind == 'replay' else 'compared with'} (no model call).")
    return command


def register(cli: click.Group) -> None:
    for c in (experiment, candidate_plan, _options("replay"), _options("comparison")):
        cli.add_command(c)
