"""Where the sandbox and the grading assets live on this host (DEP-5).

The cache root is ``~/.cache/vllm-sr/sr-bench-1.0`` unless ``SR_BENCH_HOME`` says otherwise (the same
rule as ``service.discovery.cache_home``; the sandbox layer sits below the service, so it reads the
variable itself). The sandbox build lives in ``<root>/sandbox`` (``SR_BENCH_SANDBOX_DIR`` overrides),
SciCode's numeric targets in ``<root>/assets/scicode/test_data.h5`` (``SR_BENCH_SCICODE_TEST_DATA``).
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("SR_BENCH_HOME") or os.path.expanduser("~/.cache/vllm-sr/sr-bench-1.0"))


def sandbox_dir() -> Path:
    return Path(os.environ.get("SR_BENCH_SANDBOX_DIR") or home() / "sandbox")


def scicode_test_data() -> Path:
    return Path(os.environ.get("SR_BENCH_SCICODE_TEST_DATA") or home() / "assets" / "scicode" / "test_data.h5")
