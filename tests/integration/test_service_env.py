"""The service's environment, explicit (issue 29, item 4): keys in the env file beside the store reach the
target and nothing else; a missing key or missing object-store credentials say where the service looks
and how to restart it; a private env file only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.integration.conftest import Cli

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.errors import InvalidInput
from srbench.service.store.env_file import credential_fault, parse
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

SECRET = "sk-h29-env-file-secret-7f3a9c"


def _store(cli: Cli) -> Path:
    return cli.cwd / "store"


def _plan(cli: Cli, sources: dict[str, Path], base_url: str) -> str:
    store = str(_store(cli))
    m = cli.json("--store", store, "dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                 "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    cli.json("--store", store, "target", "register", "--file", cli.write("targets.json", [
        {"id": "keyed", "kind": "single", "base_url": base_url, "model": "big", "api_key_env": "H29_FAKE_KEY",
         "prices": {"big": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}}]))
    manifest = cli.write("m.json", {"version": "sr-bench-1.0", "name": "env", "profile": "smoke", "seed": 20260918,
                                    "dataset": {"path": m["path"], "sha256": m["sha256"]}, "targets": [{"id": "keyed"}]})
    cli.json("--store", store, "plan", "--manifest", manifest, "--output", str(cli.cwd / "frozen.json"))
    return str(cli.cwd / "frozen.json")


def test_a_key_in_the_env_file_reaches_the_target_and_nothing_else(cli: Cli, sources: dict[str, Path]) -> None:
    cli.env.pop("H29_FAKE_KEY", None)
    store = _store(cli)
    store.parent.mkdir(parents=True, exist_ok=True)
    env_file = store.parent / "store.env"
    fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, f"# keys for the service\nexport H29_FAKE_KEY=\"{SECRET}\"\n".encode())
    os.close(fd)
    with SimulatorThread(models=[SimModel("big", skill=0.9)], answer_key={}, api_key=SECRET) as sim:
        try:
            frozen = _plan(cli, sources, sim.v1_url)
            proc = cli.run("--store", str(store), "run", "--manifest", frozen)
            assert '"status": "completed"' in proc.stdout, proc.stderr
            served = [e for e in sim.log if e.get("completed")]
            assert served, "the key from the env file reached the target (the simulator refuses any other)"
            assert SECRET not in proc.stdout + proc.stderr
        finally:
            cli.run("--store", str(store), "stop", ok=False)
    for path in cli.cwd.rglob("*"):                  # the store, its log, the frozen plan: no copy of the key
        if path.is_file() and path != env_file:
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_readable_env_file_is_refused_in_one_line(cli: Cli) -> None:
    store = _store(cli)
    store.parent.mkdir(parents=True, exist_ok=True)
    env_file = store.parent / "store.env"
    env_file.write_text(f"H29_FAKE_KEY={SECRET}\n")
    env_file.chmod(0o640)
    proc = cli.run("--store", str(store), "runs", ok=False)
    assert proc.returncode == 2 and proc.stderr.count("error:") == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert f"env file {env_file} is readable by others; chmod 600 it" in proc.stderr
    assert SECRET not in proc.stderr and "Traceback" not in proc.stderr



def test_an_env_file_that_is_not_text_is_one_line_naming_it(cli: Cli) -> None:
    """A non-UTF-8 file and a NUL byte in a value printed Python's exception ('UnicodeDecodeError: …',
    'ValueError: embedded null byte') without the file; now one line names the file and the fix."""
    store = _store(cli)
    store.parent.mkdir(parents=True, exist_ok=True)
    env_file = store.parent / "store.env"
    for content, expected in ((b"A=\xff\xfe\n", "is not UTF-8 text"), (b"OK=1\nA=a\x00b\n", "line 2: a NUL byte")):
        env_file.write_bytes(content)
        env_file.chmod(0o600)
        proc = cli.run("--store", str(store), "runs", ok=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert str(env_file) in proc.stderr and expected in proc.stderr and "Error:" not in proc.stderr

def test_a_missing_key_names_the_service_environment_and_the_fix(cli: Cli, sources: dict[str, Path]) -> None:
    cli.env.pop("H29_FAKE_KEY", None)
    with SimulatorThread(models=[SimModel("big", skill=0.5)], answer_key={}) as sim:
        try:
            frozen = _plan(cli, sources, sim.v1_url)
            proc = cli.run("--store", str(_store(cli)), "run", "--manifest", frozen, ok=False)
        finally:                                    # the service this test started on its own store
            cli.run("--store", str(_store(cli)), "stop", ok=False)
    line = proc.stderr.strip()
    assert proc.returncode == 2 and len(line.splitlines()) == 1, proc.stderr
    assert "H29_FAKE_KEY (target keyed) is set neither in this shell nor in the service's environment" in line
    assert f"`sr-bench env set H29_FAKE_KEY` (writes it to {_store(cli).parent / (_store(cli).name + '.env')}, mode 600" \
        in line                                    # issue 40: the one command that fixes it


def test_missing_object_store_credentials_name_the_variables(cli: Cli) -> None:
    """A pull from S3 with no credentials in the service's environment (a dead loopback endpoint; botocore
    refuses to sign before any connection) is a named one-line error, not 'internal error'."""
    pytest.importorskip("s3fs")
    for k in [k for k in cli.env if k.startswith(("AWS_", "FSSPEC_"))]:
        del cli.env[k]
    cli.env.update({"FSSPEC_S3_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_EC2_METADATA_DISABLED": "true",
                    "HOME": str(cli.cwd), "AWS_CONFIG_FILE": str(cli.cwd / "none"),
                    "AWS_SHARED_CREDENTIALS_FILE": str(cli.cwd / "none")})
    proc = cli.run("--store", str(_store(cli)), "pull", "run-" + "0" * 20, "--remote", "s3://bucket/team", ok=False,
                   timeout=120)
    cli.run("--store", str(_store(cli)), "stop", ok=False)
    line = proc.stderr.strip().splitlines()[-1]              # after the notice that the service was started
    assert proc.returncode == 2 and proc.stderr.count("error:") == 1 and line.startswith("error: "), proc.stderr
    assert "internal error" not in line and "refused the service's credentials" in line, line
    assert "FSSPEC_S3_KEY" in line and "sr-bench stop" in line


def test_env_file_syntax_and_credential_faults() -> None:
    assert parse("A=1\nexport B='x y'\n# c\n\nC=\"q\\\"r\" \nD=v # note\n", Path("f")) == \
        {"A": "1", "B": "x y", "C": 'q"r', "D": "v"}
    # a comment after a quoted value is dotenv (it was refused as "unterminated quote")
    assert parse("A=\"x\" # c\nB='y'   # note\n", Path("f")) == {"A": "x", "B": "y"}
    with pytest.raises(InvalidInput) as after:
        parse('A="x"junk\n', Path("f"))
    assert after.value.message == "f line 1: text after the closing quote (only a # comment may follow)"
    for bad in ("no equals sign", "1A=x", "A='open"):
        with pytest.raises(InvalidInput) as exc:
            parse(f"OK=1\n{bad}\n", Path("f"))
        assert "line 2" in exc.value.message and "open" not in exc.value.message.split("line 2")[1][:3]

    class NoCredentialsError(Exception):
        pass
    wrapped = OSError("boom")
    wrapped.__cause__ = NoCredentialsError("Unable to locate credentials")
    fault = credential_fault(wrapped)
    assert fault is not None and "NoCredentialsError" in fault.message and "AWS_ACCESS_KEY_ID" in fault.message
    assert credential_fault(ValueError("unrelated")) is None
