"""The public case view is the answer model CaseView (issue 26, item 1), dumped at the route's edge with
the same JSON as the dict it replaced: `input_notice` only when the case has no displayable input, and
never the reference answer."""

from __future__ import annotations

from srbench.schemas.dataset import Case
from srbench.service.datasets.views import public_case


def _case(content: str) -> Case:
    return Case.model_validate({"id": "c1", "benchmark": "mmlu-pro", "answer": "B",
                                "messages": [{"role": "user", "content": content},
                                             {"role": "assistant", "content": "hidden"}],
                                "metadata": {"stratum": "law", "split": "dev"}})


def test_a_case_with_a_question_has_no_notice_and_no_answer() -> None:
    view = public_case(_case("What is 2+2?")).model_dump(mode="json", exclude_unset=True)
    assert view == {"id": "c1", "benchmark": "mmlu-pro", "category": "law", "question": "What is 2+2?",
                    "messages": [{"role": "user", "content": "What is 2+2?"}], "input_status": "available",
                    "metadata": {"stratum": "law", "split": "dev"}}


def test_a_case_without_input_says_so() -> None:
    view = public_case(_case("  ")).model_dump(mode="json", exclude_unset=True)
    assert view["input_status"] == "unavailable" and view["question"] == "" and view["messages"] == []
    assert view["input_notice"].startswith("This prepared task has no displayable input")
