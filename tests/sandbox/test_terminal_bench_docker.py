"""Terminal-Bench on a real Docker engine (DOCKER_HOST): task images from local bases only, network-free
limited containers, per-command timeouts, ownership labels and the restart sweep, and whole trials of
the three toy tasks driven by a scripted fake session. Skipped, saying why, without an engine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.fixtures import conversation_record
from benchmarks.tbench_fakes import FakeSession, scripted
from srbench.benchmarks import get
from srbench.benchmarks.sources import read_files
from srbench.benchmarks.terminal_bench.tasks import executable
from srbench.sandbox import task_container as tc
from srbench.simulate.terminal_tasks import SCRIPTS, write_terminal_bench

TB = get("terminal-bench-2.1")


def build(api, base: str, extra: str = "", files: dict[str, bytes] | None = None) -> tc.ImageInfo:
    env = {"Dockerfile": f"FROM {base}\nWORKDIR /app\n{extra}".encode(), **(files or {})}
    return tc.ensure_image(api, env, where="task t", executable=executable, build_timeout_s=120)


def test_images_come_from_local_bases_only_and_are_cached(docker_api, local_base) -> None:
    first = build(docker_api, local_base, "COPY run.sh /app/run.sh\n", {"run.sh": b"#!/bin/sh\necho ran\n"})
    again = build(docker_api, local_base, "COPY run.sh /app/run.sh\n", {"run.sh": b"#!/bin/sh\necho ran\n"})
    assert first.built and not again.built and again.image_id == first.image_id and again.key == first.key
    assert first.bases[local_base]["id"] == docker_api.inspect_image(local_base)["Id"]
    other = build(docker_api, local_base, "COPY run.sh /app/run.sh\n", {"run.sh": b"#!/bin/sh\necho other\n"})
    assert other.built and other.image_id != first.image_id                  # the context is part of the key
    missing = f"srb-no-such-image-{first.key[:8]}:1"
    with pytest.raises(tc.BaseImageMissing) as err:
        build(docker_api, missing)
    assert missing in err.value.message and "never pulls" in err.value.message and "\n" not in err.value.message
    assert docker_api.images(name=missing.split(":")[0]) == []


def test_containers_are_network_free_limited_labelled_and_removed(docker_api, local_base, tb_scope) -> None:
    image = build(docker_api, local_base)
    box = tc.TaskContainer(docker_api, image, tc.ContainerLimits(cpus=0.5, memory_mb=256, pids=128), cell="cell-x")
    try:
        host = docker_api.inspect_container(box.id)["HostConfig"]
        assert host["NetworkMode"] == "none" and host["Memory"] == 256 << 20 and host["MemorySwap"] == 256 << 20
        assert host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 128
        labels = docker_api.inspect_container(box.id)["Config"]["Labels"]
        assert labels[tc.OWNED] == "task-container" and labels[tc.SCOPE] == tb_scope and labels[tc.CELL] == "cell-x"
        assert box.workdir == "/app"
        r = box.exec("pwd; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; echo oops >&2; exit 3", 10)
        assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, b"/app\nlo\n", b"oops\n", False)
        r = box.exec("sleep 20; echo late", 1)
        assert r.timed_out and r.exit_code == 124 and b"late" not in r.stdout
        r = box.exec("head -c 200000 /dev/zero | tr '\\0' a; echo; echo END", 10, keep=(1000, 1000))
        assert r.stdout_bytes == 200005 and len(r.stdout) == 1000 and r.stdout.endswith(b"END\n")
        box.put_files("/tests", {"test.sh": b"#!/bin/bash\necho hi\n", "sub/data.txt": b"x"}, executable)
        assert box.exec("ls -l /tests/test.sh | cut -c1-10; cat /tests/sub/data.txt", 10).stdout == b"-rwxr-xr-x\nx"
        assert box.read_file("/tests/sub/data.txt", 100) == b"x" and box.read_file("/nope", 100) is None
        assert [c["Id"] for c in tc.owned_containers(docker_api, tb_scope)] == [box.id]
    finally:
        box.remove()
    assert tc.owned_containers(docker_api, tb_scope) == []


def test_the_sweep_removes_an_earlier_process_s_containers_only(docker_api, local_base, tb_scope,
                                                              monkeypatch) -> None:
    image = build(docker_api, local_base)
    limits = tc.ContainerLimits(cpus=0.5, memory_mb=128)
    monkeypatch.setattr(tc, "PROCESS_TOKEN", "earlier-process")
    old = tc.TaskContainer(docker_api, image, limits, cell="left-behind")
    monkeypatch.undo()
    mine = tc.TaskContainer(docker_api, image, limits, cell="mine")
    tc.set_scope(tb_scope + "-other")
    other = tc.TaskContainer(docker_api, image, limits, cell="another-store")
    tc.set_scope(tb_scope)
    try:
        assert tc.sweep(docker_api) == [old.id]
        left = {c["Id"] for c in tc.owned_containers(docker_api)}
        assert mine.id in left and other.id in left and old.id not in left
    finally:
        for box in (old, mine, other):
            box.remove()


def run_trial(case, commands: list[str]):
    session = FakeSession(scripted(commands), cell_id=f"cell-{case.metadata.task}")
    return session, asyncio.run(TB.converse(case, session))


@pytest.fixture
def remote_engine(monkeypatch: pytest.MonkeyPatch) -> str:
    """DOCKER_HOST set to an engine reached over TCP (`SR_BENCH_REMOTE_DOCKER_HOST`; `.ci/run` starts its
    private engine with a loopback TCP listener too): the client sees it as remote, so nothing is
    bind-mounted and every file goes in and out through the API."""
    host = os.environ.get("SR_BENCH_REMOTE_DOCKER_HOST", "")
    if not host.startswith("tcp://"):
        pytest.skip("no remote Docker engine named: set SR_BENCH_REMOTE_DOCKER_HOST=tcp://HOST:PORT")
    monkeypatch.setenv("DOCKER_HOST", host)
    return host


def test_the_toy_tasks_run_on_a_remote_engine(remote_engine, docker_api, local_base, tb_scope, tmp_path: Path) -> None:
    from srbench.sandbox.docker_backend import engine_is_local

    assert not engine_is_local() and docker_api.base_url.startswith("http://")    # the TCP engine, not the socket
    test_three_toy_tasks_end_to_end(docker_api, local_base, tb_scope, tmp_path)


def test_three_toy_tasks_end_to_end(docker_api, local_base, tb_scope, tmp_path: Path) -> None:
    root = write_terminal_bench(tmp_path / "tb", local_base)
    cases = {c.metadata.task: c for c in TB.load(read_files(TB.locate(root)), seed=1, revision="fixture")}
    assert TB.preflight(list(cases.values())) == []

    session, out = run_trial(cases["hello-file"], SCRIPTS["hello-file"]["solve"])
    assert out.error_class is None and out.outputs["reward"] == 1.0, out
    grade = TB.grade_conversation(cases["hello-file"], conversation_record(outputs=out.outputs))
    assert grade.correct and grade.details["trajectory"] == out.trajectory
    receipt = out.outputs["receipt"]
    assert receipt["base_images"][local_base]["id"] == docker_api.inspect_image(local_base)["Id"]
    assert receipt["image_id"].startswith("sha256:") and receipt["limits"]["memory_mb"] == 512
    assert receipt["limits"]["network"] == "none" and receipt["tree_sha256"] == cases["hello-file"].metadata.tree_sha256
    traj = session.objects[out.trajectory]
    assert "Hello, sr-bench!" in traj["messages"][-2]["content"]                # `cat` showed the file
    assert "found 'Hello, sr-bench!\\n'" in traj["verifier"]["stdout"]

    _, again = run_trial(cases["hello-file"], SCRIPTS["hello-file"]["fail"])
    assert again.outputs["reward"] == 0.0 and again.outputs["environment"]["image_built"] is False

    _, fixed = run_trial(cases["fix-greeting"], SCRIPTS["fix-greeting"]["solve"])
    _, failed = run_trial(cases["fix-greeting"], SCRIPTS["fix-greeting"]["fail"])
    assert fixed.outputs["reward"] == 1.0 and fixed.outputs["reward_source"] == "reward.json"
    assert failed.outputs["reward"] == 0.0 and failed.error_class is None
    assert fixed.outputs["receipt"]["limits"]["memory_mb"] == 1024                # 2.0 form: memory = "1G"

    _, never = run_trial(cases["never-rewards"], SCRIPTS["never-rewards"]["solve"])
    assert never.error_class == "trial_error" and never.error.startswith("RewardFileNotFoundError")
    assert not TB.grade_conversation(cases["never-rewards"], conversation_record(
        outputs=never.outputs, error_class=never.error_class)).correct
    assert tc.owned_containers(docker_api, tb_scope) == []                    # every trial removed its container


def test_a_missing_base_fails_preflight_and_the_trial_before_any_call(docker_api, local_base, tmp_path) -> None:
    absent = "srb-absent-base-" + local_base.split("-")[-1].split(":")[0] + ":1"
    root = write_terminal_bench(tmp_path / "tb", absent)
    case = next(c for c in TB.load(read_files(TB.locate(root)), seed=1, revision="x") if c.metadata.task == "hello-file")
    problems = TB.preflight([case])
    assert len(problems) == 1 and absent in problems[0] and "never pulls" in problems[0]
    session, out = run_trial(case, ["ls"])
    assert session.sent == [] and out.error_class == "base_image_missing" and absent in out.error


def test_the_catalog_command_follows_the_engine(docker_api, tmp_path: Path) -> None:
    def entry(docker_host: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
        env.update(DOCKER_HOST=docker_host, SR_BENCH_HOME=str(tmp_path / "home"))
        out = subprocess.run([sys.executable, "-m", "srbench.cli.main", "catalog"], env=env, cwd=tmp_path,
                             capture_output=True, timeout=120, check=True).stdout
        return next(b for b in json.loads(out)["benchmarks"] if b["id"] == "terminal-bench-2.1")

    assert entry(os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"))["available"] is True
    gone = entry(f"unix://{tmp_path}/no-engine.sock")
    assert gone["available"] is False and "no Docker engine reachable" in gone["reason"]


def test_no_engine_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo and catalog said only "no Docker engine reachable at the default socket: DockerException";
    the reason now names the fix. Needs no engine (the docker package only)."""
    pytest.importorskip("docker")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(tc.TaskEnvironmentUnavailable) as err:
        tc.engine(timeout_s=5)
    assert f"no Docker engine reachable at unix://{tmp_path}/no-engine.sock (" in str(err.value)
    assert "start one (or set DOCKER_HOST to its socket) on the service host" in str(err.value)
