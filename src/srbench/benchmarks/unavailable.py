"""The benchmarks listed in the catalog but not built in this release.

Each keeps its real upstream pin, profile sizes and weight so that the catalog, the totals and the
full-score rule (CAT-2: no full score without all nine) are right; ``available`` is False with the
reason, and every operation on it raises `InvalidInput` saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from srbench.benchmarks.base import Benchmark, Grade
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
