"""Issue 39, item 8: docs/upstream.md's tables are held to the suite — the command table names every command of
upstream's released `vllm-sr benchmark` CLI (its own command tree, walked in its interpreter) and exactly the commands
tests/upstream drives; the HTTP table names exactly the calls tests/service/test_upstream_wire.py replays."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from . import test_cli  # noqa: F401  (its @covers marks fill COVERED)
from .commands import COVERED
from .upstream_env import upstream_python

ROOT = Path(__file__).resolve().parents[2]
NOT_RUN = {"serve": "upstream's own service: never started on sr-bench's store"}


def _rows(heading: str) -> list[str]:
    """The first cells (without backticks) of the table after `heading` in docs/upstream.md."""
    text = (ROOT / "docs" / "upstream.md").read_text()
    section = text.split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            rows.append(line.split("|")[1].strip().strip("`"))
        elif rows and not line.startswith("|"):
            break
    return rows


# walks the released CLI's own click tree in its own interpreter (one process; --help per command costs ~40)
WALK = """
import click
from cli.commands.benchmark import benchmark
def walk(group, prefix):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            walk(command, prefix + name + " ")
        else:
            print(prefix + name)
walk(benchmark, "")
"""


def _commands() -> set[str]:
    """Every leaf command of the released `vllm-sr benchmark` group."""
    out = subprocess.run([str(upstream_python()), "-c", WALK], capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split("\n")) - {""}


def test_the_command_table_is_the_cli_and_the_suite() -> None:
    rows = [r.removeprefix("vllm-sr benchmark ") for r in _rows("## Every `vllm-sr benchmark` command")]
    assert len(rows) == len(set(rows)), "a command is listed twice"
    assert set(rows) == set(COVERED) | set(NOT_RUN), (
        f"listed, not driven by tests/upstream: {sorted(set(rows) - set(COVERED) - set(NOT_RUN))}; "
        f"driven, not listed: {sorted(set(COVERED) - set(rows))}")
    named = {" ".join(w for w in r.split() if re.fullmatch(r"[a-z][a-z-]*", w)) for r in rows}
    real = _commands()
    assert named == real, f"not in the table: {sorted(real - named)}; not upstream's: {sorted(named - real)}"


def _route(method: str, path: str) -> str:
    segments = ["{id}" if s.startswith("{") or re.fullmatch(r"(run|prep|exp)-[0-9a-f]+|[0-9a-f]{64}|not-a-dataset", s)
                else s for s in path.split("?")[0].split("/")]
    return f"{method} {'/'.join(segments)}"


def test_the_http_table_is_the_replayed_exchanges() -> None:
    rows = _rows("The HTTP calls of upstream's Dashboard and client")
    exchanges = json.loads((ROOT / "tests" / "service" / "upstream_wire.json").read_text())["exchanges"]
    replayed = {_route(e["method"], e["path"]) for e in exchanges}
    assert len(rows) == len(set(rows)) and set(rows) == replayed, (
        f"not in the table: {sorted(replayed - set(rows))}; not replayed: {sorted(set(rows) - replayed)}")
