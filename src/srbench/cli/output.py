"""How a command prints: a compact human view when stdout is a terminal, today's JSON otherwise.

On a pipe, in a file, or with ``--json`` every data command prints exactly the JSON it always printed
(scripts and ``> manifest.json`` keep working). On a terminal it prints a table or a few summary lines:
ids are never cut (their columns never wrap; the other columns wrap instead), long cells wrap between whole
units: an interval in a table cell is written ``[lo,hi]`` and never split, nor is a number or an id.
``SR_BENCH_JSON=1`` forces JSON everywhere.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click
from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

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


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text as a terminal is shown it: each control character (an escape sequence's ESC, a bell, a carriage
    return) written as its ``\\x`` code, so a stored name can neither restyle nor rewrite the screen."""
    return CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


class SafeConsole(Console):
    """The CLI's console: every string is data — printed as written (no markup unless a call says
    ``markup=True``, so a run named ``[/bold]`` is not a MarkupError) and with `printable`'s control codes."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(printable(text), **kwargs)


def console(stderr: bool = False) -> Console:
    return SafeConsole(stderr=stderr)


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
INTERVAL = re.compile(r"\[[^\[\]\s]*, [^\[\]\s]*\]")


def whole_units(cell: str) -> str:
    """The 80-column rule for a table cell: an interval is written ``[lo,hi]`` (no space inside), so a cell
    wraps only between whole units — a number, an interval, an id, a word — never inside one."""
    return INTERVAL.sub(lambda m: m[0].replace(", ", ","), cell)


class WholeTable(Table):
    """A table whose cells wrap only between whole units (`whole_units`): when it is wider than the console,
    each wrapping column gets at least its longest unit (a number, an interval, an id, a word) and the room
    left is shared by how much each would still use; never-wrapping columns (ids) keep their full width.
    When even that does not fit, its `optional` columns are left out and the caption names them."""

    optional: tuple[str, ...] = ()

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*(whole_units(c) if isinstance(c, str) else c for c in renderables), **kwargs)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self._fit(options)
        if widths is None and self.optional:
            yield from self._without(self.optional).__rich_console__(console, options)
            return
        saved: list[int | None] = [c.width for c in self.columns]
        if widths:
            for column, fit in zip(self.columns, widths, strict=True):
                column.width = fit
        try:
            yield from super().__rich_console__(console, options)
        finally:
            for column, before in zip(self.columns, saved, strict=True):
                column.width = before

    def _fit(self, options: ConsoleOptions) -> list[int] | None:
        """Content widths that fit `options.max_width` with every unit whole ([] when it fits as it is), or
        None when it cannot."""
        lows, highs = [], []
        for column in self.columns:
            texts = [str(column.header), *(str(c) for c in column.cells if isinstance(c, str | Text))]
            lines = [line for t in texts for line in t.splitlines()] or [""]
            high = max(cell_len(line) for line in lines)
            low = high if column.no_wrap else max((cell_len(u) for line in lines for u in line.split()), default=1)
            lows.append(max(low, 1))
            highs.append(max(high, 1))
        room = (options.max_width - self._extra_width
                - sum(self._get_padding_width(i) for i in range(len(self.columns))))
        if sum(highs) <= room:
            return []
        if sum(lows) > room:
            return None
        widths, spare = list(lows), room - sum(lows)
        wants = [h - w for h, w in zip(highs, widths, strict=True)]
        total = sum(wants)
        for i, want in enumerate(wants):
            widths[i] += min(want, spare * want // total) if total else 0
        left = room - sum(widths)
        for i in sorted(range(len(widths)), key=lambda i: wants[i], reverse=True):   # rounding's remainder
            give = min(left, highs[i] - widths[i])
            widths[i] += give
            left -= give
        return widths

    def _without(self, names: tuple[str, ...]) -> WholeTable:
        """This table without the columns `names` (the caption says where they are)."""
        kept = [c for c in self.columns if str(c.header) not in names]
        note = f"not shown at this width: {', '.join(names)} (on a wider terminal, or with --json)"
        t = WholeTable(title=self.title, caption=f"{self.caption}\n{note}" if self.caption else note,
                       title_justify=self.title_justify, caption_justify=self.caption_justify, box=self.box,
                       show_edge=self.show_edge, pad_edge=self.pad_edge)
        for c in kept:
            t.add_column(c.header, no_wrap=c.no_wrap, overflow=c.overflow)
        cells = [list(c.cells) for c in kept]
        for row in zip(*cells, strict=True):
            t.add_row(*row)
        return t


def table(*columns: str, ids: Iterable[str] = (), short: Iterable[str] = (), title: str | None = None,
          caption: str | None = None, optional: Iterable[str] = ()) -> Table:
    """A table whose `ids` columns (and `short` ones: numbers, states) never wrap; the others wrap between
    whole units (`WholeTable`); the `optional` ones are left out where the table cannot fit otherwise."""
    keep = set(ids) | set(short)
    t = WholeTable(title=title, caption=caption, title_justify="left", caption_justify="left", box=box.SIMPLE_HEAD,
                   show_edge=False, pad_edge=False)
    t.optional = tuple(optional)
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
