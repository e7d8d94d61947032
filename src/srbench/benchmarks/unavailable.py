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


class SciCode(UnavailableBenchmark):
    id = "scicode"
    title = "SciCode (whole main problems)"
    capability = "scientific coding, whole main problems"
    kind = "code"
    weight = 10
    profiles = {"smoke": 1, "quick": 3, "standard": 20}
    strata = "domain"
    unavailable_reason = ("needs the code-grading sandbox and the SHA256-pinned test_data.h5 (DEP-4, DEP-5); "
                          "not built in this release")
    source = SourcePin(
        url="https://huggingface.co/datasets/SciCode1/SciCode",
        revision="4510f6a6aa27c43fad7b43da2c59602a86e88480",
        files=("problems_test.jsonl",),
        license_url="https://github.com/scicode-bench/SciCode",
        access_note="Apache-2.0; numeric targets test_data.h5 sha256 "
                    "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890.",
    )


class Tau3(UnavailableBenchmark):
    id = "tau3"
    title = "τ³ (tau2-bench v1.0.1, text domains)"
    capability = "τ³, three text interaction domains"
    kind = "agent"
    weight = 10
    profiles = {"smoke": 3, "quick": 12, "standard": 60}
    strata = "domain"
    unavailable_reason = ("needs a pinned user simulator and release 1.0.1 (DEP-1) and the tau2 interpreter "
                          "(DEP-2); not built in this release")
    source = SourcePin(
        url="https://github.com/sierra-research/tau2-bench",
        revision="fc0055dc4e0a316c3f83133267fbd6faaa770992",
        files=tuple(f"data/tau2/domains/{d}/{f}" for d in ("airline", "retail", "telecom")
                    for f in ("tasks.json", "split_tasks.json")),
        license_url="https://github.com/sierra-research/tau2-bench",
        access_note="MIT; tag v1.0.1; telecom limited to split_tasks.json['base'].",
    )
