"""The benchmarks listed in the catalog but not built in this release.

Each keeps its real upstream pin, profile sizes and weight so that the catalog, the totals and the
full-score rule (CAT-2: no full score without all nine) are right; ``available`` is False with the
reason, and every operation on it raises `InvalidInput` saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case


class UnavailableBenchmark(Benchmark):
    """A catalog entry without an adapter: it can be listed, never prepared or graded."""

    available = False

    def _refuse(self) -> NoReturn:
        raise InvalidInput(f"benchmark {self.id} is not available in this release: {self.unavailable_reason}")

    def locate(self, root: Path) -> dict[str, Path]:
        self._refuse()

    def fetch(self, cache_dir: Path) -> dict[str, Path]:
        self._refuse()

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        self._refuse()

    def grade(self, case: Case, text: str | None) -> Grade:
        self._refuse()


class TerminalBench21(UnavailableBenchmark):
    id = "terminal-bench-2.1"
    title = "Terminal-Bench 2.1"
    capability = "isolated terminal tasks"
    kind = "agent"
    weight = 10
    profiles = {"smoke": 1, "quick": 3, "standard": 15}
    unavailable_reason = "needs Harbor and Docker images pinned by digest on a worker host (DEP-2, DEP-6); not built in this release"
    source = SourcePin(
        url="https://github.com/harbor-framework/terminal-bench-2-1",
        revision="7131e4375048a0e408a8fb404b5f499d726b695b",
        files=("tasks/*/task.toml",),
        license_url="https://github.com/harbor-framework/terminal-bench-2-1",
        access_note="Apache-2.0; open.",
    )
