"""Golden fidelity for the graders of the execution and agent benchmarks: their pure verdict logic outside
the sandbox (LiveCodeBench's output comparison and extraction, SciCode's extraction, Terminal-Bench's
reward files, τ³'s reward), each against a hand-written corpus whose verdicts come from the upstream
rules (golden/code.py, golden/agent.py); the published-rule figures read from the same stored grades;
and an adapter-drift pin per grader (as test_golden.py)."""

from __future__ import annotations

from importlib import resources

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.livecodebench import extract_code as lcb_extract
from srbench.benchmarks.published import LCB_RULE, SCICODE_RULE, TAU3_RULE, TB_RULE
from srbench.benchmarks.published_grades import published_json, read_published
from srbench.benchmarks.scicode_protocol import extract_code as scicode_extract
from srbench.benchmarks.tau import reward as tau_reward
from srbench.benchmarks.tau.models import Criteria, TauOutputs
from srbench.benchmarks.terminal_bench.verifier import RewardError, parse_reward
from srbench.cas.digest import digest_json
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case, CaseMetadata, Message

from .fixtures import conversation_record, stored_grade
from .golden.agent import TAU3_REWARD, TB_REWARD
from .golden.code import LCB_EXTRACT, LCB_OUTPUT, SCICODE_EXTRACT


def _harness(name: str) -> dict:
    """A sandbox child's functions, without running it (its last line calls ``main(JOB)``)."""
    source = resources.files("srbench.sandbox").joinpath("harness", name).read_text()
    body, tail = source.rsplit("\nmain(JOB)", 1)
    assert "noqa" in tail
    ns: dict = {"__name__": "lcb_child_under_test"}
    exec(compile(body, name, "exec"), ns)       # noqa: S102 - sr-bench's own harness source
    return ns


LCB = _harness("lcb_child.py")


def case(benchmark: str, answer, **meta) -> Case:
    return Case(id=f"{benchmark}/golden", benchmark=benchmark, messages=[Message(role="user", content="Q?")],
                answer=answer, metadata=CaseMetadata(stratum="all", **meta))


def test_corpora_are_big_enough() -> None:
    for rows in (LCB_OUTPUT, SCICODE_EXTRACT, TB_REWARD, TAU3_REWARD):
        assert len(rows) >= 40


# -- LiveCodeBench ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("got", "want", "match"), LCB_OUTPUT)
def test_lcb_output_comparison(got, want, match) -> None:
    ok, why = LCB["outputs_match"](got, want)
    assert ok is match and (why is None) is match


@pytest.mark.parametrize(("reply", "code"), LCB_EXTRACT)
def test_lcb_extraction(reply, code) -> None:
    assert lcb_extract(reply) == code


# stored sandbox grades → (sr-bench correct, published pass@1): they differ only on a cut reply
LCB_GRADES = [
    ({"correct": True, "status": "correct", "details": {"verdict": "passed"}}, 1.0),
    ({"correct": False, "status": "incorrect", "details": {"verdict": "wrong_answer"}}, 0.0),
    ({"correct": False, "status": "incorrect", "details": {"verdict": "time_limit"}}, 0.0),
    ({"correct": False, "status": "failed", "details": {"verdict": "failed", "reason": "no fenced program"}}, 0.0),
    ({"correct": False, "status": "output_limit", "details": {"verdict": "passed"}}, 1.0),
]


def test_lcb_published_pass_at_1_from_stored_grades() -> None:
    bench = get("livecodebench")
    c = case("livecodebench", {"mode": "stdin", "fn_name": None, "tests": []})
    cells = [(g["correct"], bench.published_stored(c, stored_grade(g, sandbox=None))) for g, _ in LCB_GRADES]
    assert [p.score for _, p in cells] == [s for _, s in LCB_GRADES]
    cells.append((False, bench.published_grade(c, None, None)))         # a planned cell never graded
    s = bench.published_summary(cells).stored()
    assert s["rule"] == LCB_RULE and s["metric"] == "pass@1" and s["score"] == pytest.approx(2 / 6)
    assert s["graded_differently"] == 1 and s["published_higher"] == 1 and "same rule" in s["note"]


# -- SciCode ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("reply", "code"), SCICODE_EXTRACT)
def test_scicode_extraction(reply, code) -> None:
    assert scicode_extract(reply) == code


def test_scicode_published_resolve_and_sub_step_rates() -> None:
    bench = get("scicode")
    steps = [{"step_number": "1.1", "test_cases": ["t"]}, {"step_number": "1.2", "test_cases": []},
             {"step_number": "1.3", "test_cases": ["t", "t"]}]
    c = case("scicode", {"steps": steps})
    grades = [{"correct": True, "status": "correct",
               "details": {"verdict": "passed", "sub_steps_passed": 2, "sub_steps_scored": 2}},
              {"correct": False, "status": "incorrect",
               "details": {"verdict": "wrong_answer", "sub_steps_passed": 1, "sub_steps_scored": 2}},
              {"correct": False, "status": "output_limit",
               "details": {"verdict": "passed", "sub_steps_passed": 2, "sub_steps_scored": 2}}]
    cells = [(g["correct"], bench.published_stored(c, stored_grade(g, sandbox=None))) for g in grades]
    cells.append((False, bench.published_grade(c, None, None)))         # not graded: 2 scored steps, 0 passed
    s = bench.published_summary(cells).stored()
    assert s["rule"] == SCICODE_RULE and s["metric"] == "resolved"
    assert s["score"] == pytest.approx(2 / 4) and (s["sub_steps_passed"], s["sub_steps_scored"]) == (5, 8)
    assert s["sub_step_pass_rate"] == pytest.approx(5 / 8) and s["graded_differently"] == 1


# -- Terminal-Bench --------------------------------------------------------------------------------
def _tb(txt, js):
    try:
        reward, source, _ = parse_reward(txt, js)
    except RewardError as exc:
        return exc.kind
    return (reward, source)


@pytest.mark.parametrize(("txt", "js", "expected"), TB_REWARD)
def test_terminal_bench_reward_files(txt, js, expected) -> None:
    assert _tb(txt, js) == expected


def _tb_conversation(expected) -> ConversationRecord:
    if isinstance(expected, str):           # a trial error: the trial stores no reward
        return conversation_record(outputs={"reward": None}, error_class="trial_error", error=expected)
    return conversation_record(outputs={"reward": expected[0], "reward_source": expected[1]})


def test_terminal_bench_sr_bench_and_published_over_the_corpus() -> None:
    bench = get("terminal-bench-2.1")
    c = case("terminal-bench-2.1", None)
    cells = []
    for _, _, expected in TB_REWARD:
        conv = _tb_conversation(expected)
        g = bench.grade_conversation(c, conv)
        rewarded = not isinstance(expected, str)
        assert g.correct is (rewarded and expected[0] == 1.0)
        assert g.status == ("trial_error" if not rewarded else "correct" if g.correct else "incorrect")
        p = published_json(bench.published_conversation(c, conv, g))
        assert p["rule"] == TB_RULE and p["score"] == (expected[0] if rewarded else 0.0) and p["rewarded"] is rewarded
        cells.append((g.correct, read_published(p)))
    s = bench.published_summary(cells).stored()
    rewards = [e[0] for _, _, e in TB_REWARD if not isinstance(e, str)]
    assert s["score"] == pytest.approx(sum(rewards) / len(TB_REWARD)) and s["metric"] == "mean reward"
    assert s["score_rewarded_only"] == pytest.approx(sum(rewards) / len(rewards)) and s["rewarded"] == len(rewards)
    assert s["graded_differently"] == sum(1 for r in rewards if r not in (0.0, 1.0))


# -- τ³ --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("criteria", "outputs", "value", "status"), TAU3_REWARD)
def test_tau3_reward(criteria, outputs, value, status) -> None:
    r = tau_reward.reward(Criteria.model_validate(criteria), TauOutputs.model_validate(outputs))
    assert (r.reward, r.status, r.success) == (value, status, status == "correct")


def test_tau3_pass_hat_1_is_sr_bench_rule() -> None:
    bench = get("tau3")
    cells = []
    for criteria, outputs, _, status in TAU3_REWARD:
        c, conv = case("tau3", criteria, domain="airline"), conversation_record(outputs=outputs)
        g = bench.grade_conversation(c, conv)
        assert g.correct is (status == "correct")
        p = published_json(bench.published_conversation(c, conv, g))
        assert p["rule"] == TAU3_RULE and p["score"] == float(status == "correct") and p["ran"] is True
        cells.append((g.correct, read_published(p)))
    failed = conversation_record(error_class="environment_error", error="the tau2 child exited")
    c = case("tau3", TAU3_REWARD[0][0], domain="airline")
    cells.append((False, bench.published_conversation(c, failed, bench.grade_conversation(c, failed))))
    s = bench.published_summary(cells).stored()
    wins = sum(r[3] == "correct" for r in TAU3_REWARD)
    assert s["rule"] == TAU3_RULE and s["metric"] == "pass^1" and s["graded_differently"] == 0
    assert s["score"] == pytest.approx(wins / (len(TAU3_REWARD) + 1))              # sr-bench's denominator
    assert s["score_ran_only"] == pytest.approx(wins / len(TAU3_REWARD)) and s["ran"] == len(TAU3_REWARD)
    assert s["note"].startswith("same rule as sr-bench's: pass^1")


# -- adapter drift ---------------------------------------------------------------------------------
def _outputs(benchmark: str) -> list:
    if benchmark == "livecodebench":
        c = case(benchmark, {})
        return [[list(LCB["outputs_match"](g, w)) for g, w, _ in LCB_OUTPUT], [lcb_extract(r) for r, _ in LCB_EXTRACT],
                [published_json(get(benchmark).published_stored(c, stored_grade(g, sandbox=None))) for g, _ in LCB_GRADES]]
    if benchmark == "scicode":
        return [scicode_extract(r) for r, _ in SCICODE_EXTRACT]
    if benchmark == "terminal-bench-2.1":
        bench, c = get(benchmark), case(benchmark, None)
        out = []
        for txt, js, expected in TB_REWARD:
            conv = _tb_conversation(expected)
            g = bench.grade_conversation(c, conv)
            out.append([_tb(txt, js), g.status, g.correct, published_json(bench.published_conversation(c, conv, g))])
        return out
    bench = get("tau3")
    out = []
    for criteria, outputs, _, _ in TAU3_REWARD:
        c, conv = case("tau3", criteria, domain="airline"), conversation_record(outputs=outputs)
        g = bench.grade_conversation(c, conv)
        out.append([g.status, g.correct, g.details, published_json(bench.published_conversation(c, conv, g))])
    return out


# (benchmark, grader version, published rule) → digest of the outputs on the corpora above
PINNED = {
    ("livecodebench", "sr-bench-lcb-sandbox-v1", LCB_RULE):
        "b3:f3e5f266cda4c38acf85a94f5f850d8b5b0a33df5f5d180b3a21f6732c974bef",
    ("scicode", "sr-bench-scicode-sandbox-v1", SCICODE_RULE):
        "b3:cdcd34b56f9f74ac30132062aec67dbbdd2ba27eb84d09722e6fae65bf40ae58",
    ("terminal-bench-2.1", "sr-bench-terminal-reward-v1", TB_RULE):
        "b3:6828a88276e9aa29febbb21d56a38248ffdfd20c47bbe13148fc14cfe3320971",
    ("tau3", "sr-bench-tau3-reward-v1", TAU3_RULE):
        "b3:053e4cd1a70c5aa31ddd465a0555a447b79aabe418976f40aec66d8d50c266b3",
}


@pytest.mark.parametrize("benchmark", ["livecodebench", "scicode", "terminal-bench-2.1", "tau3"])
def test_no_adapter_drift(benchmark) -> None:
    bench = get(benchmark)
    key = (benchmark, bench.grader_version, bench.published_rule)
    digest = digest_json(_outputs(benchmark))
    assert key in PINNED, f"{benchmark}: grader/published rule {key[1:]} has no pinned outputs; pin {digest}"
    assert PINNED[key] == digest, (f"{benchmark}: the outputs of {key[1:]} changed without a new version: "
                                   f"bump the grader (or published rule) version and pin {digest}")
