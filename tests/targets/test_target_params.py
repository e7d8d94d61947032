"""A target's request_params are JSON checked field by field (schemas/target.py check_generation_params, issue 26
item 1): a non-number min_tokens beside max_tokens is a one-line refusal, no longer a TypeError traceback."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from srbench.schemas.target import Target


def _target(**params: object) -> Target:
    return Target.model_validate({"id": "t", "kind": "single", "base_url": "http://127.0.0.1:1/v1", "model": "m",
                                  "request_params": params})


def test_min_tokens_must_be_a_number_beside_max_tokens() -> None:
    with pytest.raises(ValidationError, match="request_params.min_tokens must be a number"):
        _target(max_tokens=10, min_tokens="5")


def test_min_tokens_above_max_tokens_is_refused_as_before() -> None:
    with pytest.raises(ValidationError, match="request_params.min_tokens must not exceed max_tokens"):
        _target(max_tokens=10, min_tokens=11)
    assert _target(max_tokens=10, min_tokens=10).request_params == {"max_tokens": 10, "min_tokens": 10}


def test_request_params_keep_their_json_as_given() -> None:
    t = _target(temperature=0, chat_template_kwargs={"enable_thinking": False}, stop=["</s>"])
    assert t.model_dump(mode="json")["request_params"] == {"temperature": 0, "stop": ["</s>"],
                                                           "chat_template_kwargs": {"enable_thinking": False}}
