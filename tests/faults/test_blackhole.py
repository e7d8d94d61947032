"""An address that never answers a connection (a firewall dropping packets): the CLI's `--url` and an http(s)
object store (a push or pull remote, a repair source, SR_BENCH_OBJECTS_URL) give up connecting after
`CONNECT_TIMEOUT_S` with one line saying so. The CLI waited its 600 s request timeout on `--url`; a remote
waited aiohttp's 30 s and then said `(FSTimeoutError: )`.

The blackhole is a loopback listener whose accept queue is full: the kernel drops further SYNs, so a
connect waits, as it does for a dropped packet."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.helpers import blackhole
from srbench.discovery import CONNECT_TIMEOUT_S
from srbench.service.team.reach import unreachable

from .conftest import cli_env, run_cli


@pytest.fixture
def hole() -> Iterator[int]:
    with blackhole() as port:
        yield port


def test_a_url_that_never_answers_is_one_line(tmp_path, hole: int) -> None:
    proc = run_cli(["--url", f"http://127.0.0.1:{hole}", "runs"], tmp_path, cli_env(SR_BENCH_TOKEN="t" * 32),
                   timeout=10 * CONNECT_TIMEOUT_S)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"error: cannot reach the sr-bench service at http://127.0.0.1:{hole}: no "
                                  f"connection within {CONNECT_TIMEOUT_S:g} s (ConnectTimeout)"), proc.stderr


def test_an_object_store_that_never_answers_is_named(hole: int) -> None:
    why = unreachable(f"http://team:s3cr3t@127.0.0.1:{hole}/team")
    assert why == f"no connection within {CONNECT_TIMEOUT_S:g} s (FSTimeoutError)", why
