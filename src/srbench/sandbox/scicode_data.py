"""SciCode's numeric targets (``test_data.h5``) for grading: where they are and that they are the pinned ones.

The host file is ``SR_BENCH_SCICODE_TEST_DATA`` (default ``<SR_BENCH_HOME>/assets/scicode/test_data.h5``,
see `paths`); inside the sandbox it is ``/opt/sr-bench/scicode/test_data.h5``: bind-mounted read-only
from the host file, or baked into the image by ``setup --install`` (the only way a remote Docker engine
gets it). Grading needs a file whose sha256 is the one the plan froze (the pinned file unless the
store's benchmark-options say otherwise); anything else is a `SandboxFault` saying what is missing,
never a wrong answer. A file's sha256 is remembered per (path, size, mtime) in this process.
"""

from __future__ import annotations

import threading
from pathlib import Path

from srbench.benchmarks.pins import SCICODE_TEST_DATA
from srbench.sandbox.base import Receipt, SandboxFault
from srbench.sandbox.build import H5_INSIDE as INSIDE
from srbench.sandbox.build import sha256_file
from srbench.sandbox.paths import scicode_test_data

PINNED_SHA256 = SCICODE_TEST_DATA.sha256          # the pin table's (benchmarks/pins.py)
HINT = ("run `sr-bench setup --benchmark scicode --install` (it fetches the file with its sha256 checked) or name "
        "the file with SR_BENCH_SCICODE_TEST_DATA")

_LOCK = threading.Lock()
_HASHES: dict[tuple[str, int, int], str] = {}


class TestDataMissing(SandboxFault):
    """SciCode cannot be graded here: its test data is absent or not the pinned file."""

    code = "scicode_test_data_missing"


def file_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _HASHES:
            return _HASHES[key]
    digest = sha256_file(path)
    with _LOCK:
        _HASHES[key] = digest
    return digest


def status(expected: str, receipt: Receipt | None = None) -> tuple[str | None, str | None]:
    """(host path to mount or None when the image has it, problem or None)."""
    path = scicode_test_data()
    baked = receipt is not None and receipt.scicode_test_data_sha256 == expected
    if path.is_file():
        got = file_sha256(path)
        if got == expected:
            return str(path), None
        if baked:
            return None, None
        return None, f"SciCode's test data {path} has sha256 {got}, grading needs {expected}: {HINT}"
    if baked:
        return None, None
    return None, f"SciCode's test data is not on this host (looked for {path}): {HINT}"


def mounts(expected: str, receipt: Receipt, *, local_engine: bool = True) -> dict[str, str]:
    """The read-only mounts that give the sandbox the expected test data; TestDataMissing otherwise."""
    host, problem = status(expected, receipt)
    if problem:
        raise TestDataMissing(problem)
    if host is None:
        return {}
    if not local_engine:
        raise TestDataMissing("a remote Docker engine cannot mount host files and its grading image has no SciCode "
                              f"test data with sha256 {expected}: {HINT} on the build host")
    return {INSIDE: host}
