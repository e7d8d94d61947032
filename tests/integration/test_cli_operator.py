"""The operator's first hour (issue 40, items 5–7; items 1–4: test_cli_first_hour.py): what a new user trips over around the commands.

A store that cannot be written is named as such; ids are echoed whole; every command prints JSON on a
pipe; a manifest names its dataset by the file `dataset prepare` wrote, its ref or id, or its sha256.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import Cli
from tests.integration.test_cli_terminal import two_runs  # noqa: F401 - the fixture

from srbench.benchmarks.arc_agi_2 import ArcAgi2


def test_a_store_that_cannot_be_written_is_named(cli: Cli) -> None:
    for extra in ((), ("--embedded",)):
        r = cli.run("--store", "/proc/srbench", *extra, "runs", ok=False)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("error: the store /proc/srbench cannot be written here") and "--store" in r.stderr
        assert "service-token" not in r.stderr


def test_export_and_regrade_echo_the_whole_id(cli: Cli, two_runs: list[str]) -> None:  # noqa: F811
    rid = two_runs[0]
    n = next(i for i in range(5, 25) if rid[:i] != two_runs[1][:i])
    assert cli.json("export", rid[:n], "--output", str(cli.cwd / "x.json"))["run_id"] == rid
    assert cli.json("regrade", rid[:n], "--output", str(cli.cwd / "r.json"))["run_id"] == rid


def test_store_verify_prints_json_on_a_pipe(cli: Cli) -> None:
    answer = json.loads(cli.run("store", "verify").stdout)
    assert answer["ok"] is True and answer["problems"] == 0


def _arc(cli: Cli, sources: dict[str, Path]) -> dict:
    return cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke", "--source-path",
                    str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision,
                    "--output", str(cli.cwd / "arc.json"))
