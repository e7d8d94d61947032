"""`options set | show`: the store's benchmark options (DEP-1: judges, user simulators, grading options),
through the service that owns `<store>/benchmark-options.json` (never edited by hand)."""

from __future__ import annotations

import json

import click
from rich.console import Console

from srbench.cli.common import Ctx, emit
from srbench.cli.output import table
from srbench.errors import InvalidInput
from srbench.schemas.wire import WireJSON


@click.group()
def options() -> None:
    """Set and show the store's benchmark options (judges, user simulators, grading options).

    \b
    Example:
      sr-bench options set hle judge=judge \\
        grader_version=sr-bench-reference-judge-v1
      sr-bench options set tau3 user_simulator=sim judge=judge release=1.0.1
      sr-bench options show"""


def parse_value(text: str) -> object:
    """KEY=VALUE's value: JSON when it parses (2, true, {"a": 1}, "quoted"), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@options.command(name="set")
@click.argument("benchmark")
@click.argument("pairs", nargs=-1, metavar="KEY=VALUE...")
@click.option("--unset", "unset", multiple=True, metavar="KEY", help="Remove this key from the entry; repeatable.")
@click.pass_obj
def set_cmd(obj: Ctx, benchmark: str, pairs: tuple[str, ...], unset: tuple[str, ...]) -> None:
    """Set (and --unset) keys of one benchmark's options; the service checks each and writes the store's
    benchmark-options.json. A value is JSON when it parses (2, true), else text (a target id, 1.0.1).

    \b
    Example:
      sr-bench options set simpleqa-verified judge=judge \\
        grader_version=sr-bench-reference-judge-v1
      sr-bench options set arc-agi-2 attempts=2
      sr-bench options set arc-agi-2 --unset attempts"""
    chosen: WireJSON = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise InvalidInput(f"{pair!r}: give KEY=VALUE (e.g. judge=my-judge)")
        chosen[key] = parse_value(value)
    if not chosen and not unset:
        raise InvalidInput("nothing to set: give KEY=VALUE pairs or --unset KEY (`sr-bench options show` lists "
                           "what is set)")
    res = obj.client.post("/benchmark-options", {"benchmark": benchmark, "set": chosen, "unset": list(unset)})
    emit(res, lambda r, con: options_view(r, con, benchmark))


@options.command(name="show")
@click.argument("benchmark", required=False)
@click.pass_obj
def show_cmd(obj: Ctx, benchmark: str | None) -> None:
    """Show the store's benchmark options (all, or one benchmark's); `sr-bench setup` says what is missing.

    \b
    Example:
      sr-bench options show
      sr-bench options show hle --json"""
    res = obj.client.get("/benchmark-options")
    if benchmark is not None:
        res = {**res, "options": {k: v for k, v in res["options"].items() if k == benchmark}}
    emit(res, lambda r, con: options_view(r, con, benchmark))


def options_view(res: WireJSON, con: Console, benchmark: str | None) -> None:
    """One row per benchmark and key (values as JSON), and where it lives."""
    t = table("benchmark", "key", "value", ids=["benchmark", "key"])
    for b, entry in sorted(res["options"].items()):
        for key, value in sorted(entry.items()) if isinstance(entry, dict) else [("", entry)]:
            t.add_row(b, key, value if isinstance(value, str) else json.dumps(value, sort_keys=True))
    if t.row_count:
        con.print(t)
    else:
        con.print(f"no options set{f' for {benchmark}' if benchmark else ''} (`sr-bench options set BENCHMARK "
                  "KEY=VALUE`)", markup=False)
    con.print(f"kept in the store's {res['file']} (written by the service); what a benchmark still needs: "
              "`sr-bench setup`", markup=False)


def register(cli: click.Group) -> None:
    cli.add_command(options)
