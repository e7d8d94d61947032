"""Metering: turn the usage object of a streamed call into four mutually exclusive token buckets.

The input is the ``usage`` object of the LAST SSE event that carried one. Three shapes are read:

``openai`` / ``openai-bare`` (OpenAI, vLLM, most OpenAI-compatible servers)
    P = ``prompt_tokens`` (the WHOLE prompt, cache reads and writes included), O =
    ``completion_tokens``, R = ``prompt_tokens_details.cached_tokens`` (DeepSeek's top-level
    ``prompt_cache_hit_tokens`` and a gateway's top-level ``cache_read_input_tokens`` are read
    too; several present must agree), W = a cache-write count under
    ``prompt_tokens_details`` or at the top level: ``cache_write_tokens``, ``cache_creation_tokens``,
    ``created_cache_tokens`` or ``cache_creation_input_tokens``.
    Buckets: input = P − R − W, cached_input = R, cache_write = W, output = O.
    ``openai-bare`` is the same field set without any cache field (typical vLLM without prompt
    token details): R = W = 0 is assumed, and the shape records that nothing was reported.

``responses`` (OpenAI Responses-style names)
    ``input_tokens`` is the whole prompt and ``input_tokens_details.cached_tokens`` its cached part:
    input = P − R − W, cached_input = R, cache_write = W, output = ``output_tokens``.

``anthropic`` (Anthropic-style names)
    ``input_tokens`` EXCLUDES cache reads and writes: input = ``input_tokens``, cached_input =
    ``cache_read_input_tokens``, cache_write = ``cache_creation_input_tokens``, output =
    ``output_tokens``. (Upstream sr-bench treated ``input_tokens`` as the whole prompt and so
    mis-bucketed or rejected this shape.)

Unknown is never zero: no usage, or a missing prompt/output count, gives ``None``. A usage object
that contradicts itself raises :class:`UsageError`: a count that is negative, a bool or not an
integer (integral floats such as ``12.0`` are accepted), R + W > P, two cache-write (or cache-read)
fields that disagree, a non-object where an object belongs, or field names of two shapes at once.
``total_tokens`` is not checked: some servers count reasoning tokens in it but not in the output.
"""

from __future__ import annotations

import math

from srbench.errors import SrBenchError
from srbench.schemas.call import Usage
from srbench.schemas.wire import WireJSON

__all__ = ["UsageError", "parse_usage", "usage_shape", "SHAPES"]

SHAPES = ("absent", "openai", "openai-bare", "responses", "anthropic")

_WRITE_FIELDS = ("cache_write_tokens", "cache_creation_tokens", "created_cache_tokens",
                 "cache_creation_input_tokens")
_READ_FIELDS = ("cached_tokens", "prompt_cache_hit_tokens", "cache_read_input_tokens")
_OPENAI_KEYS = ("prompt_tokens", "completion_tokens")
_INPUT_KEYS = ("input_tokens", "output_tokens")
_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


class UsageError(SrBenchError):
    """The usage object reported by an endpoint contradicts itself (the call fails: invalid_usage)."""

    code = "invalid_usage"
    http_status = 422


def _count(obj: WireJSON, key: str, where: str) -> int | None:
    """A token count, None when absent or null; UsageError when it is not a non-negative integer."""
    if key not in obj or obj[key] is None:
        return None
    value = obj[key]
    if isinstance(value, bool):
        raise UsageError(f"usage {where}{key} is a boolean, not a token count")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise UsageError(f"usage {where}{key} = {value!r} is not an integer")
        value = int(value)
    if not isinstance(value, int):
        raise UsageError(f"usage {where}{key} has type {type(value).__name__}, not an integer")
    if value < 0:
        raise UsageError(f"usage {where}{key} = {value} is negative")
    return value


def _details(raw: WireJSON, key: str) -> WireJSON:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"usage {key} must be an object, got {type(value).__name__}")
    return value


def _agreeing(found: list[tuple[str, int]], what: str) -> int | None:
    """The one value several fields report for the same quantity; UsageError when they disagree."""
    values = {v for _, v in found}
    if len(values) > 1:
        listed = ", ".join(f"{k}={v}" for k, v in found)
        raise UsageError(f"usage reports conflicting {what} counts: {listed}")
    return found[0][1] if found else None


def _collect(sources: list[tuple[WireJSON, str]], keys: tuple[str, ...]) -> list[tuple[str, int]]:
    found = []
    for obj, where in sources:
        for key in keys:
            value = _count(obj, key, where)
            if value is not None:
                found.append((where + key, value))
    return found


def _present(raw: WireJSON, keys: tuple[str, ...]) -> bool:
    return any(raw.get(k) is not None for k in keys)


def usage_shape(raw: WireJSON | None) -> str:
    """Which shape a usage object has: one of :data:`SHAPES`. Raises UsageError for mixed shapes."""
    if raw is None:
        return "absent"
    if not isinstance(raw, dict):
        raise UsageError(f"usage must be an object, got {type(raw).__name__}")
    openai = _present(raw, _OPENAI_KEYS)
    named_input = _present(raw, _INPUT_KEYS)
    if openai and named_input:
        raise UsageError("usage mixes prompt_tokens/completion_tokens with input_tokens/output_tokens")
    if openai:
        details = _details(raw, "prompt_tokens_details")
        cache_fields = (*_READ_FIELDS, *_WRITE_FIELDS)
        has_cache = _present(details, cache_fields) or _present(raw, cache_fields)
        return "openai" if has_cache else "openai-bare"
    anthropic = _present(raw, _ANTHROPIC_CACHE)
    responses = raw.get("input_tokens_details") is not None
    if anthropic and responses:
        raise UsageError("usage mixes Anthropic cache_*_input_tokens with input_tokens_details")
    if responses:
        return "responses"
    if named_input or anthropic:
        return "anthropic"
    return "absent"


def _parse_openai(raw: WireJSON) -> Usage | None:
    details = _details(raw, "prompt_tokens_details")
    prompt = _count(raw, "prompt_tokens", "")
    output = _count(raw, "completion_tokens", "")
    reads = _agreeing(_collect([(details, "prompt_tokens_details."), (raw, "")], _READ_FIELDS), "cache-read")
    writes = _agreeing(_collect([(details, "prompt_tokens_details."), (raw, "")], _WRITE_FIELDS),
                       "cache-write")
    return _whole_prompt(prompt, output, reads or 0, writes or 0)


def _parse_responses(raw: WireJSON) -> Usage | None:
    details = _details(raw, "input_tokens_details")
    prompt = _count(raw, "input_tokens", "")
    output = _count(raw, "output_tokens", "")
    reads = _agreeing(_collect([(details, "input_tokens_details.")], ("cached_tokens",)), "cache-read")
    writes = _agreeing(_collect([(details, "input_tokens_details."), (raw, "")], _WRITE_FIELDS),
                       "cache-write")
    return _whole_prompt(prompt, output, reads or 0, writes or 0)


def _whole_prompt(prompt: int | None, output: int | None, reads: int, writes: int) -> Usage | None:
    """Buckets when the prompt count includes cache reads and writes: input = P − R − W."""
    if prompt is not None and reads + writes > prompt:
        raise UsageError(f"usage cache reads ({reads}) + writes ({writes}) exceed the prompt ({prompt})")
    if prompt is None or output is None:
        return None
    return Usage(input=prompt - reads - writes, cached_input=reads, cache_write=writes, output=output)


def _parse_anthropic(raw: WireJSON) -> Usage | None:
    plain = _count(raw, "input_tokens", "")
    output = _count(raw, "output_tokens", "")
    reads = _count(raw, "cache_read_input_tokens", "") or 0
    writes = _agreeing(_collect([(raw, "")], _WRITE_FIELDS), "cache-write") or 0
    if plain is None or output is None:
        return None
    return Usage(input=plain, cached_input=reads, cache_write=writes, output=output)


def parse_usage(raw: WireJSON | None) -> Usage | None:
    """Four buckets from one usage object (formulas in the module docstring); None when unknown.

    Raises UsageError when the object contradicts itself. Never returns zeros for missing counts.
    """
    shape = usage_shape(raw)
    if raw is None or shape == "absent":
        return None
    if shape in ("openai", "openai-bare"):
        return _parse_openai(raw)
    if shape == "responses":
        return _parse_responses(raw)
    return _parse_anthropic(raw)
