"""Digests and canonical JSON: the two primitives every content address is built from.

A digest is BLAKE3 over the exact stored bytes, written ``b3:<64 hex>``. Structured objects are
canonical JSON: UTF-8, sorted keys, no insignificant whitespace, NaN/Infinity rejected, and floats
with an integral value written as integers so that ``1.0`` and ``1`` address the same object.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, TypeAlias

import blake3
import orjson

PREFIX = "b3:"

JSONValue: TypeAlias = "str | int | float | bool | None | Sequence[JSONValue] | Mapping[str, JSONValue]"
"""A value canonical JSON can hold: what a rule's inputs and parameters are made of (rules/engine.py)."""
_DIGEST_RE = re.compile(r"^b3:[0-9a-f]{64}$")


def digest_bytes(data: bytes) -> str:
    """BLAKE3 digest of `data` as ``b3:<hex>``."""
    return PREFIX + blake3.blake3(data).hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Plain SHA-256 hex, used where the external contract names SHA-256 (dataset files, sources)."""
    return hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    return isinstance(value, str) and bool(_DIGEST_RE.fullmatch(value))


_PLAIN = frozenset({str, int, bool, type(None)})


def _normalise(value: Any) -> Any:
    t = type(value)
    if t in _PLAIN:                     # the common case first: exact types, no isinstance chain
        return value
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str and not isinstance(k, str):
                raise TypeError(f"canonical JSON keys must be strings, got {type(k).__name__}")
            out[k] = v if type(v) in _PLAIN else _normalise(v)
        return out
    if t is list or t is tuple:
        return [v if type(v) in _PLAIN else _normalise(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("canonical JSON cannot hold NaN or Infinity")
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict):
        return _normalise(dict(value))
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    raise TypeError(f"value of type {type(value).__name__} is not JSON")


def stored_number(value: float) -> float | int:
    """A number as its canonical JSON reads back (an integral float is written as an integer): what a
    message quoting a stored value shows."""
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


def _encoder() -> Any:
    """`json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)` as one C
    encoder made once, not a JSONEncoder and a C encoder per call (issue 31, item 5: 6.7 -> 5.1 us for a
    call record). No circular-reference check: `_normalise` has walked the value first. Without the C
    accelerator: `json.dumps` itself."""
    if c_make_encoder is None:
        return lambda v, _: [json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                        allow_nan=False)]
    plain = json.JSONEncoder()
    return c_make_encoder(None, plain.default, encode_basestring, None, ":", ",", True, False, False)


_ENCODE = _encoder()


class _NotPlain(Exception):
    """A value `_plain` leaves to `_normalise` and the json encoder."""


_SAME_FLOATS = (1e-4, 1e16)     # a float in this range (by magnitude) is written alike by orjson and json


def _plain(value: Any) -> Any:
    """`_normalise(value)` when orjson writes it exactly as the json encoder does: exact dicts (string keys),
    lists, tuples, strings, ints, booleans, None and floats whose orjson text is their repr (integral ones
    become ints, as in `_normalise`); _NotPlain for anything else (a subclass, a float in exponent form)."""
    t = type(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out[k] = v if type(v) in _PLAIN else _plain(v)
        return out
    if t is list or t is tuple:
        return [v if type(v) in _PLAIN else _plain(v) for v in value]
    if t is float:
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        if _SAME_FLOATS[0] <= abs(value) < _SAME_FLOATS[1]:
            return value
        raise _NotPlain
    if t in _PLAIN:
        return value
    raise _NotPlain


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of `value` (sorted keys, compact, UTF-8, integral floats as ints). Written by orjson
    when it writes the same bytes (`_plain`: ~3x less CPU for a report row), else by the json encoder; an
    integer beyond 64 bits, which orjson refuses, goes to json too."""
    try:
        return orjson.dumps(_plain(value), option=orjson.OPT_SORT_KEYS)
    except (_NotPlain, orjson.JSONEncodeError, RecursionError):
        pass
    return "".join(_ENCODE(_normalise(value), 0)).encode("utf-8")


def digest_json(value: Any) -> str:
    """Digest of the canonical JSON of `value`."""
    return digest_bytes(canonical_json(value))


def short(digest: str, n: int = 24) -> str:
    """A short hex prefix of a digest for ids (``run-…``, cell ids)."""
    return digest.removeprefix(PREFIX)[:n]
