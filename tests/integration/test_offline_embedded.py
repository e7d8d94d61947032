"""The CLI on a fresh offline machine (issue 7 item 5) and `--embedded` (one command, one in-process
service, nothing left behind; refused while another service owns the store)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from tests.service.helpers import free_port, processes_under

from srbench.benchmarks.arc_agi_2 import ArcAgi2

from .conftest import Cli


def _offline_env() -> dict[str, str]:
    """Every proxy variable points at a closed loopback port; loopback itself goes direct."""
    closed = f"http://127.0.0.1:{free_port()}"
    return {"HTTPS_PROXY": closed, "HTTP_PROXY": closed, "ALL_PROXY": closed, "https_proxy": closed,
            "http_proxy": closed, "all_proxy": closed, "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost"}


def test_fresh_offline_machine_prepares_arc_quick(tmp_path: Path) -> None:
    """`sr-bench dataset prepare --benchmark arc-agi-2 --profile quick` with no network and no cache."""
    cli = Cli(tmp_path, env=_offline_env())
    try:
        m = cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "quick")
    finally:
        cli.run("stop", ok=False)
    rec = m["sources"]["arc-agi-2"]
    assert (rec["origin"], rec["revision"], m["case_count"]) == ("package", ArcAgi2.source.revision, 12)
    assert not (tmp_path / "home" / "sources" / "arc-agi-2" / ArcAgi2.source.revision / "data").exists()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc to list processes")
def test_embedded_runs_one_command_and_leaves_nothing_behind(tmp_path: Path) -> None:
    cli = Cli(tmp_path, env=_offline_env())
    store = tmp_path / ".sr-bench" / "default" / "store"
    out = cli.run("--embedded", "dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                  "--source", "mirror", "--output", "datasets/arc-smoke.json")
    printed = json.loads(out.stdout)
    written = json.loads((tmp_path / "datasets" / "arc-smoke.json").read_text())
    assert printed == written and written["path"] == "arc-smoke.jsonl"
    data = (tmp_path / "datasets" / "arc-smoke.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == written["sha256"] and len(data.splitlines()) == 2
    assert "started the service" not in out.stderr
    assert not (store / "service.json").exists()
    assert processes_under(tmp_path) == []
    # the same command again is the same manifest (and the store now holds it)
    again = cli.run("--embedded", "dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                    "--source", "mirror", "--output", "datasets/arc-smoke.json")
    assert json.loads(again.stdout) == written

    bad = cli.run("--embedded", "run", "--manifest", "frozen.json", "--detach", ok=False)
    assert bad.returncode == 2 and "--detach needs a service that outlives the command" in bad.stderr

    cli.run("dataset", "list")                                   # a background service now owns the store
    try:
        info = json.loads((store / "service.json").read_text())
        for args, env in ((["--embedded"], {}), ([], {"SR_BENCH_EMBEDDED": "1"})):
            cli.env.update(env)
            refused = cli.run(*args, "dataset", "list", ok=False)
            cli.env.pop("SR_BENCH_EMBEDDED", None)
            assert refused.returncode == 2, refused.stderr
            line = refused.stderr.strip()
            assert "another sr-bench service owns the store" in line and info["url"] in line
            assert "\n" not in line and "Traceback" not in line
        assert json.loads((store / "service.json").read_text()) == info   # the owner is untouched
    finally:
        cli.run("stop", ok=False)
    deadline = time.monotonic() + 10
    while processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    listed = cli.run("--embedded", "dataset", "list")
    assert "arc-agi-2/smoke" in listed.stdout
    assert processes_under(tmp_path) == []


def test_embedded_output_reads_a_non_local_object_store(tmp_path: Path) -> None:
    """With objects on a non-file backend the manifest's path is not a file here; --embedded reads the bytes
    from its own in-process store instead."""
    cli = Cli(tmp_path, env={**_offline_env(), "SR_BENCH_OBJECTS_URL": "memory://sr-bench-embedded"})
    m = cli.json("--embedded", "dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                 "--source", "mirror", "--output", "out/arc.json")
    data = (tmp_path / "out" / "arc.jsonl").read_bytes()
    assert m["path"] == "arc.jsonl" and hashlib.sha256(data).hexdigest() == m["sha256"]
