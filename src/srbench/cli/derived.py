"""`compare`, `regrade`, `export`: derived results of finished runs (cached rules, no model calls)."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from srbench.cli.common import Ctx, emit
from srbench.cli.runs import write_json


def _explain(res: dict[str, Any], what: str) -> None:
    click.echo(f"{what}: {'up to date (cache hit)' if res['cache_hit'] else res['explain']}", err=True)


def _pct(v: Any) -> str:
    return "unknown" if v is None else f"{v:.1f}%"


def comparison_table(cmp: dict[str, Any]) -> Table:
    base = cmp["baseline"]
    t = Table(title=f"baseline {base['target_id']} (quality {base['quality']:.3f}) — {cmp['evidence']['label']}")
    for col in ("candidate", "quality", "Δ [95% Hoeffding]", "claim", "wins/losses/ties", "saving principal",
                "saving total", "saving cache-neutral"):
        t.add_column(col, no_wrap=True)
    for c in cmp["candidates"]:
        ci = c["interval"]["ci"]
        s = c["savings"]
        t.add_row(c["target_id"], f"{c['quality']:.3f}", f"{c['delta']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]", c["claim"],
                  f"{c['wins']}/{c['losses']}/{c['ties']}", _pct(s["principal"]["saving_pct"]),
                  _pct(s["total"]["saving_pct"]), _pct(s["cache_neutral"]["saving_pct"]))
    return t


@click.command()
@click.argument("baseline_id")
@click.argument("candidate_id")
@click.option("--margin", type=float, default=None, help="Pre-declared non-inferiority margin (quality units).")
@click.option("--output", type=click.Path(dir_okay=False), default=None)
@click.option("--explain", is_flag=True)
@click.pass_obj
def compare(obj: Ctx, baseline_id: str, candidate_id: str, margin: float | None, output: str | None,
            explain: bool) -> None:
    """Paired comparison of a candidate run against the strongest single model of a baseline run."""
    res = obj.client.post("/comparisons", {"baseline_run_id": baseline_id, "candidate_run_id": candidate_id,
                                           "margin": margin})
    if explain:
        _explain(res, "comparison")
    if output:
        write_json(output, res["comparison"])
        Console(stderr=True).print(comparison_table(res["comparison"]))
    else:
        emit(res["comparison"])


@click.command()
@click.argument("run_id")
@click.option("--output", type=click.Path(dir_okay=False), required=True)
@click.option("--explain", is_flag=True)
@click.pass_obj
def regrade(obj: Ctx, run_id: str, output: str, explain: bool) -> None:
    """Offline regrade of saved multiple-choice and grid answers (zero model calls)."""
    res = obj.client.post(f"/runs/{run_id}/regrade")
    if explain:
        _explain(res, "regrade")
    write_json(output, res["regrade"])
    emit({"run_id": run_id, "changed_count": res["regrade"]["changed_count"], "output": output,
          "model_requests": 0})


@click.command()
@click.argument("run_id")
@click.option("--output", type=click.Path(dir_okay=False), required=True)
@click.pass_obj
def export(obj: Ctx, run_id: str, output: str) -> None:
    """Export a dev run as a training matrix (holdout and unknown splits are refused)."""
    res = obj.client.post(f"/runs/{run_id}/export")
    write_json(output, res["export"])
    emit({"run_id": run_id, "cases": len(res["export"]["cases"]), "output": output})


def register(cli: click.Group) -> None:
    for c in (compare, regrade, export):
        cli.add_command(c)
