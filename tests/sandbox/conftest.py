"""Sandbox fixtures: every backend that this host has built and can run, each test once per backend.

The grading environment is built by `sr-bench setup --build-sandbox` (CI does it before the tests,
offline from Debian's and PyPI's packages); tests never build it. They find it at
``SR_BENCH_SANDBOX_DIR`` (else ``<SR_BENCH_HOME>/sandbox``) and skip, saying why, when a backend
is not there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from srbench.sandbox import Sandbox, SandboxUnavailable, open_sandbox, sandbox_dir

from .tbench_docker import docker_api, local_base, tb_scope  # noqa: F401 - Terminal-Bench's Docker fixtures

_CACHE: dict[str, Sandbox | str] = {}


def backend_or_skip(name: str) -> Sandbox:
    if name not in _CACHE:
        try:
            _CACHE[name] = open_sandbox(name, sandbox_dir())
        except SandboxUnavailable as exc:
            _CACHE[name] = exc.message
    got = _CACHE[name]
    if isinstance(got, str):
        pytest.skip(f"sandbox backend {name} is not available here: {got}")
    return got


@pytest.fixture(params=["docker", "bwrap"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield backend_or_skip(request.param)
