"""Token buckets from every usage shape (hand-computed) and every contradiction."""

from __future__ import annotations

import pytest

from srbench.errors import SrBenchError
from srbench.schemas.call import Usage
from srbench.targets.metering import UsageError, parse_usage, usage_shape


def U(i: int, c: int, w: int, o: int) -> Usage:
    return Usage(input=i, cached_input=c, cache_write=w, output=o)


@pytest.mark.parametrize("raw, expected, shape", [
    # OpenAI: input = P − R − W
    ({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
      "prompt_tokens_details": {"cached_tokens": 30}}, U(70, 30, 0, 20), "openai"),
    ({"prompt_tokens": 100, "completion_tokens": 20,
      "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 10}}, U(60, 30, 10, 20), "openai"),
    ({"prompt_tokens": 100, "completion_tokens": 20,
      "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 100}}, U(0, 0, 100, 20), "openai"),
    # two write fields that agree are one write count
    ({"prompt_tokens": 50, "completion_tokens": 1,
      "prompt_tokens_details": {"cache_write_tokens": 8, "cache_creation_tokens": 8}}, U(42, 0, 8, 1), "openai"),
    # a top-level write field next to OpenAI names
    ({"prompt_tokens": 50, "completion_tokens": 1, "cache_creation_input_tokens": 5}, U(45, 0, 5, 1), "openai"),
    # DeepSeek's hit count, alone or agreeing with cached_tokens
    ({"prompt_tokens": 64, "completion_tokens": 2, "prompt_cache_hit_tokens": 40,
      "prompt_cache_miss_tokens": 24}, U(24, 40, 0, 2), "openai"),
    ({"prompt_tokens": 64, "completion_tokens": 2, "prompt_cache_hit_tokens": 40,
      "prompt_tokens_details": {"cached_tokens": 40}}, U(24, 40, 0, 2), "openai"),
    # a gateway reporting OpenAI names plus Anthropic-style cache counts: P is still the whole prompt
    ({"prompt_tokens": 1300, "completion_tokens": 9, "cache_read_input_tokens": 1000,
      "cache_creation_input_tokens": 200, "prompt_tokens_details": {"cached_tokens": 1000}},
     U(100, 1000, 200, 9), "openai"),
    # vLLM without details (or with null details): nothing cached reported
    ({"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}, U(12, 0, 0, 5), "openai-bare"),
    ({"prompt_tokens": 12, "completion_tokens": 5, "prompt_tokens_details": None}, U(12, 0, 0, 5), "openai-bare"),
    ({"prompt_tokens": 12, "completion_tokens": 0, "prompt_tokens_details": {"cached_tokens": None}},
     U(12, 0, 0, 0), "openai-bare"),
    # integral floats are integers
    ({"prompt_tokens": 12.0, "completion_tokens": 5.0}, U(12, 0, 0, 5), "openai-bare"),
    # Anthropic: input_tokens EXCLUDES cache reads and writes (R + W may exceed it)
    ({"input_tokens": 50, "output_tokens": 7, "cache_read_input_tokens": 1000,
      "cache_creation_input_tokens": 200}, U(50, 1000, 200, 7), "anthropic"),
    ({"input_tokens": 50, "output_tokens": 7}, U(50, 0, 0, 7), "anthropic"),
    ({"input_tokens": 9, "output_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": None},
     U(9, 0, 0, 3), "anthropic"),
    # Responses-style: input_tokens is the whole prompt, details its cached part
    ({"input_tokens": 100, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 60}},
     U(40, 60, 0, 5), "responses"),
])
def test_shapes(raw, expected, shape):
    assert parse_usage(raw) == expected
    assert usage_shape(raw) == shape


@pytest.mark.parametrize("raw", [
    None, {}, {"total_tokens": 9},
    {"prompt_tokens": 10}, {"completion_tokens": 10},
    {"prompt_tokens": None, "completion_tokens": 3},
    {"input_tokens": 10}, {"output_tokens": 4, "cache_read_input_tokens": 3},
    {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 2}},
])
def test_unknown_is_none_never_zero(raw):
    assert parse_usage(raw) is None


def test_absent_shape():
    assert usage_shape(None) == "absent"
    assert usage_shape({}) == "absent"


@pytest.mark.parametrize("raw, words", [
    ({"prompt_tokens": -1, "completion_tokens": 2}, "negative"),
    ({"prompt_tokens": 10, "completion_tokens": -2}, "negative"),
    ({"prompt_tokens": 10.5, "completion_tokens": 2}, "not an integer"),
    ({"prompt_tokens": float("nan"), "completion_tokens": 2}, "not an integer"),
    ({"prompt_tokens": "10", "completion_tokens": 2}, "type str"),
    ({"prompt_tokens": True, "completion_tokens": 2}, "boolean"),
    ({"prompt_tokens": 10, "completion_tokens": False}, "boolean"),
    ({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": -3}}, "negative"),
    ({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 11}}, "exceed"),
    ({"prompt_tokens": 10, "completion_tokens": 2,
      "prompt_tokens_details": {"cached_tokens": 6, "cache_write_tokens": 5}}, "exceed"),
    ({"prompt_tokens": 10, "completion_tokens": 2,
      "prompt_tokens_details": {"cache_write_tokens": 3, "cache_creation_tokens": 4}}, "conflicting cache-write"),
    ({"prompt_tokens": 10, "completion_tokens": 2, "cache_creation_tokens": 1,
      "prompt_tokens_details": {"cache_write_tokens": 2}}, "conflicting cache-write"),
    ({"prompt_tokens": 64, "completion_tokens": 2, "prompt_cache_hit_tokens": 40,
      "prompt_tokens_details": {"cached_tokens": 32}}, "conflicting cache-read"),
    ({"input_tokens": 10, "output_tokens": 2, "cache_creation_input_tokens": 3, "cache_creation_tokens": 4},
     "conflicting cache-write"),
    ({"input_tokens": 10, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 11}}, "exceed"),
    ({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": 5}, "must be an object"),
    ({"prompt_tokens": 10, "completion_tokens": 2, "input_tokens": 10}, "mixes"),
    ({"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 1,
      "input_tokens_details": {"cached_tokens": 1}}, "mixes"),
    # a contradiction is reported even when a count is missing
    ({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 20}}, "exceed"),
])
def test_contradictions_raise(raw, words):
    with pytest.raises(UsageError, match=words):
        parse_usage(raw)


def test_usage_not_an_object():
    with pytest.raises(UsageError, match="must be an object"):
        parse_usage([1, 2])  # type: ignore[arg-type]


def test_usage_error_is_typed():
    assert issubclass(UsageError, SrBenchError)
    assert UsageError("x").code == "invalid_usage"
