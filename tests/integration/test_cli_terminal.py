"""The operator's terminal (issue 29): a person on a terminal gets tables and sentences, a pipe gets the
same JSON as always; run ids are taken by any unique prefix; catalog and setup agree.

Human output is read on a real pseudo-terminal (80 columns) and compared with what a pipe gets.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from tests.integration.conftest import Cli

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.simulate.behaviour import SimModel
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def drain(master: int) -> bytes:
    """Everything written to a pseudo-terminal's other end until it closes."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def on_tty(cli: Cli, *args: str, cols: int = 80, timeout: float = 120) -> tuple[int, str, str]:
    """Run `sr-bench ARGS` with stdout on a pseudo-terminal of `cols` columns: (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    env = {**cli.env, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    err = cli.cwd / "tty-stderr.txt"
    with open(err, "wb") as ef:
        proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", *args], cwd=cli.cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=ef)
        os.close(slave)
        chunks = [drain(master)]
        code = proc.wait(timeout=timeout)
    os.close(master)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    return code, text, err.read_text()


def assert_whole_intervals(text: str) -> None:
    """At 80 columns no interval is split across lines: each "[number" closes on its line, and each "number]"
    opened on it (a header such as "Δ [95% Hoeffding]" may wrap between its words)."""
    for line in text.splitlines():
        assert width(line) <= 80, text
        for m in re.finditer(r"\[[-+]?\d+\.\d", line):
            assert "]" in line[m.end():], line
        for m in re.finditer(r"\d\.\d+\]", line):
            assert "[" in line[:m.start()], line


def width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.fixture
def two_runs(cli: Cli, sources: dict[str, Path]) -> Any:
    """A store with two finished runs (one single-model target each) on the real ARC-AGI-2 smoke set."""
    m = cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                 "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    with SimulatorThread(models=[SimModel("big", skill=0.9)], answer_key={}) as sim:
        cli.json("target", "register", "--file", cli.write("targets.json", [
            {"id": "big", "kind": "single", "base_url": sim.v1_url, "model": "big",
             "prices": {"big": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}}]))
        manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "a run with a long name to wrap on a "
                                        "narrow terminal", "profile": "smoke", "seed": 20260918,
                                        "dataset": {"path": m["path"], "sha256": m["sha256"]},
                                        "targets": [{"id": "big"}]})
        cli.json("plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
        ids = [cli.json("run", "--manifest", str(cli.cwd / "frozen.json"))["run_id"] for _ in range(2)]
    return ids


def test_runs_show_report_on_a_terminal_and_on_a_pipe(cli: Cli, two_runs: list[str]) -> None:
    code, out, _ = on_tty(cli, "runs")
    assert code == 0 and width(out) <= 80
    for rid in two_runs:                      # whole ids, never "run-5f…"
        assert rid in out
    assert "…" not in out and not out.lstrip().startswith("{")
    piped = cli.json("runs")                  # a pipe: JSON, the service's answer
    assert [r["id"] for r in piped["runs"]] == two_runs[::-1]
    assert json.loads(cli.run("runs", "--json").stdout) == piped
    code, out, _ = on_tty(cli, "runs", "--json")
    assert json.loads(out) == piped

    code, out, _ = on_tty(cli, "show", two_runs[0])
    assert code == 0 and f"sr-bench report {two_runs[0]}" in out and "status completed" in out
    assert cli.json("show", two_runs[0])["id"] == two_runs[0]
    code, out, _ = on_tty(cli, "report", two_runs[0])
    assert code == 0 and "big" in out and not out.lstrip().startswith("{")
    assert cli.json("report", two_runs[0])["run_id"] == two_runs[0]
    calls = cli.json("show", two_runs[0], "--calls")["calls"]
    code, out, _ = on_tty(cli, "show", two_runs[0], "--calls")
    assert code == 0 and width(out) <= 80 and all(c["id"] in out for c in calls)
    assert all(c["case_id"] in out for c in calls)              # case ids whole too (cut mid-id before)
    [ds] = cli.json("dataset", "list")["datasets"]
    code, out, _ = on_tty(cli, "dataset", "list")
    assert code == 0 and width(out) <= 80 and ds["ref"] in out      # the short ds- id; `dataset show` takes either


def test_a_run_id_by_any_unique_prefix(cli: Cli, two_runs: list[str]) -> None:
    a, b = two_runs
    n = next(i for i in range(5, 25) if a[:i] != b[:i])
    assert cli.json("show", a[:n])["id"] == a                       # unique: resolves
    assert cli.json("show", a[4:n])["id"] == a                      # the "run-" may be left out
    assert cli.json("report", a[:n])["run_id"] == a
    amb = cli.run("show", "run-", ok=False)                         # ambiguous: one line naming both
    assert amb.returncode == 2 and amb.stderr.count("\n") == 1 and "ambiguous" in amb.stderr
    assert a in amb.stderr and b in amb.stderr and "Traceback" not in amb.stderr
    none = cli.run("report", "run-zzzz", ok=False)                  # none: one line
    assert none.returncode == 2 and none.stderr.count("\n") == 1 and "no run id starts with 'run-zzzz'" in none.stderr


def test_catalog_and_setup_agree_and_say_what_is_missing(cli: Cli) -> None:
    cli.env.update({"SR_BENCH_SANDBOX_DIR": str(cli.cwd / "no-sandbox"), "DOCKER_HOST": "unix:///nonexistent"})
    code, cat, _ = on_tty(cli, "catalog")
    assert code == 0 and width(cat) <= 80
    _, setup, _ = on_tty(cli, "setup")
    assert width(setup) <= 80
    piped = json.loads(cli.run("setup", ok=False).stdout)              # JSON on a pipe, as before
    assert json.loads(cli.run("catalog").stdout)["benchmarks"][0]["id"] == "mmlu-pro"
    rows = {line.split()[0]: line for line in cat.splitlines() if line.split() and line.split()[0] in
            {b["benchmark"] for b in piped["benchmarks"]}}
    assert len(rows) == 9
    for b in piped["benchmarks"]:
        if "missing:" in rows[b["benchmark"]]:            # what the catalog says is missing here, setup says too
            assert not b["ready"], b
    lcb = next(b for b in piped["benchmarks"] if b["benchmark"] == "livecodebench")
    assert not lcb["ready"]                             # no sandbox here: both say so, one line each
    assert "missing: a code-grading" in rows["livecodebench"]
    row = next(line for line in setup.splitlines() if line.startswith("livecodebench"))
    assert " no " in row and "code-grading sandbox" in row


def test_report_on_a_terminal_answers_does_routing_pay(cli: Cli, sources: dict[str, Path]) -> None:
    """A run with a router and a single model: `report` on a terminal gives the headline (Δ with interval and
    claim word, evidence, savings in three scopes, model mix, latency) and per-benchmark rows — the facts
    answer.py computes from the comparison the Dashboard's panel reads."""
    from srbench.cli.answer import routing_facts
    from srbench.simulate.behaviour import RouterRule

    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                 "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    price = {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}
    router = RouterRule(strong="big", weak="tiny", long_prompt_chars=400)
    with SimulatorThread(models=[SimModel("big", skill=0.9), SimModel("tiny", skill=0.3)], answer_key={},
                         router=router) as sim:
        cli.json("target", "register", "--file", cli.write("targets.json", [
            {"id": "big", "kind": "single", "base_url": sim.v1_url, "model": "big", "prices": {"big": price}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "models": ["big", "tiny"],
             "config_hash": sim.server.router.config_hash, "max_inference_calls": 1,
             "preview_url": sim.router_url + "/preview", "prices": {"big": price, "tiny": {**price, "input": 0.1, "output": 0.2}}}]))
        manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "router", "profile": "smoke",
                                        "seed": 20260918, "dataset": {"path": m["path"], "sha256": m["sha256"]},
                                        "targets": [{"id": "big"}, {"id": "mom"}]})
        cli.json("plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
        rid = cli.json("run", "--manifest", str(cli.cwd / "frozen.json"))["run_id"]
    code, out, err = on_tty(cli, "report", rid[:12])
    assert code == 0, err
    flat = " ".join(out.split())
    facts = routing_facts(cli.json("compare", rid))[0]
    assert f"Does routing pay? mom vs big (the strongest single model of this run): {facts.claim.upper()}" in flat, out
    # a new plan claims by betting (issue 28)
    assert f"Δ macro quality {facts.delta:+.3f}" in flat and "95% paired betting interval" in flat, out
    assert "evidence: dev" in flat and "cost saving: principal (model calls)" in flat
    assert "total (with judge/simulator calls)" in flat and "cache-neutral" in flat
    assert "model mix:" in flat and "latency p50/p95: mom" in flat, out
    assert "per benchmark: mom − big" in flat and "mmlu-pro" in flat and facts.benchmarks[0].benchmark == "mmlu-pro"
    assert rid in out                                                    # ids whole
    assert_whole_intervals(out)                                          # issue 40: "0.57 [0.33," / "0.79]" no more
    assert json.loads(cli.run("report", rid).stdout)["run_id"] == rid     # the pipe: JSON as before
    # the comparison table at 80 columns: headers wrap between words, never inside one ("hoeffd / ing")
    code, out, err = on_tty(cli, "compare", rid)
    assert code == 0, err
    assert_whole_intervals(out)
    words = set(out.split())
    assert {"hoeffding", "claim", "W/L/T", "quality"} <= words and "cache-neutral" in " ".join(out.split()), out
    # issue 43: the diagnose section on a terminal and in the JSON; the router's "tiny" is no single of the run, so
    # any case it served is counted and named apart from the optimality figures, never dropped
    code, out, err = on_tty(cli, "compare", rid, "--diagnose")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "diagnose: the routers of run" in flat and "oracle ceiling" in flat and "optimality (RouterArena)" in flat
    d = cli.json("compare", rid, "--diagnose")["diagnose"]
    op = d["routers"][0]["optimality"]
    tiny = op["cases_elsewhere"]
    assert op["elsewhere_models"] == ({"tiny": tiny} if tiny else {}) and len(op["elsewhere_cases"]) == tiny, op
    assert op["cases_in_pool"] + tiny == d["cases"] and (f"elsewhere: tiny ×{tiny}" if tiny else "elsewhere: none") in flat


def test_plan_warns_before_money_is_spent(cli: Cli, sources: dict[str, Path]) -> None:
    """The frozen plan is written all the same; each warning is one line on stderr, stdout stays JSON."""
    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                 "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    price = {"input": 100.0, "cached_input": 50.0, "cache_write": 100.0, "output": 200.0}
    cli.json("target", "register", "--file", cli.write("targets.json", [
        {"id": "mom", "kind": "mom", "base_url": "http://127.0.0.1:9/v1", "model": "MoM",
         "config_hash": "h1", "max_inference_calls": 1, "prices": {"big": price}}]))
    manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "warn", "profile": "smoke", "seed": 20260918,
                                    "dataset": {"path": m["path"], "sha256": m["sha256"]},
                                    "targets": [{"id": "mom"}], "limits": {"max_cost_usd": 0.01}})
    proc = cli.run("plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert any("target mom: its claim will be blocked — no preview_url" in w for w in warnings), proc.stderr
    assert any("declares no model pool (models)" in w for w in warnings), proc.stderr
    assert any("is above limits.max_cost_usd 0.01 USD" in w for w in warnings), proc.stderr
    assert json.loads(proc.stdout)["total"] == 14 and (cli.cwd / "frozen.json").is_file()


def test_report_while_the_run_goes_shows_the_figures_so_far(cli: Cli, sources: dict[str, Path]) -> None:
    """Issue 41: `report` on a terminal while the run goes prints its figures so far (GET /runs/{id}/live, kept
    up as cells finish), never a report rebuilt from every cell; a pipe still gets the report's JSON."""
    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                 "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    with SimulatorThread(models=[SimModel("slow", skill=0.9, latency_s=0.5)], answer_key={}) as sim:
        cli.json("target", "register", "--file", cli.write("targets.json", [
            {"id": "slow", "kind": "single", "base_url": sim.v1_url, "model": "slow"}]))
        manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "slow", "profile": "smoke", "seed": 20260918,
                                        "cost_policy": "capability_only",
                                        "dataset": {"path": m["path"], "sha256": m["sha256"]}, "targets": [{"id": "slow"}],
                                        "limits": {"concurrency": 1}})
        cli.json("plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
        rid = cli.json("run", "--manifest", str(cli.cwd / "frozen.json"), "--detach")["run_id"]
        code, out, err = on_tty(cli, "report", rid)
        assert code == 0, err
        flat = " ".join(out.split())
        assert "figures so far" in flat and "of 14 cells answered" in flat and "slow (single)" in flat, out
        assert "Does routing pay?" not in flat
        assert json.loads(cli.run("report", rid).stdout)["run_id"] == rid      # the pipe: the report, as before
