"""Docker fixtures for the Terminal-Bench tests: the engine at DOCKER_HOST, a local base image made
from the grading base image already on it (`sr-bench setup --build-sandbox` builds
``sr-bench-grader-base:<tag>``; never pulled), and a test scope whose containers and images are
removed afterwards. Every test that needs them skips, saying why, without an engine or that image."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from srbench.sandbox import task_container as tc
from srbench.sandbox.base import SandboxFault
from srbench.simulate.terminal_tasks import local_base_image


def engine_or_skip() -> Any:
    try:
        return tc.engine(timeout_s=20)
    except SandboxFault as exc:
        pytest.skip(f"Terminal-Bench containers need a Docker engine: {exc.message}")


def source_image(api: Any) -> str:
    found = local_base_image(api)
    if found is not None:
        return found
    pytest.skip("no sr-bench-grader-base image on the Docker engine: run "
                "`sr-bench setup --benchmark livecodebench --build-sandbox` first")


@pytest.fixture
def docker_api() -> Any:
    return engine_or_skip()


@pytest.fixture
def tb_scope(docker_api: Any) -> Iterator[str]:
    """A fresh scope for this test's containers and images; everything in it is removed at the end."""
    before = tc.current_scope()
    scope = "srb-test-" + secrets.token_hex(6)
    tc.set_scope(scope)
    try:
        yield scope
    finally:
        tc.set_scope(before)
        for c in tc.owned_containers(docker_api, scope):
            docker_api.remove_container(c["Id"], force=True, v=True)
        tc.remove_images(docker_api, scope)


@pytest.fixture
def local_base(docker_api: Any, tb_scope: str) -> Iterator[str]:
    """A tag (unique to the test) on the grading base image: the FROM of the fixture tasks."""
    src = source_image(docker_api)
    repo, tag = f"srb-tbench-fixture-{secrets.token_hex(4)}", "base"
    docker_api.tag(src, repo, tag)
    try:
        yield f"{repo}:{tag}"
    finally:
        tc.remove_images(docker_api, tb_scope)          # the task images built on it go first
        try:
            docker_api.remove_image(f"{repo}:{tag}")    # only the tag: the grading image stays
        except Exception:  # noqa: BLE001 - already gone
            pass
