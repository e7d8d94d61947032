"""`store verify | gc`: check the object store against the journal, and collect unreachable objects.

Both go through the service (the journal's only writer). On a terminal each prints a one-line summary
(the problems `verify` finds one a line on stderr, and so the unreachable objects with `gc --list`); on a
pipe or with ``--json`` the service's full answer as JSON, like every command, and the summary on stderr. `verify` exits 1 when it finds
a problem. `gc` is a dry run unless ``--apply`` is given; it exits 1, having deleted nothing, when a
reachable object cannot be read or verified (its line names them and the fix; stderr lists each).
"""

from __future__ import annotations

import click
from rich.console import Console

from srbench.cli import output
from srbench.cli.common import Ctx, FiniteFloat, emit
from srbench.schemas.wire import WireJSON


def human_bytes(n: int) -> str:
    """1536 → '1.5 KiB'."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def verify_line(res: WireJSON) -> str:
    fix = (f"{len(res['unrepaired'])} not repaired, each with its reason (`not repaired:` lines, the answer's "
           "unrepaired)" if res.get("unrepaired") else "`sr-bench store verify --repair` puts a good copy back from "
           "the stores SR_BENCH_REPAIR_FROM names (docs/recovery.md)")
    verdict = "ok" if res["ok"] else f"{res['problems']} problem(s); {fix}"
    extra = [f"{len(res.get(key) or [])} {label}" for key, label in
             (("bad_copies", "bad copies"), ("bad_files", "bad files under packs/"),
              ("damaged_references", "damaged journal references")) if res.get(key)]
    return (f"store verify: {res['objects']} objects ({human_bytes(res['bytes'])}) re-hashed, "
            f"{res['reachable']} reachable through {res['references']} references; "
            f"{len(res['corrupt'])} corrupt, {len(res['missing'])} missing"
            + "".join(f", {e}" for e in extra) + f": {verdict}")


def gc_line(res: WireJSON) -> str:
    head = "store gc (dry run)" if res["dry_run"] else "store gc"
    if res.get("refused"):
        return f"{head}: {res['objects']} objects, {res['reachable']} reachable; {res['refused']}"
    line = (f"{head}: {res['objects']} objects, {res['reachable']} reachable, {res['unreachable']} unreachable "
            f"({human_bytes(res['unreachable_bytes'])}); {res['young']} younger than {res['grace_s']:g} s kept; ")
    bad = res.get("bad_copies") or []
    drop = sum(b["action"] in ("drop", "dropped") for b in bad)
    copies = ((f"; {drop} bad cop{'y' if drop == 1 else 'ies'} with a good twin "
               + ("would be dropped" if res["dry_run"] else "dropped") if drop else "")
              + (f"; {len(bad) - drop} bad copies kept (see store verify)" if len(bad) > drop else "")
              + _packs_part(res))
    if res["dry_run"]:
        return line + (f"{res['collectable']} ({human_bytes(res['collectable_bytes'])}) would be deleted "
                       "(use --apply)") + copies
    rescued = f", {res['rescued']} referenced meanwhile and kept" if res["rescued"] else ""
    return line + f"deleted {res['deleted']} ({human_bytes(res['deleted_bytes'])}){rescued}" + copies


def _packs_part(res: WireJSON) -> str:
    """'; packs 150 → 1 (merged), 1 unreadable pack file removed' when pack upkeep did (or would do) anything."""
    packs = res.get("packs")
    if not packs:
        return ""
    verb = "would be " if res["dry_run"] else ""
    gone = sum(f["action"] in ("remove", "removed") for f in packs["unreadable"])
    part = f"; packs {packs['packs']} → {packs['packs_after']}" + (" (merged)" if packs["merged"] else "")
    if gone:
        part += f", {gone} unreadable pack file(s) {verb}removed"
    return part if packs["merged"] or gone else ""


@click.group()
def store() -> None:
    """Check the object store and collect garbage."""


@store.command(name="verify")
@click.option("--repair", is_flag=True, help="Replace each damaged or missing object with a good copy from the "
              "second stores the service names in SR_BENCH_REPAIR_FROM.")
@click.pass_obj
def verify_cmd(obj: Ctx, repair: bool) -> None:
    """Re-hash every object and check every journal → object reference; exit 1 on a problem."""
    res = obj.client.post("/store/verify", {"repair": True} if repair else {})
    emit(res, verify_view)
    if not output.human():                     # on a pipe the JSON is on stdout, its one line on stderr (as `demo`)
        click.echo(verify_line(res), err=True)
    if not res["ok"]:
        raise SystemExit(1)


def verify_view(res: WireJSON, con: Console) -> None:
    """On a terminal: each problem (and repair) one a line on stderr, then the one-line summary."""
    for digest in res.get("repaired", []):
        click.echo(f"repaired: {digest}", err=True)
    for item in res.get("unrepaired", []):
        click.echo(f"not repaired: {item['digest']}: {item['reason']}", err=True)
    for digest in res["corrupt"]:
        click.echo(f"corrupt: {digest}", err=True)
    for m in res["missing"]:
        more = m["references"] - len(m["referenced_from"])
        click.echo(f"missing: {m['digest']} referenced from {'; '.join(m['referenced_from'])}"
                   + (f" (and {more} more)" if more > 0 else ""), err=True)
    for b in res.get("bad_copies") or []:
        click.echo(f"bad copy: {b['digest']} at {b['where']}: {b['problem']}", err=True)
    for f in res.get("bad_files") or []:
        click.echo(f"bad file: {f['where']}: {f['problem']}", err=True)
    for d in res.get("damaged_references") or []:
        click.echo(f"damaged reference: {d['where']}: {d['reason']}", err=True)
    con.print(verify_line(res), markup=False, soft_wrap=True)


@store.command(name="gc")
@click.option("--apply", "apply_", is_flag=True, help="Delete for real (default: a dry run).")
@click.option("--grace-s", type=FiniteFloat(min=0), default=None,
              help="Keep unreachable objects younger than this many seconds (default: the service's, 3600).")
@click.option("--list", "list_", is_flag=True, help="List every unreachable object on stderr.")
@click.pass_obj
def gc_cmd(obj: Ctx, apply_: bool, grace_s: float | None, list_: bool) -> None:
    """Remove objects no journal reference reaches (dry run unless --apply)."""
    req: WireJSON = {"apply": apply_}
    if grace_s is not None:
        req["grace_s"] = grace_s
    res = obj.client.post("/store/gc", req)
    emit(res, lambda r, con: gc_view(r, con, list_))
    if not output.human():
        click.echo(gc_line(res), err=True)
    if res.get("refused"):
        raise SystemExit(1)


def gc_view(res: WireJSON, con: Console, list_: bool) -> None:
    """On a terminal: with --list each unreachable object on stderr, then the one-line summary."""
    if list_:
        labels = {"delete": "would delete", "deleted": "deleted", "keep_young": "kept (young)",
                  "rescued": "kept (referenced meanwhile)", "blocked": "kept (gc blocked)",
                  "keep_damaged": "kept (a copy does not verify)"}
        for item in res["items"]:
            age = "age unknown" if item["age_s"] is None else f"age {item['age_s']:.0f} s"
            click.echo(f"{labels.get(item['action'], item['action'])}: {item['digest']} "
                       f"({human_bytes(item['bytes'])}, {age})", err=True)
        for copy in res.get("bad_copies") or []:
            click.echo(f"bad copy ({copy['action']}): {copy['digest']} at {copy['where']}: {copy['problem']}",
                       err=True)
    for bad in res.get("unreadable", []):
        click.echo(f"unreadable: {bad['digest'] or bad['where']}: {bad['reason']} (named by {bad['where']})", err=True)
    con.print(gc_line(res), markup=False, soft_wrap=True)


def register(cli: click.Group) -> None:
    cli.add_command(store)
