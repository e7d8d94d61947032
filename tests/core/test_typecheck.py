"""The static type check (issue 26, item 7): mypy passes over src/srbench with the configuration in
pyproject.toml — strict on the pure core (cas, rules, schemas, stages), normal on the rest.

CI runs the README's test command, so this test is how mypy runs in `.ci/run`. Its cache is the
repository's `.mypy_cache` (git-ignored): a warm run takes a few seconds.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRICT = {"srbench.cas.*", "srbench.rules.*", "srbench.schemas.*", "srbench.stages.*"}
STRICT_FLAGS = ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any", "check_untyped_defs")


def _overrides() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    return config.get("overrides", [])


def test_core_is_configured_strict():
    """Nobody loosens the core silently: one override holds the four packages with the strict flags."""
    overrides = _overrides()
    strict = [o for o in overrides if STRICT <= set(o["module"])]
    assert strict, "pyproject.toml [tool.mypy]: no override makes cas, rules, schemas and stages strict"
    assert all(strict[0].get(flag) is True for flag in STRICT_FLAGS), strict[0]
    relaxed = [o for o in overrides if any(m.startswith("srbench.") for m in o["module"]) and o is not strict[0]]
    # the one relaxation: the sandbox harness scripts, whose bootstrap defines their globals
    assert [o["module"] for o in relaxed] == [["srbench.sandbox.harness.*"]], relaxed


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[dev]')")
def test_mypy_passes():
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert proc.returncode == 0 and not errors, "\n".join(errors[:40]) or proc.stdout[-2000:] + proc.stderr[-2000:]
