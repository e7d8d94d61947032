"""Terminal-Bench 2.1: native task directories → one case per task, each cell one agent trial.

Case id ``terminal-bench-2.1/<task dir>``; stratum = ``[metadata] difficulty``. The case carries the
whole task tree (``answer.files``, base64 by relative path) and its pin ``metadata.tree_sha256``,
so a frozen dataset is self-contained: a run needs no checkout, and every trial re-checks the
digest before it starts. The case's messages are the trial's opening (system prompt + the task's
``instruction.md``). The cell is a conversation (`multi_call`): `converse` runs the pinned agent
and the verifier (agent.py); `grade_conversation` reads the stored outcome: correct iff reward = 1.

Available when the ``docker`` package is installed and an engine answers at ``DOCKER_HOST``;
`preflight` also checks that every base image of the planned tasks is on that engine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import JsonValue

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.conversation import CellSession, ConversationOutcome
from srbench.benchmarks.figures import TrialDetails
from srbench.benchmarks.published import TB_RULE, terminal_grade
from srbench.benchmarks.published_grades import TerminalPublished
from srbench.benchmarks.terminal_bench import agent, environment, tasks
from srbench.benchmarks.terminal_bench.options import AGENT, TerminalOptions, options_from
from srbench.benchmarks.terminal_bench.source import fetch_tasks, forget_tasks, locate_tasks, tasks_tree
from srbench.benchmarks.terminal_bench.trajectory import TrialFigures, TrialResult
from srbench.errors import IntegrityError, InvalidInput
from srbench.sandbox.base import SandboxFault
from srbench.sandbox.task_container import engine
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.grade import StoredGrade

GRADER = "sr-bench-terminal-reward-v1"


@dataclass
class _Availability:
    """The last check of the Docker engine (when, and why trials cannot run; None: they can)."""

    at: float = -1e9
    reason: str | None = None


_AVAILABILITY = _Availability()
_CHECK_EVERY_S = 30.0


def availability() -> str | None:
    """None when task containers can run here, else why not (checked at most every 30 s)."""
    now = time.monotonic()
    if now - _AVAILABILITY.at > _CHECK_EVERY_S:
        try:
            engine(timeout_s=5)
            reason = None
        except SandboxFault as exc:
            reason = f"needs a Docker engine for its task containers: {exc.message}"
        _AVAILABILITY.at, _AVAILABILITY.reason = now, reason
    return _AVAILABILITY.reason


class TerminalBench21(Benchmark):
    id = "terminal-bench-2.1"
    title = "Terminal-Bench 2.1"
    capability = "isolated terminal tasks"
    kind = "agent"
    weight = 10
    profiles = {"smoke": 1, "quick": 3, "standard": 15}
    strata = "difficulty"
    source_partition = "tasks"
    grader_version = GRADER
    published_rule = TB_RULE                    # Harbor's mean reward: the published.py docstring
    published_conversation_rule = TB_RULE
    multi_call = True
    conversation_roles: ClassVar[tuple[str, ...]] = ()
    option_keys: ClassVar[tuple[str, ...]] = tuple(TerminalOptions.model_fields)   # the agent settings and caps
    source = SourcePin(
        url="https://github.com/harbor-framework/terminal-bench-2-1",
        revision="7131e4375048a0e408a8fb404b5f499d726b695b",
        files=("tasks/*/task.toml", "tasks/*/instruction.md", "tasks/*/environment/**", "tasks/*/tests/**",
               "tasks/*/solution/**"),
        license_url="https://github.com/harbor-framework/terminal-bench-2-1",
        access_note=("Apache-2.0, open; the Harbor dataset terminal-bench/terminal-bench-2-1 (89 tasks). "
                     "Fetching it needs the network (GitHub tarball of the pinned commit); offline, prepare from a "
                     "local checkout with --source-path. Task images are built from each task's Dockerfile with "
                     "base images already on the Docker engine."),
    )

    @property
    def available(self) -> bool:  # type: ignore[override]
        return availability() is None

    @property
    def unavailable_reason(self) -> str | None:  # type: ignore[override]
        return availability()

    # -- source --------------------------------------------------------------------------------
    def locate(self, root: Path) -> dict[str, Path]:
        return locate_tasks(root)

    def fetch(self, cache_dir: Path) -> dict[str, Path]:
        return fetch_tasks(self.source, cache_dir / self.id)

    def source_tree(self, root: Path) -> str | None:
        return tasks_tree(root)

    def forget_download(self, root: Path, name: str) -> None:
        forget_tasks(root)

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        opening = agent.first_messages("", TerminalOptions())[0]
        cases = []
        for name, tree in sorted(tasks.split_tasks(files).items()):
            tasks.check_tree(name, tree)
            config = tasks.parse_task_toml(tree["task.toml"], f"task {name}: task.toml")
            try:
                instruction = tree["instruction.md"].decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput(f"task {name}: instruction.md is not UTF-8") from None
            stratum = config.difficulty if config.difficulty in tasks.DIFFICULTIES else "unknown"
            cases.append(Case(
                id=f"{self.id}/{name}", benchmark=self.id,
                messages=[Message(role="system", content=opening["content"]), Message(role="user", content=instruction)],
                answer={"files": tasks.encode_files(tree)},
                metadata=CaseMetadata(stratum=stratum, source_revision=revision, task=name, task_name=config.name,
                                      tree_sha256=tasks.tree_sha256(tree), task_config=config.model_dump(),
                                      has_solution="solution/solve.sh" in tree, agent=AGENT),
            ))
        return cases

    # -- the trial -----------------------------------------------------------------------------
    def task_of(self, case: Case) -> environment.TaskSpec:
        """The task a case carries, its files checked against the pinned tree digest."""
        meta = case.metadata.model_dump()
        try:
            files = tasks.decode_files(case.answer["files"])
            config = tasks.TaskConfig.model_validate(meta["task_config"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"case {case.id} does not carry a Terminal-Bench task ({type(exc).__name__})") from None
        got = tasks.tree_sha256(files)
        if got != meta.get("tree_sha256"):
            raise IntegrityError(f"case {case.id}: the task tree digest is {got}, the case pins {meta.get('tree_sha256')}")
        return environment.TaskSpec(name=meta["task"], tree_sha256=got, config=config, files=files)

    def freeze_options(self, raw: Mapping[str, JsonValue] | None) -> dict[str, JsonValue]:
        """The agent settings and caps (options.py) from the store's benchmark-options.json entry,
        frozen into the plan as ``benchmark_options["terminal-bench-2.1"]["grading"]``."""
        given = {k: v for k, v in (raw or {}).items() if k not in ("grader_version", "grading")}
        grading = (raw or {}).get("grading")
        if isinstance(grading, dict):
            given = {**grading, **given}
        return {"grading": options_from(given).model_dump()}

    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        frozen = session.options                                # the plan's benchmark_options entry
        options = options_from(frozen.grading if frozen is not None else None)
        return await agent.run_trial(self.task_of(case), session, options)

    def preflight(self, cases: list[Case]) -> list[str]:
        """Problems that would stop these cases from running on this host (empty: ready)."""
        mine = [c for c in cases if c.benchmark == self.id]
        return environment.preflight([self.task_of(c) for c in mine]) if mine else []

    # -- grading -------------------------------------------------------------------------------
    def grade(self, case: Case, text: str | None) -> Grade:
        raise InvalidInput(f"benchmark {self.id} is graded from its trial (reward), not from a text")

    def grade_conversation(self, case: Case, conversation: ConversationRecord) -> Grade:
        trial = TrialResult.model_validate(conversation.outputs)
        details = trial.model_dump()
        reward = trial.reward
        if conversation.error_class or not isinstance(reward, int | float) or isinstance(reward, bool):
            return Grade(correct=False, status="trial_error", extracted=None, details=details)
        correct = float(reward) == 1.0
        return Grade(correct=correct, status="correct" if correct else "incorrect", extracted=reward, details=details)

    def published_conversation(self, case: Case, conversation: ConversationRecord, grade: Grade | None,
                               grader: str | None = None) -> TerminalPublished:
        return terminal_grade(conversation)

    def conversation_row(self, conversation: ConversationRecord) -> dict[str, JsonValue]:
        trial = TrialResult.model_validate(conversation.outputs)
        return {"reward": trial.reward, "stop_reason": trial.stop_reason, "turns": trial.turns,
                "commands": trial.commands, "task_image_id": trial.receipt.get("image_id") if trial.receipt else None}

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        return _figures(grades).model_dump()

    def report_metrics(self, grades: list[StoredGrade | None], error_classes: list[str | None]) -> dict[str, JsonValue]:
        """A trial that ended without a reward fails its cell (``error_class`` trial_error) before any
        grade: it counts as a trial error, not as ungraded."""
        out = _figures(grades)
        failed = sum(1 for g, e in zip(grades, error_classes, strict=True) if g is None and e == "trial_error")
        return out.model_copy(update={"trial_errors": out.trial_errors + failed,
                                      "ungraded": out.ungraded - failed}).model_dump()

    def notices(self) -> list[str]:
        return ["Public tasks: results cannot be called contamination-free.",
                f"Scored with sr-bench's pinned agent {AGENT} (one terminal tool, max 100 turns, 30 s per command): "
                "an agent+model score, not comparable to Harbor leaderboard pairs.",
                "Task images are built by sr-bench from each task's Dockerfile with local base images and no build "
                "network; containers have no network although tasks set allow_internet."]


def _figures(grades: list[StoredGrade | None]) -> TrialFigures:
    """Terminal-Bench's figures from one target's planned cells' grades (None: no grade)."""
    trials = [(g, TrialDetails.model_validate(g.details)) for g in grades if g is not None]
    rewards = [t.reward for g, t in trials if g.status in ("correct", "incorrect") and t.reward is not None]
    stops: dict[str, int] = {}
    for _, t in trials:
        reason = t.stop_reason
        if reason:
            stops[reason] = stops.get(reason, 0) + 1
    return TrialFigures(mean_reward=round(sum(rewards) / len(rewards), 6) if rewards else None,
                        trials_with_reward=len(rewards),
                        trial_errors=sum(1 for g in grades if g and g.status == "trial_error"),
                        ungraded=sum(1 for g in grades if g is None), stop_reasons=dict(sorted(stops.items())))
