"""A plan's sampling and effective_params are the GenerationParams model (issue 26, item 1), serialised
as the dicts they were: only the fields given, values as given, so plan digests do not change."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from srbench.cas.digest import canonical_json
from srbench.schemas.generation import GenerationParams
from srbench.schemas.plan import Manifest
from srbench.schemas.target import Target
from srbench.stages.plan.roles import effective_params

GIVEN = {"temperature": 0, "top_p": 0.95, "seed": None, "stop": ["</s>"], "max_tokens": 512,
         "chat_template_kwargs": {"enable_thinking": False, "nested": [1, 2.5]}, "reasoning_effort": "low"}


def test_a_field_given_with_the_wrong_type_is_refused_by_name_never_converted() -> None:
    """GenerationParams alone would read ``true`` as 1 and ``"7"`` as 7: where a user writes them, refused."""
    base = {"version": "sr-bench-1.0", "profile": "smoke", "seed": 1, "dataset": {"sha256": "a" * 64},
            "targets": [{"id": "x"}]}
    for sampling, field in (({"temperature": True}, "temperature"), ({"seed": "7"}, "seed"),
                            ({"ignore_eos": "true"}, "ignore_eos"), ({"min_tokens": 2.5}, "min_tokens")):
        with pytest.raises(ValidationError, match=rf"sampling\.{field} has the wrong type"):
            Manifest.model_validate({**base, "sampling": sampling})
        with pytest.raises(ValidationError, match=rf"request_params\.{field} has the wrong type"):
            Target(id="t", kind="single", base_url="http://127.0.0.1:9/v1", model="m", request_params=sampling)
    assert Manifest.model_validate({**base, "sampling": {"temperature": 1, "top_p": 0.5}}).sampling.body() == \
        {"temperature": 1, "top_p": 0.5}


def test_only_the_given_fields_are_serialised_as_given() -> None:
    params = GenerationParams.model_validate(GIVEN)
    assert params.body() == GIVEN
    assert canonical_json(params.model_dump(mode="json")) == canonical_json(GIVEN)
    assert GenerationParams().body() == {}
    assert isinstance(params.body()["temperature"], int)          # 0 stays 0, never 0.0


def test_an_explicit_null_is_not_an_absent_field() -> None:
    assert not GenerationParams(seed=None).same(GenerationParams())
    assert GenerationParams(temperature=0).same(GenerationParams.model_validate({"temperature": 0}))


def test_effective_params_are_greedy_and_capped_then_sampling_then_the_target() -> None:
    target = Target(id="t", kind="single", base_url="http://127.0.0.1:9/v1", model="m",
                    request_params={"temperature": 0.6, "top_k": 20})
    got = effective_params(GenerationParams(max_tokens=100, seed=7), target, 4096)
    assert got.body() == {"temperature": 0.6, "max_tokens": 100, "seed": 7, "top_k": 20}


def test_a_manifest_checks_its_sampling_as_before() -> None:
    base = {"version": "sr-bench-1.0", "profile": "smoke", "seed": 1, "dataset": {"sha256": "a" * 64},
            "targets": [{"id": "x"}]}
    assert Manifest.model_validate(base).sampling.body() == {}
    with pytest.raises(ValidationError, match="sampling has unsupported field"):
        Manifest.model_validate({**base, "sampling": {"beam_width": 2}})
    with pytest.raises(ValidationError, match="sampling.temperature must be within"):
        Manifest.model_validate({**base, "sampling": {"temperature": 3}})
