"""How a command prints: a compact human view when stdout is a terminal, today's JSON otherwise.

On a pipe, in a file, or with ``--json`` every data command prints exactly the JSON it always printed
(scripts and ``> manifest.json`` keep working). On a terminal it prints a table or a few summary lines:
ids are never cut (their columns never wrap; the other columns wrap instead), long cells wrap.
``SR_BENCH_JSON=1`` forces JSON everywhere.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table

from srbench.schemas.wire import WireJSON

JSON_META = "srbench.json"
View = Callable[[Any, Console], None]


def json_forced() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(JSON_META)) or os.environ.get("SR_BENCH_JSON", "") not in ("", "0")


def human() -> bool:
    """True when a person reads stdout: a terminal, and no --json."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not json_forced()


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def emit(value: Any, view: View | None = None) -> None:
    """Print a command's answer: `view` (or the generic view) on a terminal, else the JSON as always."""
    if human():
        (view or generic_view)(value, console())
    else:
        click.echo(json.dumps(value, indent=2, sort_keys=True))


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[JSON_META] = True


def add_json_option(cmd: click.Command) -> None:
    """Give every command (and subcommand) a --json flag, unless it has its own."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            add_json_option(sub)
        return
    if any("--json" in getattr(p, "opts", ()) for p in cmd.params):
        return
    cmd.params.append(click.Option(["--json"], is_flag=True, expose_value=False, is_eager=True, callback=_set_json,
                                   help="Print the answer as JSON (the default when stdout is not a terminal)."))


# -- tables ----------------------------------------------------------------------------------------
def table(*columns: str, ids: Iterable[str] = (), short: Iterable[str] = (), title: str | None = None,
          caption: str | None = None) -> Table:
    """A table whose `ids` columns (and `short` ones: numbers, states) never wrap; the others wrap."""
    keep = set(ids) | set(short)
    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left", box=box.SIMPLE_HEAD,
              show_edge=False, pad_edge=False)
    for c in columns:
        t.add_column(c, no_wrap=c in keep, overflow="fold")
    return t


def one_line(reason: str, limit: int = 110) -> str:
    """A long reason cut to its head and its fix (the trailing parenthesis), for one table line."""
    if len(reason) <= limit:
        return reason
    fix = reason[reason.rindex("("):] if reason.endswith(")") and "(" in reason else ""
    fix = fix if "sr-bench " in fix or "install" in fix else ""
    head = reason.split(": ", 1)[0]
    return f"{head[:limit]}… {fix}".strip()


def _scalar(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
        return ", ".join(_scalar(x) for x in v) or "-"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(", ", ": "))
    return str(v)


def _is_id(key: str) -> bool:
    """Columns never wrapped: ids (short). Digests and paths fold onto the next line instead."""
    return key == "id" or key.endswith("_id")


def records_table(rows: list[WireJSON], title: str | None = None, limit: int = 50,
                  width: int = 80) -> Table:
    """A list of records as a table of the fields that fit `width` (ids first, whole; the others wrap;
    nested values as compact JSON); the fields left out are named in the caption."""
    keys: list[str] = []
    for r in rows[:limit]:
        keys += [k for k in r if k not in keys]
    cells = {k: [_scalar(r.get(k)) for r in rows[:limit]] for k in keys}
    chosen: list[str] = []
    used = 0
    for k in sorted(keys, key=lambda k: (not _is_id(k), keys.index(k))):
        need = max(len(k), *(len(v) for v in cells[k])) if _is_id(k) else min(max(len(k), *(len(v) for v in cells[k])), 16)
        if used + need + 3 <= width or not chosen:
            chosen.append(k)
            used += need + 3
    chosen.sort(key=keys.index)
    notes = [] if len(rows) <= limit else [f"first {limit} of {len(rows)}"]
    if len(chosen) < len(keys):
        notes.append("also " + ", ".join(k for k in keys if k not in chosen))
    t = table(*chosen, ids=[k for k in chosen if _is_id(k)], title=title,
              caption="; ".join(notes) + " (all with --json)" if notes else None)
    for i in range(min(len(rows), limit)):
        t.add_row(*(cells[k][i] for k in chosen))
    return t


def generic_view(value: Any, con: Console) -> None:
    """Any answer: its scalar fields as `key: value` lines, each list of records as a table."""
    if not isinstance(value, dict):
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            con.print(records_table(value, width=con.width))
        else:
            con.print(_scalar(value), markup=False)
        return
    kv = Table(show_header=False, box=None, pad_edge=False)
    kv.add_column(style="bold", no_wrap=True)
    kv.add_column(overflow="fold")
    tables: list[Table] = []
    for k in sorted(value):
        v = value[k]
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            tables.append(records_table(v, title=k, width=con.width))
        elif isinstance(v, dict) and v and all(not isinstance(x, (dict, list)) for x in v.values()):
            kv.add_row(k, ", ".join(f"{sk} {_scalar(sv)}" for sk, sv in v.items()))
        else:
            kv.add_row(k, _scalar(v))
    if kv.row_count:
        con.print(kv)
    for t in tables:
        con.print(t)
