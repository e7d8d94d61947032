"""The operator's first hour (issue 40, items 1–4): the simulated endpoints in the foreground, why a run
failed, the plan's warnings before a raw manifest spends, and keys exported in the shell.

Terminal output is read on a real 80-column pseudo-terminal; endpoints are the simulator on loopback.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import httpx
from tests.integration.conftest import Cli
from tests.integration.test_cli_terminal import ANSI, on_tty

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread


def _read_until(master: int, needle: str, timeout: float) -> str:
    seen, deadline = b"", time.monotonic() + timeout
    while needle.encode() not in seen and time.monotonic() < deadline:
        try:
            seen += os.read(master, 65536)
        except OSError:
            break
    return ANSI.sub("", seen.decode("utf-8", "replace")).replace("\r\n", "\n")


def test_simulate_serves_in_the_foreground_prints_targets_and_stops_on_ctrl_c(cli: Cli) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 80, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "simulate", "--port", "0"], cwd=cli.cwd,
                            env={**cli.env, "TERM": "xterm-256color"}, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        text = _read_until(master, "Ctrl-C stops", 60)
        targets = json.loads(text[:text.index("SIMULATED ENDPOINTS")])
        assert [t["id"] for t in targets] == ["large", "small", "mom", "judge"]
        mom = targets[2]
        assert mom["preview_url"] == mom["base_url"] + "/preview" and mom["models"] == ["sim-large", "sim-small"]
        assert targets[0]["prices"]["sim-large"]["output"] == 15.0           # the demo's prices
        assert "serving at http://127.0.0.1:" in text
        cli.json("target", "register", "--file", cli.write("targets.json", targets))   # they register as printed
        proc.send_signal(signal.SIGINT)                                      # Ctrl-C
        rest = _read_until(master, "simulator stopped", 30)
        assert proc.wait(timeout=30) == 0
        assert "simulator stopped (0 calls answered)" in rest and "Traceback" not in rest
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_simulate_output_file_appears_once_it_serves_and_sigterm_stops_it(cli: Cli) -> None:
    out = cli.cwd / "targets.json"
    out.write_text("stale")
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "simulate", "--port", "0", "--output",
                             str(out)], cwd=cli.cwd, env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out.is_file() and out.read_text().startswith("[")):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        url = json.loads(out.read_text())[0]["base_url"]
        assert httpx.get(url + "/models", timeout=10).json()["data"][0]["id"] == "sim-large"
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0 and stdout == "" and "simulator stopped" in stderr


PRICE = {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}
KEY = "sk-first-hour-" + "5e1d" * 6


def _dataset(cli: Cli, sources: dict[str, Path]) -> dict[str, str]:
    return cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                    "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)


def _manifest(cli: Cli, ds: dict[str, str], ids: list[str], **more: object) -> str:
    return cli.write("m.json", {"version": "sr-bench-1.0", "name": "first hour", "profile": "smoke",
                                "seed": 20260918, "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                                "targets": [{"id": i} for i in ids], **more})


def _single(tid: str, url: str, model: str = "big", **more: object) -> dict[str, object]:
    return {"id": tid, "kind": "single", "base_url": url, "model": model, "prices": {model: PRICE}, **more}


def test_a_failed_run_says_why_per_target_and_plan_probes_first(cli: Cli, sources: dict[str, Path]) -> None:
    """Closed port, wrong path, wrong model, wrong key: `plan` says each in one line before anything is sent,
    and `run` ends with each target's failure classes, counts, first message and what to check."""
    cli.env.update(FH_KEY="not-the-key", FH_GOOD=KEY)             # in the shell that starts the service
    ds = _dataset(cli, sources)
    with SimulatorThread(models=[SimModel("big", skill=0.9)], answer_key={}, api_key=KEY) as sim:
        cli.json("target", "register", "--file", cli.write("targets.json", [
            _single("good", sim.v1_url, api_key_env="FH_GOOD"),
            _single("closed", "http://127.0.0.1:9/v1"),
            _single("path", sim.url + "/v2", api_key_env="FH_GOOD"),
            _single("model", sim.v1_url, "nope", api_key_env="FH_GOOD"),
            _single("key", sim.v1_url, api_key_env="FH_KEY")]))
        manifest = _manifest(cli, ds, ["good", "closed", "path", "model", "key"])
        proc = cli.run("plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
        assert sim.log == []                                     # the probe sends no prompt
        warned = [w for w in proc.stderr.splitlines() if w.startswith("warning: target ")]
        assert len(warned) == 4, proc.stderr
        assert "warning: target closed: connection refused at http://127.0.0.1:9/v1 — is the endpoint running" \
            in proc.stderr
        assert f"warning: target path: HTTP 404 at {sim.url}/v2/models — wrong path?" in proc.stderr
        assert "warning: target model: the model 'nope' is not among the 1 model(s)" in proc.stderr
        assert f"warning: target key: HTTP 401 at {sim.v1_url} — key? the key in FH_KEY was refused" in proc.stderr
        code, out, err = on_tty(cli, "run", "--manifest", str(cli.cwd / "frozen.json"))
    assert code == 1 and "Traceback" not in err
    lines = err.splitlines()
    for tid, cls, hint in (("closed", "connect_error", "connection refused at http://127.0.0.1:9/v1"),
                           ("path", "http_404", f"HTTP 404 at {sim.url}/v2/chat/completions — wrong path?"),
                           ("model", "http_404", f"{sim.v1_url} does not serve the model 'nope'"),
                           ("key", "http_401", f"HTTP 401 at {sim.v1_url} — key? the key in FH_KEY was refused")):
        head = lines.index(next(line for line in lines if line.startswith(f"target {tid}: ")))
        assert lines[head].startswith(f"target {tid}: 2 cell(s) failed"), err
        assert lines[head + 1].startswith(f"  2 × {cls}: {hint}"), lines[head + 1]
        assert "— first: " in lines[head + 1]
    assert not any(line.startswith("target good: ") for line in lines)
    assert KEY not in out + err
    run_id = json.loads(cli.run("runs").stdout)["runs"][0]["id"]
    code, _, shown = on_tty(cli, "show", run_id)                 # `show` on a terminal says it too
    assert code == 0 and "  2 × connect_error: connection refused at http://127.0.0.1:9/v1" in shown
    assert "(not_found)" in cli.json("runs")["runs"][0]["error"]          # not labelled unknown_model


def test_run_on_a_raw_manifest_warns_as_plan_does_and_refuses_on_money(cli: Cli, sources: dict[str, Path]) -> None:
    ds = _dataset(cli, sources)
    with SimulatorThread(models=[SimModel("big", skill=0.9), SimModel("tiny", skill=0.2)], answer_key={}) as sim:
        cli.json("target", "register", "--file", cli.write("targets.json", [
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "models": ["big", "tiny"],
             "config_hash": sim.server.router.config_hash, "max_inference_calls": 1,
             "prices": {"big": PRICE, "tiny": PRICE}}]))
        # a blocked claim is not about money: warned as plan warns, then the run goes on
        code, out, err = on_tty(cli, "run", "--manifest", _manifest(cli, ds, ["mom"]))
        assert code == 0, err
        assert "warning: target mom: its claim will be blocked — no preview_url" in err
        assert err.index("warning: target mom") < err.index("completed")
        served = len(sim.log)
        assert served > 0
        # a cap the estimate exceeds is about money: refused before anything is sent, pointing at plan
        raw = _manifest(cli, ds, ["mom"], limits={"max_cost_usd": 0.000001})
        code, out, err = on_tty(cli, "run", "--manifest", raw)
        assert code == 2 and len(sim.log) == served, err
        [line] = err.strip().splitlines()[-1:]
        assert line.startswith("error: the upper cost estimate") and "is above limits.max_cost_usd" in line
        assert f"`sr-bench plan --manifest {raw} --output frozen.json`" in line
        assert "warning: target mom: its claim will be blocked" in err
        # frozen by plan (its warnings reviewed), the same manifest is submitted (its cap then holds the spend)
        cli.run("plan", "--manifest", raw, "--output", str(cli.cwd / "frozen.json"))
        proc = cli.run("run", "--manifest", str(cli.cwd / "frozen.json"), ok=False)
        assert proc.returncode != 2 and json.loads(proc.stdout)["run_id"], proc.stderr


def test_a_key_exported_after_the_service_started_says_why_once_and_env_set_fixes_it(
        cli: Cli, sources: dict[str, Path]) -> None:
    cli.env.pop("FH_SHARED", None)
    ds = _dataset(cli, sources)                                  # starts the service without FH_SHARED
    with SimulatorThread(models=[SimModel("big", skill=0.9), SimModel("tiny", skill=0.2)], answer_key={},
                         api_key=KEY) as sim:
        targets = cli.write("targets.json", [_single("a", sim.v1_url, api_key_env="FH_SHARED"),
                                             _single("b", sim.v1_url, "tiny", api_key_env="FH_SHARED")])
        reg = cli.run("target", "register", "--file", targets)     # said beforehand, once for both targets
        [warn] = [w for w in reg.stderr.splitlines() if w.startswith("warning:")]
        assert "FH_SHARED (targets a, b) is set neither in this shell nor in the service's environment" in warn
        assert "`sr-bench env set FH_SHARED`" in warn
        cli.env["FH_SHARED"] = KEY                                # exported now, after the service started
        manifest = _manifest(cli, ds, ["a", "b"])
        code, out, err = on_tty(cli, "run", "--manifest", manifest)
        assert code == 2 and sim.log == [], err
        [line] = [x for x in err.splitlines() if "FH_SHARED" in x]          # once per name, not per target
        env_file = cli.cwd / ".sr-bench" / "default" / "store.env"
        assert line == (f"error: FH_SHARED (targets a, b) is exported in this shell, but the service started before "
                        "it and keeps the environment it started with: run `sr-bench env set FH_SHARED` (writes it "
                        f"to {env_file}, mode 600; read before the next plan or run, no restart)")
        proc = cli.run("env", "set", "FH_SHARED")
        assert KEY not in proc.stdout + proc.stderr and "written to" in proc.stderr
        assert env_file.stat().st_mode & 0o777 == 0o600 and f"FH_SHARED='{KEY}'" in env_file.read_text()
        code, out, err = on_tty(cli, "run", "--manifest", manifest)       # the same service, no restart
        assert code == 0, err
        assert [e["status"] for e in sim.log] == [200] * 4
    assert KEY not in out + err


def test_env_set_writes_keys_only(cli: Cli) -> None:
    """`env set` holds keys and credentials: a name that changes how the service and its programs run (PATH,
    LD_PRELOAD, PYTHONPATH, SR_BENCH_TOKEN…) or is not a short variable name is one line, before any value is
    asked for, and no env file is written."""
    for name, says in (("PATH", "PATH changes how the service and its programs run"),
                       ("LD_PRELOAD", "LD_PRELOAD changes how"), ("PYTHONPATH", "PYTHONPATH changes how"),
                       ("SR_BENCH_TOKEN", "SR_BENCH_TOKEN changes how"), ("A" * 5000, "is not a variable name"),
                       ("1KEY", "is not a variable name")):
        proc = cli.run("env", "set", name, ok=False)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
        assert len(proc.stderr) < 400
    assert not list(cli.cwd.rglob("*.env"))
