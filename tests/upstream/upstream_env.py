"""Where the released upstream package (`vllm-sr[bench]==0.4.0`, unchanged) is: `SR_BENCH_UPSTREAM_VLLM_SR`
names its `vllm-sr` script; its interpreter is the one beside it. Tests that need it skip, saying why, when
it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "SR_BENCH_UPSTREAM_VLLM_SR"


def upstream_cli() -> Path:
    """The upstream `vllm-sr` script, or skip the test naming what is missing."""
    given = os.environ.get(ENV)
    if not given:
        pytest.skip(f"{ENV} is not set: install 'vllm-sr[bench]==0.4.0' in its own venv and point {ENV} at its "
                    "vllm-sr script (.ci/run does)")
    path = Path(given)
    if not path.is_file():
        pytest.skip(f"{ENV}={given} is not a file: the upstream package is not installed there")
    return path


def upstream_python() -> Path:
    """The interpreter of the upstream package's venv (beside its `vllm-sr` script)."""
    python = upstream_cli().parent / "python"
    if not python.exists():
        pytest.skip(f"no python beside {upstream_cli()}: the upstream venv is incomplete")
    return python
