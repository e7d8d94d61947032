"""MCQ (`sr-bench-mcq-final-v2`) and ARC (`sr-bench-arc-exact-v1`) grading rules."""

from __future__ import annotations

import pytest

from srbench.benchmarks.graders import grade_arc, grade_mcq, visible_text
from srbench.errors import InvalidInput


def g(text, answer="C", n=4):
    return grade_mcq(text, answer, n)


@pytest.mark.parametrize(
    ("text", "answer", "n", "letter"),
    [
        ("Let me think.\nThe answer is (C)", "C", 10, "C"),
        ("reasoning...\nAnswer: D", "D", 4, "D"),
        ("**The answer is (E)**", "E", 10, "E"),
        ("so it follows.\nanswer: $B$", "B", 4, "B"),
        ("Work.\nAnswer:**D**", "D", 4, "D"),
        ("**Answer:** B", "B", 4, "B"),
        ("Hence the final answer is \\boxed{B}.", "B", 4, "B"),
        ("$\\boxed{\\text{C}}$", "C", 4, "C"),
        ("The correct answer is option A.", "A", 4, "A"),
        ("Final Answer: (J)", "J", 10, "J"),
        ("ANSWER: C\nbecause reasons", "C", 4, "C"),
        ("The answer is B. C is wrong because of x.", "B", 4, "B"),
        ("I first thought the answer is B, and after checking, the answer is B.", "B", 4, "B"),
        ("Answer: I'm fairly sure the answer is B", "B", 10, "B"),       # pronoun I is not option I
        ("Answer: I think so. The answer is (C)", "C", 10, "C"),
        ("The answer is (I)", "I", 10, "I"),
    ],
)
def test_mcq_single_letter(text, answer, n, letter):
    grade = grade_mcq(text, answer, n)
    assert (grade.status, grade.extracted, grade.correct) == ("correct", letter, True)


def test_mcq_incorrect_letter():
    grade = g("The answer is (A)")
    assert (grade.status, grade.correct, grade.extracted) == ("incorrect", False, "A")


@pytest.mark.parametrize(
    "text",
    [
        "The answer is (A).\nOn reflection, Answer: C",
        "The answer is A or B",
        "The final answer is A/B",
        "The answer is (A), (C)",
        "B\n\nThe answer is (C)",
    ],
)
def test_mcq_ambiguous(text):
    grade = g(text)
    assert grade.status == "ambiguous" and not grade.correct and grade.extracted is None


@pytest.mark.parametrize(
    "text",
    [
        "I do not know.",
        "The answer is (E)",                         # beyond the four options
        "Answer: the second one",
        "",
        "The answer is a difficult one",             # lower-case words are never choices
        "<think>The answer is C",                    # unclosed think: no final answer
    ],
)
def test_mcq_unparsed(text):
    grade = g(text)
    assert grade.status == "unparsed" and not grade.correct


def test_mcq_out_of_range_recorded_and_none_text():
    grade = g("The answer is (E)")
    assert grade.details["ignored"] == ["E"]
    none = g(None)
    assert none.status == "unparsed" and none.details["reason"] == "no answer text"


def test_mcq_out_of_range_does_not_make_ambiguous():
    grade = g("The answer is (C) or (G)")
    assert grade.status == "correct" and grade.details["ignored"] == ["G"]


def test_mcq_strict_format():
    assert g("C").strict_format is True
    assert g("(C)").strict_format is True
    assert g("**C**").strict_format is True
    assert g("Answer: C").strict_format is True
    assert g("C\nbecause").strict_format is False
    assert g("The answer is (C)").strict_format is False


def test_mcq_think_blocks():
    assert g("<think>The answer is A</think>\nThe answer is (C)").status == "correct"
    assert g("reasoning without opening tag, answer is A </think> Answer: C").status == "correct"
    assert visible_text("<think>x") is None


def test_mcq_reference_validated():
    with pytest.raises(InvalidInput):
        grade_mcq("A", "E", 4)
    with pytest.raises(InvalidInput):
        grade_mcq("A", "A", 1)


# -- ARC -----------------------------------------------------------------------------------------
EXPECTED = [[[1, 2], [3, 4]], [[0]]]


def test_arc_whole_json_correct():
    grade = grade_arc("[[[1,2],[3,4]],[[0]]]", EXPECTED)
    assert grade.status == "correct" and grade.correct and grade.strict_format


def test_arc_json_in_prose():
    text = "The rule is to keep colours. Grid [1] was easy.\nMy answer: [[[1, 2], [3, 4]], [[0]]] done."
    grade = grade_arc(text, EXPECTED)
    assert grade.status == "correct" and grade.details["found_in"] == "prose" and not grade.strict_format


def test_arc_fenced():
    text = "Here it is:\n```json\n[[[1,2],[3,4]],\n [[0]]]\n```\nThanks."
    grade = grade_arc(text, EXPECTED)
    assert grade.status == "correct" and grade.details["found_in"] == "fence"


def test_arc_wrong_values_incorrect():
    assert grade_arc("[[[1,2],[3,5]],[[0]]]", EXPECTED).status == "incorrect"
    assert grade_arc("[[[1,2],[3,4]]]", EXPECTED).status == "incorrect"       # missing a test output


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[[1,2],[3,4]]", "every row"),                     # a bare grid, not a list of grids
        ("[[[1,2],[3]]]", "rectangular"),
        ("[[[1,2],[3,10]]]", "0-9"),
        ("[[[1,-1]]]", "0-9"),
        ("[[[1.5]]]", "0-9"),
        ("[[[true]]]", "0-9"),
        ("[]", "non-empty"),
        ("[[]]", "non-empty"),
        ('{"output": [[1]]}', "non-empty JSON list"),
    ],
)
def test_arc_invalid_shapes(text, reason):
    grade = grade_arc(text, EXPECTED)
    assert grade.status == "invalid" and not grade.correct and reason in grade.details["reason"]


@pytest.mark.parametrize("text", ["no grid here", "[see above", None, "<think>[[[1]]]"])
def test_arc_unparsed(text):
    assert grade_arc(text, EXPECTED).status == "unparsed"


def test_arc_deep_nesting_is_safe():
    assert grade_arc("[" * 100000, EXPECTED).status == "unparsed"
    assert grade_arc("[" * 5000 + "]" * 5000, EXPECTED).status in {"invalid", "unparsed"}


def test_arc_reference_validated():
    with pytest.raises(InvalidInput):
        grade_arc("[[[1]]]", [[[1, 2], [3]]])
