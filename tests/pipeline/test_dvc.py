"""The repository's DVC pipeline (issue 7 item 4, DC-4) on clean copies in temporary directories, offline.

One module-scoped sequence (each `dvc repro` runs real `sr-bench --embedded` stages): a clean clone
reproduces the committed dvc.lock; a second repro runs nothing; added local sources run only their
stages; editing one source reruns only its stage; a clone elsewhere gives the same dvc.lock; no process
is left behind; `dvc push` to an S3 emulator on loopback (moto) and `dvc pull` into a fresh clone give
the same bytes, and that clone then has nothing to rerun. Every proxy variable points at a closed
loopback port, so nothing can reach the internet.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.service.helpers import free_port, loopback_process, processes_under

from srbench.simulate import samples

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
COPIED = ("dvc.yaml", "params.yaml", "dvc.lock", ".dvcignore", ".dvc/config", ".dvc/.gitignore")
MIRROR_STAGES = {"mirror@arc-agi-2-smoke", "mirror@arc-agi-2-quick", "mirror@arc-agi-2-standard"}
LOCAL = """
local:
  mmlu-pro-smoke: {benchmark: mmlu-pro, profile: smoke, path: sources/mmlu-pro, revision: synthetic-sample-v1}
  gpqa-diamond-smoke: {benchmark: gpqa-diamond, profile: smoke, path: sources/gpqa, revision: synthetic-sample-v1}
"""

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("dvc") is None,
                       reason="dvc is not installed: pip install -e '.[pipeline]' (see .ci/run)"),
    pytest.mark.skipif(shutil.which("sr-bench", path=str(BIN)) is None, reason="no sr-bench script beside python"),
    pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc to list processes"),
]


def _closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("dvc-env")
    closed = _closed_url()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SR_BENCH_", "DVC_", "AWS_"))}
    out.update({
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "SR_BENCH_HOME": str(root / "home"),
        "DVC_NO_ANALYTICS": "1", "DVC_DAEMON": "1", "DVC_SITE_CACHE_DIR": str(root / "site"),
        "DVC_GLOBAL_CONFIG_DIR": str(root / "global"), "DVC_SYSTEM_CONFIG_DIR": str(root / "system"),
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root),
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        out[name] = out[name.lower()] = closed
    return out


def clone(where: Path, env: dict[str, str], extra_params: str = "") -> Path:
    """A clean clone: the repository's pipeline files only (no cache, no outputs), in a new git repo."""
    where.mkdir(parents=True)
    for name in COPIED:
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, where / name)
    if extra_params:
        text = (where / "params.yaml").read_text()
        assert "\nlocal: {}\n" in text, "params.yaml must keep an empty `local: {}` for this test"
        (where / "params.yaml").write_text(text.replace("\nlocal: {}\n", extra_params))
    subprocess.run(["git", "init", "-q"], cwd=where, env=env, check=True, timeout=30)
    return where


def write_sources(root: Path) -> None:
    samples.write_mmlu_pro(root / "sources" / "mmlu-pro")
    samples.write_gpqa(root / "sources" / "gpqa")


def dvc(where: Path, env: dict[str, str], *args: str, timeout: float = 180) -> str:
    proc = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=where, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"dvc {' '.join(args)} failed in {where}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


def ran(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def repro(where: Path, env: dict[str, str]) -> set[str]:
    out = dvc(where, env, "repro")
    assert processes_under(where) == [], "a stage left a process behind"
    assert not (where / "cache" / "store" / "service.json").exists()
    return ran(out)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> dict[str, Path]:
    """Clone A: the committed pipeline, then local sources added and one of them edited."""
    a = clone(tmp_path_factory.mktemp("clone-a") / "repo", env)
    assert repro(a, env) == MIRROR_STAGES
    lock = (a / "dvc.lock").read_text()
    assert lock == (REPO / "dvc.lock").read_text(), (
        "a clean clone's `dvc repro` does not reproduce the committed dvc.lock: if the change to the datasets "
        "is intended, run `dvc repro` in the repository and commit dvc.lock")
    assert repro(a, env) == set()                                      # a no-op repro runs nothing

    (a / "params.yaml").write_text((a / "params.yaml").read_text().replace("\nlocal: {}\n", LOCAL))
    write_sources(a)
    assert repro(a, env) == {"local@mmlu-pro-smoke", "local@gpqa-diamond-smoke"}
    before = {p.name: p.read_bytes() for p in (a / "datasets").glob("*.json*")}
    csv = a / "sources" / "gpqa" / "gpqa_diamond.csv"
    csv.write_bytes(csv.read_bytes().replace(b"designated answer 3", b"designated answer three"))
    assert repro(a, env) == {"local@gpqa-diamond-smoke"}               # only the edited source's stage
    after = {p.name: p.read_bytes() for p in (a / "datasets").glob("*.json*")}
    assert {n for n in after if after[n] != before.get(n)} == {"gpqa-diamond-smoke.json", "gpqa-diamond-smoke.jsonl"}
    return {"a": a}


def test_clean_clone_reproduces_the_lock_and_reruns_only_what_changed(built: dict[str, Path]) -> None:
    a = built["a"]
    manifest = (a / "datasets" / "arc-agi-2-quick.json").read_text()
    assert '"path": "arc-agi-2-quick.jsonl"' in manifest and str(a) not in manifest
    assert '"origin": "package"' in manifest


def test_a_clone_elsewhere_gives_the_same_lock(built: dict[str, Path], env: dict[str, str],
                                               tmp_path: Path) -> None:
    a = built["a"]
    b = clone(tmp_path / "elsewhere" / "deeper" / "b", env, LOCAL)
    write_sources(b)
    shutil.copyfile(a / "sources" / "gpqa" / "gpqa_diamond.csv", b / "sources" / "gpqa" / "gpqa_diamond.csv")
    assert repro(b, env) == MIRROR_STAGES | {"local@mmlu-pro-smoke", "local@gpqa-diamond-smoke"}
    assert (b / "dvc.lock").read_bytes() == (a / "dvc.lock").read_bytes()


@pytest.fixture
def s3(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """A moto S3 emulator on a free loopback port; its endpoint URL."""
    server = shutil.which("moto_server", path=str(BIN))
    if server is None or importlib.util.find_spec("dvc_s3") is None or importlib.util.find_spec("boto3") is None:
        pytest.skip("push/pull needs dvc-s3 and moto[server]: pip install dvc-s3 'moto[server]' (see .ci/run)")
    url = f"http://127.0.0.1:{free_port()}"
    with loopback_process([server, "-H", "127.0.0.1", "-p", url.rsplit(":", 1)[1]], url + "/moto-api/",
                          tmp_path / "moto.log", cwd=tmp_path, env=env):
        yield url


def test_push_and_pull_through_an_s3_remote(built: dict[str, Path], env: dict[str, str], s3: str,
                                            tmp_path: Path) -> None:
    import boto3

    creds = {"AWS_ACCESS_KEY_ID": "sr-bench-test", "AWS_SECRET_ACCESS_KEY": "sr-bench-test-secret",
             "AWS_DEFAULT_REGION": "us-east-1"}
    env = {**env, **creds}
    client = boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])
    client.create_bucket(Bucket="team-datasets")
    a = built["a"]
    dvc(a, env, "remote", "add", "--local", "-d", "team", "s3://team-datasets/sr-bench")
    dvc(a, env, "remote", "modify", "--local", "team", "endpointurl", s3)
    dvc(a, env, "push")
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="team-datasets").get("Contents", [])]
    outs = sorted((a / "datasets").glob("*.json*"))
    assert len(keys) == len(outs) == 10

    c = clone(tmp_path / "colleague", env, LOCAL)
    shutil.copyfile(a / "dvc.lock", c / "dvc.lock")                    # the committed lock after A's change
    shutil.copytree(a / "sources", c / "sources")
    dvc(c, env, "remote", "add", "--local", "-d", "team", "s3://team-datasets/sr-bench")
    dvc(c, env, "remote", "modify", "--local", "team", "endpointurl", s3)
    dvc(c, env, "pull")
    assert {p.name: p.read_bytes() for p in outs} == {p.name: p.read_bytes() for p in (c / "datasets").glob("*.json*")}
    assert repro(c, env) == set()                                      # pulled outputs: nothing to rebuild
    assert not (c / "cache").exists()                                  # ... and no store was even made
