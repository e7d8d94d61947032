"""Many stores on one host (SVC-2): each store's service takes the default port if free, else a free
one; it records where it listens in the store's service.json and the CLI finds it there."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from tests.integration.conftest import Cli
from tests.service.helpers import free_port


def test_a_second_store_gets_its_own_port_and_is_found(tmp_path: Path) -> None:
    base = free_port()
    env = {"SR_BENCH_PORT": "", "SR_BENCH_PORT_OFFSET": str(base - 8090)}
    one, two = Cli(tmp_path / "one", env), Cli(tmp_path / "two", env)
    for c in (one, two):
        c.cwd.mkdir()
        c.env.pop("SR_BENCH_PORT")
    try:
        first = one.run("runs")
        assert f"127.0.0.1:{base}" in first.stderr and "sr-bench --store" in first.stderr
        assert first.stderr.count("started the service") == 1
        second = two.run("runs")                       # the default port is taken by the first store
        info_one = json.loads((one.cwd / ".sr-bench/default/store/service.json").read_text())
        info_two = json.loads((two.cwd / ".sr-bench/default/store/service.json").read_text())
        assert info_one["url"] == f"http://127.0.0.1:{base}"
        assert info_two["url"] != info_one["url"] and info_two["store_id"] != info_one["store_id"]
        assert info_two["url"] in second.stderr
        # later commands find each store's own service, and say nothing about starting one
        again = two.run("runs")
        assert "started the service" not in again.stderr
    finally:
        one.run("stop", ok=False)
        two.run("stop", ok=False)


def test_an_explicit_port_that_is_taken_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        cli = Cli(tmp_path)
        proc = cli.run("serve", "--store", str(tmp_path / "s"), "--port", str(port), ok=False, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: cannot listen on 127.0.0.1:{port}: Address already in use; pick another "
                                   "port (--port, or SR_BENCH_PORT; 0 = any free port) or stop what holds it")


def test_a_bad_port_variable_is_one_line(tmp_path: Path) -> None:
    cli = Cli(tmp_path, {"SR_BENCH_PORT": "eighty"})
    proc = cli.run("runs", ok=False, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: SR_BENCH_PORT must be a whole number, got 'eighty'"


def test_a_proxy_in_the_environment_never_carries_loopback_calls(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    cli = Cli(tmp_path, {"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": ""})
    try:
        assert cli.run("runs").returncode == 0
    finally:
        cli.run("stop", ok=False)


def test_a_taken_port_at_autostart_says_error_once_with_a_fix(tmp_path: Path) -> None:
    """Issue 29: the service started for a command cannot listen — one "error:", the reason and the fix."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = Cli(tmp_path, {"SR_BENCH_PORT": str(port)}).run("runs", ok=False, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("error:") == 1, proc.stderr
    assert proc.stderr.strip() == (f"error: the local sr-bench service did not start: cannot listen on 127.0.0.1:{port}: "
                                   "Address already in use; pick another port (--port, or SR_BENCH_PORT; 0 = any free "
                                   "port) or stop what holds it")


def test_a_copied_store_gets_its_own_service_and_never_stops_the_original(tmp_path: Path) -> None:
    """`cp -a project project2` while project's service runs copies the store's service.json and token:
    the copy's commands went to the original's service (a plan frozen "in the copy" landed in the
    original) and `stop` in the copy stopped the original. The service now records its directory's
    identity; a copy is another directory, so it gets its own service."""
    import shutil

    one = Cli(tmp_path / "one")
    one.cwd.mkdir()
    two = Cli(tmp_path / "two")
    try:
        one.run("target", "register", "--file", one.write("t.json", [
            {"id": "only-in-one", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "m"}]))
        shutil.copytree(one.cwd, two.cwd, symlinks=True)      # the store, its service.json and its token
        info_one = json.loads((one.cwd / ".sr-bench/default/store/service.json").read_text())
        assert (two.cwd / ".sr-bench/default/store.service-token").is_file()
        stopped = two.run("stop")
        assert "nothing to stop" in stopped.stdout, stopped.stdout
        assert one.json("target", "list")["targets"][0]["id"] == "only-in-one"      # the original still serves
        assert "started the service" not in one.run("runs").stderr
        two.run("target", "register", "--file", two.write("t2.json", [
            {"id": "only-in-two", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "m"}]))
        info_two = json.loads((two.cwd / ".sr-bench/default/store/service.json").read_text())
        assert info_two["pid"] != info_one["pid"]
        assert [t["id"] for t in one.json("target", "list")["targets"]] == ["only-in-one"]
        assert sorted(t["id"] for t in two.json("target", "list")["targets"]) == ["only-in-one", "only-in-two"]
    finally:
        one.run("stop", ok=False)
        two.run("stop", ok=False)


def _processes_naming(text: str) -> list[int]:
    """Pids of live processes whose command line names `text` (a store's path)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_a_service_the_command_gave_up_waiting_for_is_stopped(tmp_path: Path, monkeypatch) -> None:
    """The autostarted service that did not answer in time kept starting in the background after the command
    said it did not answer (a leftover service serving the store, nobody told); it is stopped, and the one line
    says so and names its log."""
    # deferred: the client is imported by the one test that calls its start directly
    import signal

    import pytest

    from srbench.client.api import start_local_service
    from srbench.errors import ServiceUnavailable

    monkeypatch.setenv("SR_BENCH_PORT", "0")
    store = tmp_path / "store"
    try:
        with pytest.raises(ServiceUnavailable) as err:
            start_local_service(store, "t" * 32, wait_s=0.2)
        assert _processes_naming(str(store)) == []
        assert err.value.message == (
            f"the local sr-bench service did not answer within 0.2 s and was stopped (its log: "
            f"{tmp_path / 'store.service.log'}); try again when the host is less busy, or start it in the "
            f"foreground: `sr-bench serve --store {store}`")
    finally:
        for pid in _processes_naming(str(store)):
            os.kill(pid, signal.SIGKILL)


def test_a_host_that_is_not_this_hosts_is_one_line_with_the_fix(tmp_path: Path) -> None:
    """`serve --host` naming no address of this host said "Unknown error -2" for a name that does not resolve
    (socket.gaierror's errno through os.strerror) and gave no fix for an address of another host."""
    import errno
    import secrets

    from srbench.service.app import _listen_problem

    assert _listen_problem(socket.gaierror(-2, "Name or service not known")) == (
        "Name or service not known (--host is not a name or address of this host); give --host an address of this "
        "host (127.0.0.1, ::1, 0.0.0.0)")
    cli = Cli(tmp_path, {"SR_BENCH_TOKEN": secrets.token_urlsafe(32)})
    proc = cli.run("serve", "--store", str(tmp_path / "s"), "--host", "192.0.2.1", "--insecure", ok=False, timeout=30)
    assert proc.returncode == 2 and proc.stderr == (
        f"error: cannot listen on 192.0.2.1:0: {os.strerror(errno.EADDRNOTAVAIL)}; give --host an address of this "
        "host (127.0.0.1, ::1, 0.0.0.0)\n"), proc.stderr
