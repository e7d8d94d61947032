"""An example sr-bench benchmark plugin (issue 39, item 7; docs/benchmarks.md#plugins): a package that exposes
sr-bench's own adapter contract, `srbench.benchmarks.base.Benchmark`, through the ``srbench.benchmarks``
entry-point group (its dist-info's entry_points.txt). Its native source is one JSON file of three-option
questions; it is graded by sr-bench's multiple-choice grader."""

from __future__ import annotations

import json
from pathlib import Path

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.graders import grade_mcq
from srbench.benchmarks.native import locate_single
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message

SOURCE = "colours.json"
LETTERS = "ABC"


class Colours(Benchmark):
    id = "example-colours"
    title = "Example colours"
    capability = "an example plugin: colour questions"
    kind = "mcq"
    weight = 1
    profiles = {"smoke": 4, "quick": 6, "standard": 6}
    strata = "family"
    grader_version = "example-mcq-v1"
    adapter_version = "example-colours-0.1"
    source = SourcePin(url="https://example.invalid/colours", revision="v1", files=(SOURCE,))

    def locate(self, root: Path) -> dict[str, Path]:
        return locate_single(root, SOURCE)

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        if SOURCE not in files:
            raise InvalidInput(f"{self.id} needs {SOURCE}")
        cases = []
        for row in json.loads(files[SOURCE]):
            options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(row["options"]))
            prompt = f"{row['question']}\n\n{options}\n\nAnswer with the letter."
            cases.append(Case(id=f"{self.id}/{row['id']}", benchmark=self.id,
                              messages=[Message(role="user", content=prompt)], answer=row["answer"],
                              metadata=CaseMetadata(stratum=row["family"], source_revision=revision)))
        return cases

    def grade(self, case: Case, text: str | None) -> Grade:
        return grade_mcq(text, case.answer, len(LETTERS))
