"""A store path with a space or a non-ASCII letter (`--store "my store"`): every command sr-bench prints for the
user to copy (stop the service it started, stop a lock's holder, the demo's `export SR_BENCH_STORE=…`) is shell-
quoted, so pasting it names that store. They printed `sr-bench --store /tmp/my store stop`, which the shell splits
into `--store /tmp/my` and a stray argument. Also: a dataset `--output` path under a file is one line naming it."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
from pathlib import Path

import pytest
from rich.console import Console

from srbench.cli.demo import next_steps
from srbench.errors import InvalidInput
from srbench.service.app import StoreLock

from .conftest import cli_env, run_cli


def _pasted(text: str) -> list[str]:
    """The words of the one `sr-bench …` command quoted in backticks in `text`, as a shell splits them."""
    commands = re.findall(r"`(sr-bench [^`]*)`", text)
    assert len(commands) == 1, text
    return shlex.split(commands[0])


def test_the_stop_hint_of_an_autostarted_service_names_a_spaced_store(tmp_path: Path) -> None:
    store, env = tmp_path / "my störe", cli_env(SR_BENCH_PORT="0")
    started = run_cli(["--store", str(store), "runs", "--json"], tmp_path, env)
    pid = int((store / "service.lock").read_text())
    try:
        assert started.returncode == 0, started.stderr
        words = _pasted(started.stderr)
        assert words == ["sr-bench", "--store", str(store), "stop"], words
        stopped = run_cli(words[1:], tmp_path, env)           # the hint, pasted
        assert stopped.returncode == 0 and "service stopping" in stopped.stdout, stopped.stderr
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def test_the_lock_holders_hint_names_a_spaced_store(tmp_path: Path) -> None:
    store = tmp_path / "a store"
    held = StoreLock(store)
    try:
        with pytest.raises(InvalidInput) as refused:
            StoreLock(store)
        assert _pasted(refused.value.message) == ["sr-bench", "--store", str(store), "stop"]
    finally:
        held.release()


def test_the_demos_next_steps_name_a_spaced_store(tmp_path: Path) -> None:
    out = io.StringIO()
    store = tmp_path / "demo dir" / "store"
    next_steps(Console(file=out, width=200), store, {"baseline": "run-" + "a" * 20, "candidate": "run-" + "b" * 20})
    export = next(line for line in out.getvalue().splitlines() if "export" in line)
    assert shlex.split(export) == ["export", f"SR_BENCH_STORE={store}"]


def test_dataset_output_under_a_file_names_the_file_in_the_way(tmp_path: Path) -> None:
    """`dataset prepare --output arc.json/x.json` (arc.json a file) said 'File exists: …/arc.json (check the paths
    given: --store, files, directories)': it is a file where --output needs a directory."""
    from srbench.cas import sha256_bytes
    from srbench.cli.datasets import write_dataset

    (tmp_path / "arc.json").write_text("{}")
    data = b'{"id": "c1"}\n'
    manifest = {"id": "ds-x", "sha256": sha256_bytes(data)}
    with pytest.raises(InvalidInput) as refused:
        write_dataset(manifest, data, tmp_path / "arc.json" / "x.json")
    assert refused.value.message == (
        f"--output {tmp_path / 'arc.json' / 'x.json'}: cannot write x.jsonl there: a file is where a directory "
        f"should be ({tmp_path / 'arc.json'}); give --output a path in a writable directory")
    assert (tmp_path / "arc.json").read_text() == "{}"


def test_a_wrong_token_for_a_running_stores_service_says_so(tmp_path: Path) -> None:
    """SR_BENCH_TOKEN set to another store's token: the store's running service refused it, the CLI took that for
    no service, tried to start one and said 'another sr-bench service already owns the store … stop it'."""
    store, env = tmp_path / "store", cli_env(SR_BENCH_PORT="0")
    assert run_cli(["--store", str(store), "runs", "--json"], tmp_path, env).returncode == 0
    pid = int((store / "service.lock").read_text())
    try:
        wrong = run_cli(["--store", str(store), "runs", "--json"], tmp_path, {**env, "SR_BENCH_TOKEN": "x" * 43})
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
        assert wrong.stderr.startswith(f"error: the service of the store {store} (at http") and \
            f"pid {pid}) refuses the token in SR_BENCH_TOKEN: it is not this store's; unset SR_BENCH_TOKEN" in \
            wrong.stderr, wrong.stderr
        no_token = run_cli(["--url", "http://127.0.0.1:9", "runs"], tmp_path, env)
        assert no_token.stderr == ("error: --url / SR_BENCH_URL names a service but SR_BENCH_TOKEN is not set: "
                                   "export the service's token privately (its file is <store>.service-token "
                                   "beside its store)\n"), no_token.stderr
    finally:
        os.kill(pid, signal.SIGTERM)


def test_stop_or_no_autostart_on_a_store_never_started_makes_nothing(tmp_path: Path) -> None:
    """`sr-bench --store never stop` answered 'nothing to stop' and left never.service-token behind."""
    store, env = tmp_path / "never", cli_env()
    stopped = run_cli(["--store", str(store), "stop", "--json"], tmp_path, env)
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopping"] is False, stopped.stderr
    refused = run_cli(["--store", str(store), "--no-autostart", "runs"], tmp_path, env)
    assert refused.returncode == 2 and refused.stderr == f"error: no sr-bench service is running for the store {store}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
