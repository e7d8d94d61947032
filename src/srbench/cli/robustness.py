"""`sr-bench robustness` (issue 43, item 4): a router's decision flip rate under deterministic prompt perturbations,
at zero inference cost. From a manifest (live or preview), every router (MoM) target with a preview endpoint is
previewed as the prompts are and once per perturbation kind (`perturbation` in the plan: stages/dispatch/perturb.py);
the service's robustness rule then compares the decisions. A router without a preview endpoint is named as not
measurable, never estimated. The same manifest binds the same preview runs (idempotency keys from its digest)."""

from __future__ import annotations

import hashlib
import json
from typing import get_args

import click
from rich.table import Table

from srbench.cli.common import Ctx, emit
from srbench.cli.manifests import read_manifest
from srbench.cli.output import SafeConsole, human
from srbench.cli.runs import wait_for
from srbench.errors import InvalidInput
from srbench.schemas.plan import Perturbation
from srbench.schemas.wire import WireJSON

KINDS: tuple[str, ...] = get_args(Perturbation)
NO_PREVIEW = "no preview_url: its routing cannot be asked without inference, so it is not measured (never estimated)"


def _routers(obj: Ctx, manifest: WireJSON) -> tuple[list[WireJSON], list[WireJSON]]:
    """(the manifest's router entries with a preview endpoint, the routers without one as {target_id, reason})."""
    registered = {t["id"]: t for t in obj.client.get("/targets")["targets"]}
    keep, named = [], []
    for entry in manifest.get("targets") or []:
        t = registered.get(entry.get("id"), {}) if set(entry) == {"id"} else entry
        if t.get("kind") != "mom":
            continue
        if t.get("preview_url"):
            keep.append(entry)
        else:
            named.append({"target_id": entry.get("id"), "reason": NO_PREVIEW})
    return keep, named


def _preview(obj: Ctx, manifest: WireJSON, kind: str | None, key: str) -> str:
    body = {**manifest, "mode": "preview"}
    body.pop("perturbation", None)
    if kind:
        body["perturbation"] = kind
    res = obj.client.post("/runs", {"manifest": body, "idempotency_key": f"{key}:{kind or 'original'}"})
    return str(wait_for(obj, res["id"])["id"])


def _table(out: WireJSON) -> Table:
    t = Table(title=f"robustness of {out['original_run']}: selected model flips under perturbed prompts "
                    "(preview only; no inference)")
    for col in ("router", "scope", "cases", "pairs", "flips", "flip rate [95%]", "decision flips", "unanswered"):
        t.add_column(col)
    for r in out["targets"]:
        for row in [r["overall"], *r["benchmarks"], *r["perturbations"]]:
            ci = row["ci95"]
            rate = "n/a" if row["flip_rate"] is None else f"{100 * row['flip_rate']:.1f}%"
            t.add_row(r["target_id"], row["scope"], str(row["cases"]), str(row["pairs"]), str(row["flips"]),
                      rate + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""), str(row["decision_flips"]),
                      str(row["unanswered"]))
    return t


@click.command()
@click.option("--manifest", required=True, type=click.Path(dir_okay=False), help="A manifest naming router targets.")
@click.option("--perturbations", default=",".join(KINDS), show_default=True,
              help="Comma-separated perturbation kinds (docs/statistics.md, 'Robustness').")
@click.pass_obj
def robustness(obj: Ctx, manifest: str, perturbations: str) -> None:
    """How often each router's choice flips when the prompts are perturbed (preview endpoint only; no inference)."""
    kinds = [k.strip() for k in perturbations.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise InvalidInput(f"--perturbations: {', '.join(bad) or 'none given'} is not a perturbation kind; choose "
                           f"from {', '.join(KINDS)}")
    data = read_manifest(obj, manifest)
    if not isinstance(data, dict) or data.get("kind") == "plan":
        raise InvalidInput(f"{manifest}: robustness needs a manifest (not a frozen plan): it freezes one preview "
                           "plan per perturbation")
    keep, named = _routers(obj, data)
    out: WireJSON = {"not_measurable": named, "model_requests": 0}
    if keep:
        base = {**data, "targets": keep}
        key = "robustness-" + hashlib.sha256(json.dumps(base, sort_keys=True).encode()).hexdigest()[:24]
        original = _preview(obj, base, None, key)
        runs = [_preview(obj, base, k, key) for k in kinds]
        out = {**obj.client.get(f"/runs/{original}/robustness", perturbed=",".join(runs)), **out}
    if human():
        console = SafeConsole(highlight=False)
        if keep:
            console.print(_table(out))
        for n in named:
            console.print(f"{n['target_id']}: not measurable — {n['reason']}", markup=False)
        if not keep:
            console.print("no router with a preview endpoint: nothing was measured", markup=False)
    else:
        emit(out)


def register(cli: click.Group) -> None:
    cli.add_command(robustness)
