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

import httpx
from tests.integration.conftest import Cli
from tests.integration.test_cli_terminal import ANSI


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
