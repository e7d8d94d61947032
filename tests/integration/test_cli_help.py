"""Every command's `--help` has an Example section (issue 40, item 7), readable whole at 80 columns."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner

from srbench.cli.main import cli


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            out += _commands(sub, (*path, name))
    return out


def test_every_command_help_has_an_example_that_fits_80_columns() -> None:
    paths = _commands(cli)
    assert len(paths) > 40 and ("eval",) in paths and ("retry",) in paths
    missing, wide = [], []
    for path in paths:
        res = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80)
        assert res.exit_code == 0, (path, res.output)
        head = re.search(r"^  Example[^\n]*:\n", res.output, re.M)
        if head is None:
            missing.append(" ".join(path) or "sr-bench")
            continue
        example = res.output[head.start():].split("\n\n", 1)[0]
        wide += [line for line in example.splitlines() if len(line) > 80]
        example = example.split("\n", 1)[1]
        assert all("sr-bench" in line or line.startswith("      ")        # a command (or its continuation)
                   for line in example.splitlines() if line.strip()), (path, example)
    assert not missing, f"commands without an Example in --help: {missing}"
    assert not wide, wide
