"""Golden fidelity: every grader against a hand-written corpus (≥ 40 answers per benchmark) whose verdicts
were derived by reading the rules — sr-bench's own and the published upstream one — and an adapter
drift check: a grader's outputs on its corpus are pinned per grader version, so a change in behaviour
without a new version fails here."""

from __future__ import annotations

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.judge import JUDGE_GRADER, JudgeError
from srbench.benchmarks.official_judges import HLE_OFFICIAL, SIMPLEQA_AUTORATER
from srbench.benchmarks.published import ARC_PASS2_RULE, HLE_RULE, SIMPLEQA_RULE, verdict_grade
from srbench.benchmarks.published_grades import published_json
from srbench.cas.digest import digest_json
from srbench.schemas.dataset import Case, CaseMetadata, Message

from .golden.arc import ARC
from .golden.arc_pass2 import PASS2, conversation
from .golden.judged import HLE, SIMPLEQA
from .golden.mcq import GPQA, MMLU


def case(benchmark: str, answer, **meta) -> Case:
    return Case(id=f"{benchmark}/golden", benchmark=benchmark, messages=[Message(role="user", content="Q?")],
                answer=answer, metadata=CaseMetadata(stratum="all", **meta))


def test_corpora_are_big_enough() -> None:
    for rows in (MMLU, GPQA, ARC, PASS2, SIMPLEQA, HLE):
        assert len(rows) >= 40


# -- multiple choice -----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "answer", "n", "status", "letter", "p_letter", "p_step", "p_score"), MMLU)
def test_mmlu_pro_golden(text, answer, n, status, letter, p_letter, p_step, p_score) -> None:
    bench, c = get("mmlu-pro"), case("mmlu-pro", answer, option_count=n)
    g = bench.grade(c, text)
    assert (g.status, g.extracted) == (status, letter)
    p = published_json(bench.published_grade(c, text, g))
    assert (p["extracted"], p["step"], p["score"]) == (p_letter, p_step, p_score)
    assert p["fallback"] is (p_letter is None)


@pytest.mark.parametrize(("text", "answer", "status", "letter", "p_letter", "p_score"), GPQA)
def test_gpqa_golden(text, answer, status, letter, p_letter, p_score) -> None:
    bench, c = get("gpqa-diamond"), case("gpqa-diamond", answer, option_count=4)
    g = bench.grade(c, text)
    assert (g.status, g.extracted) == (status, letter)
    p = published_json(bench.published_grade(c, text, g))
    assert (p["extracted"], p["score"]) == (p_letter, p_score)


def test_mcq_no_reply_is_wrong_under_both_rules() -> None:
    bench, c = get("mmlu-pro"), case("mmlu-pro", "G", option_count=10)
    assert bench.grade(c, None).status == "unparsed"
    assert published_json(bench.published_grade(c, None, None))["score"] == 0       # no fallback without a reply


# -- ARC -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected", "status", "solved"), ARC)
def test_arc_golden(text, expected, status, solved) -> None:
    bench, c = get("arc-agi-2"), case("arc-agi-2", expected, test_count=len(expected))
    g = bench.grade(c, text)
    assert g.status == status and g.correct is (status == "correct")
    p = published_json(bench.published_grade(c, text, g))
    assert p["solved"] == solved
    assert p["score"] == sum(solved) / len(solved) and p["test_inputs"] == len(expected)


def test_arc_published_summary_counts_inputs_and_differences() -> None:
    bench = get("arc-agi-2")
    cells = []
    for text, expected, status, _ in ARC:
        c = case("arc-agi-2", expected)
        cells.append((status == "correct", bench.published_grade(c, text, bench.grade(c, text))))
    s = bench.published_summary(cells).stored()
    solved = sum(sum(r[3]) for r in ARC)
    assert s["test_inputs"] == sum(len(r[1]) for r in ARC) and s["solved_inputs"] == solved
    assert s["score"] == pytest.approx(sum(sum(r[3]) / len(r[3]) for r in ARC) / len(ARC))
    differ = sum(1 for r in ARC if (r[2] == "correct") != (sum(r[3]) == len(r[3])) or 0 < sum(r[3]) < len(r[3]))
    assert s["graded_differently"] == differ and differ > 0


@pytest.mark.parametrize(("first", "second", "expected", "status", "solved"), PASS2)
def test_arc_pass2_golden(first, second, expected, status, solved) -> None:
    bench, c = get("arc-agi-2"), case("arc-agi-2", expected, test_count=len(expected))
    conv = conversation(first, second)
    g = bench.grade_conversation(c, conv)                  # sr-bench: the first attempt, all-or-nothing
    assert g.status == status and g.correct is (status == "correct")
    p = published_json(bench.published_conversation(c, conv, g))           # pass@2 per test input
    assert p["rule"] == ARC_PASS2_RULE and p["solved"] == solved
    assert p["score"] == sum(solved) / len(solved) and p["attempts"] == (1 if second is None else 2)


def test_arc_pass2_summary_over_the_corpus() -> None:
    bench = get("arc-agi-2")
    cells = []
    for first, second, expected, status, _ in PASS2:
        c, conv = case("arc-agi-2", expected), conversation(first, second)
        cells.append((status == "correct", bench.published_conversation(c, conv, bench.grade_conversation(c, conv))))
    s = bench.published_summary(cells).stored()
    assert s["rule"] == ARC_PASS2_RULE
    assert s["score"] == pytest.approx(sum(sum(r[4]) / len(r[4]) for r in PASS2) / len(PASS2))
    assert s["solved_inputs"] == sum(sum(r[4]) for r in PASS2) and s["test_inputs"] == sum(len(r[2]) for r in PASS2)
    higher = sum(1 for r in PASS2 if sum(r[4]) / len(r[4]) > float(r[3] == "correct"))
    lower = sum(1 for r in PASS2 if sum(r[4]) / len(r[4]) < float(r[3] == "correct"))
    assert (s["published_higher"], s["published_lower"]) == (higher, lower) and lower == 0 and higher > 20


# -- judged --------------------------------------------------------------------------------------
def _judged(bench, c, cand, reply, grader=None) -> tuple[str, dict]:
    try:
        g = bench.grade_judged(c, cand, reply, grader)
    except JudgeError:
        return "judge_error", {}
    return g.status, g.details


@pytest.mark.parametrize(("cand", "ref", "verdict", "official_reply", "official"), SIMPLEQA)
def test_simpleqa_golden(cand, ref, verdict, official_reply, official) -> None:
    bench, c = get("simpleqa-verified"), case("simpleqa-verified", "Paris")
    assert _judged(bench, c, cand, ref)[0] == verdict
    assert _judged(bench, c, cand, official_reply, SIMPLEQA_AUTORATER)[0] == official


def _f1(verdicts: list[str]) -> tuple[float, float]:
    """F1 by the paper's formula (research notes §7), written out here: (f1, accuracy)."""
    n = len(verdicts)
    correct = verdicts.count("correct")
    attempted = correct + verdicts.count("incorrect")
    acc, cga = correct / n, (correct / attempted if attempted else 0.0)
    return (2 * acc * cga / (acc + cga) if acc + cga else 0.0), acc


@pytest.mark.parametrize(("grader", "column"), [(JUDGE_GRADER, 2), (SIMPLEQA_AUTORATER, 4)])
def test_simpleqa_published_f1_over_the_corpus(grader, column) -> None:
    bench = get("simpleqa-verified")
    verdicts = [r[column] for r in SIMPLEQA]
    cells = [(v == "correct", None if v == "judge_error" else verdict_grade(SIMPLEQA_RULE, v)) for v in verdicts]
    s = bench.published_summary(cells, grader).stored()
    f1, acc = _f1([v if v != "judge_error" else "not_attempted" for v in verdicts])
    assert s["rule"] == SIMPLEQA_RULE and s["metric"] == "f1" and s["judge"] == grader
    assert s["score"] == pytest.approx(f1) and s["accuracy"] == pytest.approx(acc) and f1 != acc
    assert s["graded_differently"] == 0            # same verdicts per answer: only the metric differs


@pytest.mark.parametrize(("cand", "ref", "verdict", "official_reply", "official", "confidence"), HLE)
def test_hle_golden(cand, ref, verdict, official_reply, official, confidence) -> None:
    bench, c = get("hle"), case("hle", "42")
    assert _judged(bench, c, cand, ref)[0] == verdict
    status, details = _judged(bench, c, cand, official_reply, HLE_OFFICIAL)
    assert status == official
    if confidence is not None:
        assert details["confidence"] == pytest.approx(confidence)
        assert details["grader"] == HLE_OFFICIAL


def test_hle_published_accuracy_needs_the_official_judge() -> None:
    bench = get("hle")
    ref = bench.published_summary([(r[2] == "correct", None) for r in HLE], JUDGE_GRADER).stored()
    assert ref["rule"] is None and ref["score"] is None and HLE_OFFICIAL in ref["reason"]
    cells = [(r[4] == "correct", verdict_grade(HLE_RULE, None if r[4] == "judge_error" else r[4])) for r in HLE]
    s = bench.published_summary(cells, HLE_OFFICIAL).stored()
    assert s["rule"] == HLE_RULE
    assert s["score"] == pytest.approx(sum(r[4] == "correct" for r in HLE) / len(HLE))


# -- adapter drift -------------------------------------------------------------------------------
def _outputs(benchmark: str, grader: str | None = None) -> list:
    bench = get(benchmark)
    out: list = []
    if benchmark in ("mmlu-pro", "gpqa-diamond"):
        rows = MMLU if benchmark == "mmlu-pro" else [(t, a, 4, *rest) for t, a, *rest in GPQA]
        for text, answer, n, *_ in rows:
            c = case(benchmark, answer, option_count=n)
            g = bench.grade(c, text)
            out.append([g.status, g.extracted, g.strict_format, published_json(bench.published_grade(c, text, g))])
    elif benchmark == "arc-agi-2":
        for text, expected, *_ in ARC:
            c = case(benchmark, expected)
            g = bench.grade(c, text)
            out.append([g.status, g.extracted, g.strict_format, published_json(bench.published_grade(c, text, g))])
    else:
        rows = SIMPLEQA if benchmark == "simpleqa-verified" else HLE
        for cand, ref, _, official, *_ in rows:
            status, details = _judged(bench, case(benchmark, "Paris"), cand, official if grader else ref, grader)
            out.append([status, details])      # the template's SHA-256 included: its text is pinned too
    return out


# (benchmark, grader version) → digest of the grader's outputs (sr-bench's grade and the published
# rule's) on the golden corpus. A behaviour change must come with a new version and a new line here.
PINNED = {
    ("mmlu-pro", "sr-bench-mcq-final-v2", "mmlu-pro-official-chain-v1"):
        "b3:8b3f6bb90db0b78551e11cc75eb8664eae9f7bc32b207471e1539df2f2352b49",
    ("gpqa-diamond", "sr-bench-mcq-final-v2", "gpqa-simple-evals-regex-v1"):
        "b3:2134ff754eadd539769ee8a5ecbc5542f883a73418a1e59e902a4a44d029bb9a",
    ("arc-agi-2", "sr-bench-arc-exact-v1", "arc-agi-2-pass-at-2-v1"):
        "b3:dd125fe4655fb7254707fa2e35325c671299334fe6551336ff6fb0bb04b350f9",
    ("arc-agi-2", "sr-bench-arc-exact-v1", "arc-agi-2-per-test-input-v1"):
        "b3:bd28af176089d5f4834d6deeec277e4f85d1882d40d2a6d912c2378013ef235a",
    ("simpleqa-verified", JUDGE_GRADER, None):
        "b3:75ead1528ca88c385f132805a30b2140ad8885e59835d8a29c52052bc02575b4",
    ("simpleqa-verified", SIMPLEQA_AUTORATER, None):
        "b3:bdc2a0f80a0bc1526f9e075fc1081ea77b6f913fc59552da7b4cbce3dbae3b81",
    ("hle", JUDGE_GRADER, None):
        "b3:fc34a907a75e7faf6091f3cbf7bd223ec5d8a4170ebf61bb8ffe25b9280447a3",
    ("hle", HLE_OFFICIAL, None):
        "b3:ddd9bfd02dfcbe8607cfbb1ea521f20fff010f32f55d387299642f9e6c71dd24",
}


@pytest.mark.parametrize("benchmark", ["mmlu-pro", "gpqa-diamond", "arc-agi-2", "simpleqa-verified", "hle"])
def test_no_adapter_drift(benchmark) -> None:
    bench = get(benchmark)
    graders = list(getattr(bench, "judge_graders", (bench.grader_version,)))
    for grader in graders:
        judged = getattr(bench, "needs_judge", False)
        key = (benchmark, grader, None if judged else bench.published_rule)
        digest = digest_json(_outputs(benchmark, grader if judged and grader != JUDGE_GRADER else None))
        assert key in PINNED, (f"{benchmark}: grader/published rule {key[1:]} has no pinned outputs; after "
                               f"checking the golden corpus, pin {digest}")
        assert PINNED[key] == digest, (f"{benchmark}: the outputs of {key[1:]} changed without a new version: "
                                       f"bump the grader (or published rule) version and pin {digest}")


def test_no_adapter_drift_arc_pass2() -> None:
    """The two-attempt cells: sr-bench's first-attempt grade and the pass@2 diagnostic, pinned together."""
    bench = get("arc-agi-2")
    out = []
    for first, second, expected, *_ in PASS2:
        c, conv = case("arc-agi-2", expected), conversation(first, second)
        g = bench.grade_conversation(c, conv)
        out.append([g.status, g.correct, g.extracted, published_json(bench.published_conversation(c, conv, g))])
    key = ("arc-agi-2", bench.grader_version, bench.published_conversation_rule)
    digest = digest_json(out)
    assert key in PINNED, f"arc-agi-2 pass@2: {key[1:]} has no pinned outputs; pin {digest}"
    assert PINNED[key] == digest, (f"arc-agi-2 pass@2: the outputs of {key[1:]} changed without a new version: "
                                   f"bump the grader (or published rule) version and pin {digest}")
