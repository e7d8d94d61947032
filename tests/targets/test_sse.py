"""The transport's pure helpers: SSE decoding, <think> stripping, repetition guard, masking."""

from __future__ import annotations

import random
import re

import pytest

from srbench.targets.sse import (
    SSEDecoder,
    SSEEvent,
    StreamTooLarge,
    credential_values,
    decode_transcript,
    error_message,
    mask,
    one_line,
    repeats,
    visible_text,
)


def test_decoder_chunk_boundaries_and_line_endings():
    raw = b'data: {"a":1}\r\n\r\n: keep-alive\n\ndata: {"b":2}\r\rdata: x\ndata: y\n\nevent: error\ndata: e\n\n'
    whole = decode_transcript(raw)
    assert whole == [SSEEvent("message", '{"a":1}'), SSEEvent("message", '{"b":2}'),
                     SSEEvent("message", "x\ny"), SSEEvent("error", "e")]
    for size in (1, 2, 3, 7):
        dec = SSEDecoder(1000)
        got = []
        for i in range(0, len(raw), size):
            got += dec.feed(raw[i:i + size])
        assert got + dec.close() == whole, size


def _reference_events(raw: bytes) -> list[SSEEvent]:
    """The SSE rules line by line, as plainly as they read (each line decoded on its own)."""
    events, data, event = [], [], ""
    lines = re.split(rb"\r\n|\r|\n", raw)
    for line in [b.decode("utf-8", errors="replace") for b in lines] + [""]:
        if line == "":
            if data:
                events.append(SSEEvent(event or "message", "\n".join(data)))
            data, event = [], ""
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    return events


@pytest.mark.parametrize("seed", range(40))
def test_decoder_equals_the_line_by_line_rules_in_any_chunking(seed):
    """Issue 31 (item 5): the LF-only fast path (a chunk's lines decoded at once) and the CR path give the
    events of the plain rules, whatever the chunk boundaries — split multi-byte characters and invalid
    UTF-8 included."""
    rng = random.Random(seed)
    pieces = ["data: é😀 {\"a\":1}".encode(), b"data:x", b"event: error", b": comment", b"id: 7", b"data:", b"",
              b"", b"data: \xff\xe2\x82"]                            # the last: invalid UTF-8
    ends = [b"\n"] if seed % 2 else [b"\n", b"\r\n", b"\r"]
    raw = b"".join(p + rng.choice(ends) for p in rng.choices(pieces, k=30)) + b"data: \xf0\x9f"
    dec, got, i = SSEDecoder(1 << 20), [], 0
    while i < len(raw):
        step = rng.randint(1, 9)
        got += dec.feed(raw[i:i + step])
        i += step
    assert got + dec.close() == _reference_events(raw) == decode_transcript(raw)


def test_decoder_is_lenient_at_end_of_stream():
    dec = SSEDecoder(100)
    assert dec.feed(b"data: [DONE]") == []
    assert dec.close() == [SSEEvent("message", "[DONE]")]
    assert decode_transcript(b"data:nospace\n") == [SSEEvent("message", "nospace")]


def test_decoder_line_cap():
    dec = SSEDecoder(10)
    with pytest.raises(StreamTooLarge):
        dec.feed(b"data: " + b"x" * 20)
    for ending in (b"\n", b"\r\n"):                  # a complete over-long line too, on either path
        with pytest.raises(StreamTooLarge):
            SSEDecoder(10).feed(b"data: ok\n" + b"data: " + b"x" * 20 + ending + b"data: y")
    assert SSEDecoder(10).feed(b"data: ok\n\ndata: 1234\n\n") == [SSEEvent("message", "ok"), SSEEvent("message", "1234")]


@pytest.mark.parametrize("content, visible, unclosed", [
    ("Answer: B", "Answer: B", False),
    ("<think>hmm</think>\n\nAnswer: B", "Answer: B", False),
    ("<THINK>a</THINK> x <think>b</think> y", "x  y", False),
    ("<think>still thinking", "", True),
    ("<think>a</think> partial <think>more", "", True),
    ("reasoning opened by the template</think>\nAnswer: C", "Answer: C", False),
    ("", "", False),
    ("a < b", "a < b", False),
])
def test_visible_text(content, visible, unclosed):
    assert visible_text(content) == (visible, unclosed)


def test_repeats_exact_window():
    block = "0123456789abcdef"                               # window 16
    assert repeats("intro " + block * 5, 16, 5)
    assert not repeats("intro " + block * 4, 16, 5)          # too short
    assert not repeats(block * 4 + block[:-1] + "X", 16, 5)


def test_repeats_periods_dividing_the_window():
    assert repeats("zz" + "ab" * 40, 16, 5)                  # period 2 divides 16
    assert repeats("x" * 80, 16, 5)                           # period 1
    assert repeats("q" + "abcd" * 20, 16, 5)                 # period 4


def test_repeats_documented_blind_spots():
    assert not repeats("abc" * 100, 16, 5)                    # period 3 does not divide 16
    assert not repeats("".join(f"{i}, " for i in range(200)), 16, 5)   # near-repeat (counter)
    assert not repeats("ab" * 100, 0, 5)


def test_masking_and_messages():
    secrets = credential_values({"Authorization": "Bearer sk-secret-123", "x-other": "sk-secret-123"})
    assert secrets == ["Bearer sk-secret-123", "sk-secret-123"]
    assert mask("bad key sk-secret-123!", secrets) == "bad key ***!"
    assert credential_values({"authorization": "Bearer abc"}) == ["Bearer abc"]   # short tokens not masked alone
    assert error_message(b'{"error": {"message": "nope"}}') == "nope"
    assert error_message(b'{"detail": 1}') == '{"detail": 1}'
    assert error_message(b"plain") == "plain"
    assert one_line("a\n  b\tc") == "a b c"
    assert len(one_line("x" * 500, 50)) == 50
