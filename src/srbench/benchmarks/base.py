"""The benchmark adapter contract. A benchmark is one module that defines one `Benchmark` subclass.

An adapter declares its pinned upstream source, reads the native files into cases (with a stable
task id and a stratum), and grades a visible final answer. It never calls a model, never reads the
clock and never touches the network except in `fetch`, which downloads the pinned files.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import JsonValue

from srbench.benchmarks.contract import Grade, SourcePin
from srbench.benchmarks.pins import pins_for
from srbench.benchmarks.published import PublishedCells, summarize
from srbench.benchmarks.published_grades import PublishedGrade, PublishedSummary, read_published
from srbench.benchmarks.sources import fetch_pinned
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.schemas.catalog import CatalogEntry, CatalogSource, Kind
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.grade import GradeRecord, StoredGrade
from srbench.schemas.wire import WireJSON

if TYPE_CHECKING:
    from srbench.benchmarks.conversation import CellSession, ConversationOutcome


class Benchmark(ABC):
    id: ClassVar[str]
    title: ClassVar[str]
    capability: ClassVar[str]
    kind: ClassVar[Kind]
    weight: ClassVar[int]                      # percent of the full sr-bench score (REP-4)
    profiles: ClassVar[dict[str, int]]         # smoke / quick / standard task counts (CAT-1)
    source: ClassVar[SourcePin]
    strata: ClassVar[str] = "all"              # name of the stratification field, recorded in the manifest
    grader_version: ClassVar[str] = ""
    adapter_version: ClassVar[str] = "sr-bench-1.0"
    requires: ClassVar[tuple[str, ...]] = ()   # optional packages the native loader imports (DS-6)
    offline_mirror: ClassVar[str | None] = None  # a package that ships the pinned data, if any
    normalizer: ClassVar[str] = "sr-bench-normalizer-v1"  # how file bytes become the hashed content
    available: ClassVar[bool] = True
    unavailable_reason: ClassVar[str | None] = None
    needs_judge: ClassVar[bool] = False         # graded by the reference judge (DEP-1), see judge.py
    judge_template_sha256: ClassVar[str | None] = None   # part of every judged grade key
    published_rule: ClassVar[str | None] = None  # the upstream rule's diagnostic (published.py), if any
    # how `dataset prepare` orders the cases before the profile cuts (benchmarks/selection.py)
    selection_algorithm: ClassVar[str] = "stratified-hash-v1"
    # a cell is a conversation of several journaled calls (benchmarks/conversation.py): `converse` drives it
    multi_call: ClassVar[bool] = False
    # auxiliary roles a multi-call benchmark calls (e.g. "user_simulator", "judge"); the plan's
    # benchmark_options[<id>][<role>] names the pinned target of each
    conversation_roles: ClassVar[tuple[str, ...]] = ()
    # the keys of its benchmark-options entry that `freeze_options` reads (beyond grader_version, the roles
    # and a judged benchmark's judge keys); `sr-bench options set` refuses any other
    option_keys: ClassVar[tuple[str, ...]] = ()
    # the upstream partition (task collection) the pinned files are; `--source-partition` must name it
    source_partition: ClassVar[str] = "test"

    # -- source --------------------------------------------------------------------------------
    @abstractmethod
    def locate(self, root: Path) -> dict[str, Path]:
        """Native files under a local copy laid out like the upstream repository, or a single
        native file given directly. Keys are repository-relative names. Raises InvalidInput."""

    def fetch(self, cache_dir: Path) -> dict[str, Path]:
        """Download the pinned files (HTTP through httpx). Raises SourceUnavailable."""
        pins = pins_for(self.id)
        sizes = {n: p.size for n, p in pins.files.items()} if pins and pins.revision == self.source.revision else {}
        return fetch_pinned(self.source, cache_dir / self.id, sizes=sizes)

    def source_tree(self, root: Path) -> str | None:
        """The git tree id a local copy or download at `root` gives for a source pinned by tree (pins.py),
        None when it gives none. Only Terminal-Bench's pin is a tree."""
        return None

    def forget_download(self, root: Path, name: str) -> None:
        """Remove a downloaded file that failed its pin from the download cache at `root`."""
        (Path(root) / name).unlink(missing_ok=True)

    def normalize(self, files: dict[str, bytes]) -> dict[str, bytes]:
        """The content that is hashed and loaded, whichever way the files came (download, local copy,
        mirror). Default: the bytes as read (`normalizer` names the rule). Raises InvalidInput."""
        return files

    def mirror_files(self) -> tuple[str, dict[str, bytes]]:
        """The pinned files from the installed `offline_mirror` package: (``package==version``,
        ``{repository-relative name: bytes}``). Raises SourceUnavailable when it is not installed."""
        raise SourceUnavailable(f"benchmark {self.id} has no offline mirror")

    def dataset_label(self, revision: str, origin: str) -> tuple[str | None, list[str]]:
        """(a tag for the dataset's name, extra notices) for data read at `revision` from `origin`;
        a benchmark whose non-pinned data must never pass for the pinned release says so here."""
        return None, []

    @abstractmethod
    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        """Every eligible task of the source as a case (metadata.stratum set; split filled later)."""

    def native_ids(self, cases: list[Case], files: dict[str, bytes]) -> dict[str, str]:
        """{case id: the source's native task id} for the canonical task identity (`stages.exclusions`).
        Default: the case id without the benchmark prefix (τ³: ``domain/task``). Raises InvalidInput."""
        prefix = self.id + "/"
        out = {}
        for case in cases:
            if not case.id.startswith(prefix) or len(case.id) == len(prefix):
                raise InvalidInput(f"{self.id}: case {case.id} has no native task id")
            out[case.id] = case.id[len(prefix):]
        return out

    # -- grading -------------------------------------------------------------------------------
    @abstractmethod
    def grade(self, case: Case, text: str | None) -> Grade:
        """Grade the visible final answer `text` (None when the call produced no answer)."""

    def judge_messages(self, case: Case, answer_text: str | None,
                       grader: str | None = None) -> list[dict[str, str]]:
        """The judge call for the subject's reply (``[]`` when there is nothing to judge).
        Only judged benchmarks (``needs_judge``) implement it; the others raise InvalidInput."""
        raise InvalidInput(f"benchmark {self.id} is not graded by a judge; use grade()")

    def grade_judged(self, case: Case, answer_text: str | None, judge_text: str | None,
                     grader: str | None = None) -> Grade:
        """Grade the subject's reply from the judge's reply (judged benchmarks only)."""
        raise InvalidInput(f"benchmark {self.id} is not graded by a judge; use grade()")

    def judge_extras(self, grader: str | None, options: Mapping[str, JsonValue] | None) -> WireJSON:
        """Extra request fields of the judge call, as sent to its endpoint (judged benchmarks only)."""
        raise InvalidInput(f"benchmark {self.id} is not graded by a judge; use grade()")

    # -- planning (no model call) -----------------------------------------------------------------
    def plan_problems(self, cases: list[Case]) -> list[str]:
        """What this host misses to run these cases (DEP-3, before any paid dispatch). Default: nothing."""
        return []

    # -- multi-call cells (benchmarks/conversation.py) ---------------------------------------------
    def is_multi_call(self, options: Mapping[str, JsonValue] | None = None) -> bool:
        """Whether a cell is a conversation under the plan's frozen ``benchmark_options[<id>]``
        (default: `multi_call`; ARC-AGI-2 is one only when the plan asks for two attempts)."""
        return self.multi_call

    def freeze_options(self, raw: Mapping[str, JsonValue] | None) -> dict[str, JsonValue]:
        """The benchmark's own entries of the store's benchmark-options.json to freeze into the plan
        (each a `BenchmarkOptions` field; nothing by default). Raises InvalidInput naming a bad one."""
        return {}

    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        """Drive one multi-call cell through `session` (every model call journaled by it)."""
        raise InvalidInput(f"benchmark {self.id} is answered in one call")

    def grade_conversation(self, case: Case, conversation: ConversationRecord) -> Grade:
        """Grade a stored conversation record (``final_text``, ``outputs``, ``calls``), validated where it
        was read. Default: the plain grade of the final text."""
        return self.grade(case, conversation.final_text)

    def conversation_row(self, conversation: ConversationRecord) -> dict[str, JsonValue]:
        """Extra fields of a conversation cell's report row, from its stored record (JSON values; e.g.
        an agent trial's reward). Default: none."""
        return {}

    def published_conversation(self, case: Case, conversation: ConversationRecord, grade: Grade | None,
                               grader: str | None = None) -> PublishedGrade | None:
        """The published rule's grade of a stored conversation record. Default: `published_grade` of
        its final text."""
        return self.published_grade(case, conversation.final_text, grade, grader)

    # -- the published rule (a diagnostic beside sr-bench's grade, zero model calls) ---------------
    def published_grade(self, case: Case, text: str | None, grade: Grade | None,
                        grader: str | None = None) -> PublishedGrade | None:
        """The upstream rule's grade of the same reply (`text` None: no reply; `grade` is sr-bench's,
        None when there is none; `grader` the plan's grader version). None: no published rule."""
        return None

    def published_stored(self, case: Case, grade: StoredGrade, grader: str | None = None) -> PublishedGrade | None:
        """The published rule's grade of a stored grade object: the one it carries (``published``).
        A benchmark whose grades carry none (the sandbox's code grades) derives it from the grade's
        stored details here, so the figure needs no regrading and no model call."""
        return read_published(grade.published) if isinstance(grade, GradeRecord) else None

    def published_summary(self, cells: PublishedCells,
                          grader: str | None = None) -> PublishedSummary:
        """The published-rule figure over one target's planned cells of this benchmark, as
        (sr-bench correct, published grade) pairs; see `published.summarize`."""
        reason = None if self.published_rule else "no published-rule diagnostic for this benchmark"
        return summarize(self.published_rule, cells, reason=reason)

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        """Benchmark-specific report figures over one target's planned cells (a None grade is a
        cell with no graded answer). Default: none."""
        return {}

    def report_metrics(self, grades: list[StoredGrade | None], error_classes: list[str | None]) -> dict[str, JsonValue]:
        """`metrics` with each cell's error class beside its grade (the same order), for figures that
        count cells which failed before a grade (e.g. Terminal-Bench's trial errors). Default: `metrics`."""
        return self.metrics(grades)

    def notices(self) -> list[str]:
        """Fixed caveats printed with every dataset of this benchmark (e.g. DS-5 retest)."""
        return ["Public questions: results cannot be called contamination-free."]

    def catalog_entry(self) -> CatalogEntry:
        """This benchmark's catalog entry (CAT-1; ``reason`` set only when it is not available)."""
        entry = CatalogEntry(
            id=self.id, title=self.title, capability=self.capability, kind=self.kind, weight=self.weight,
            profiles=dict(self.profiles),
            source=CatalogSource(url=self.source.url, revision=self.source.revision, files=list(self.source.files),
                                 gated=self.source.gated),
            grader_version=self.grader_version or None, adapter_version=self.adapter_version,
            available=self.available, needs_judge=self.needs_judge)
        return entry if self.available else entry.model_copy(update={"reason": self.unavailable_reason})


__all__ = ["Benchmark", "Grade", "Kind", "SourcePin"]
