"""Pure helpers of the streaming transport: SSE decoding, `<think>` stripping, the repetition guard,
and the masking of credentials in endpoint text.

Nothing here does I/O, so each helper is tested on its own and reused offline (REP-2 re-reads a
stored transcript with :func:`decode_transcript`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["StreamTooLarge", "SSEEvent", "SSEDecoder", "decode_transcript", "visible_text", "repeats",
           "one_line", "credential_values", "mask", "error_message"]

_EOL = re.compile(rb"\r\n|\r|\n")


class StreamTooLarge(Exception):
    """One SSE line is longer than the decoder accepts."""


@dataclass(frozen=True)
class SSEEvent:
    event: str          # the `event:` field, "message" when absent
    data: str           # the `data:` lines joined by "\n"


class SSEDecoder:
    """Incremental Server-Sent Events decoder fed with byte chunks (not byte by byte).

    Lines end with CRLF, LF or CR (a CR at the end of a chunk waits for a possible LF). Fields are
    ``data``, ``event`` (``id`` and ``retry`` are ignored); lines starting with ``:`` are comments.
    A blank line dispatches the event; at the end of the stream an undispatched event is dispatched
    too (lenient: servers often omit the last blank line). A line over `max_line_bytes` raises
    StreamTooLarge before it is buffered further.
    """

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buf = b""
        self._data: list[str] = []
        self._event = ""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buf = self._buf + chunk if self._buf else chunk
        if b"\r" in buf:
            return self._feed_any(buf)
        # LF line ends only (what servers send): the complete lines are decoded at once and split on
        # "\n" (a multi-byte character never holds the byte 0x0A, so this is the per-line decoding)
        end = buf.rfind(b"\n")
        self._buf = buf[end + 1:]
        if len(self._buf) > self.max_line_bytes:
            raise StreamTooLarge(f"an SSE line exceeds {self.max_line_bytes} bytes")
        if end < 0:
            return []
        if end > self.max_line_bytes and any(len(line) > self.max_line_bytes for line in buf[:end].split(b"\n")):
            raise StreamTooLarge(f"an SSE line exceeds {self.max_line_bytes} bytes")
        return self._lines(buf[:end].decode("utf-8", errors="replace").split("\n"))

    def _feed_any(self, buf: bytes) -> list[SSEEvent]:
        """`feed` when a CR is in sight: lines end with CRLF, LF or CR (a trailing CR waits for an LF)."""
        hold = b""
        if buf.endswith(b"\r"):
            buf, hold = buf[:-1], b"\r"
        lines = _EOL.split(buf)
        self._buf = lines.pop() + hold
        if len(self._buf) > self.max_line_bytes:
            raise StreamTooLarge(f"an SSE line exceeds {self.max_line_bytes} bytes")
        for line in lines:
            if len(line) > self.max_line_bytes:
                raise StreamTooLarge(f"an SSE line exceeds {self.max_line_bytes} bytes")
        return self._lines([line.decode("utf-8", errors="replace") for line in lines])

    def _lines(self, lines: list[str]) -> list[SSEEvent]:
        """The events that complete lines dispatch (the SSE field rules; one call a chunk, not one a line)."""
        events: list[SSEEvent] = []
        data, event = self._data, self._event
        for line in lines:
            if not line:                        # a blank line dispatches the event, if it has data
                if data:
                    events.append(SSEEvent(event or "message", "\n".join(data)))
                    data = []
                event = ""
            elif line[0] != ":":                # not a comment
                name, _, value = line.partition(":")
                if value[:1] == " ":
                    value = value[1:]
                if name == "data":
                    data.append(value)
                elif name == "event":
                    event = value
        self._data, self._event = data, event
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: the last unterminated line and a pending event are dispatched."""
        rest, self._buf = self._buf.rstrip(b"\r"), b""
        return self._lines([rest.decode("utf-8", errors="replace"), ""] if rest else [""])


def decode_transcript(raw: bytes, max_line_bytes: int = 1 << 30) -> list[SSEEvent]:
    """Every event of a complete stored SSE transcript."""
    dec = SSEDecoder(max_line_bytes)
    return dec.feed(raw) + dec.close()


_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def visible_text(content: str) -> tuple[str, bool]:
    """(visible final text, think_unclosed).

    Closed ``<think>…</think>`` blocks are removed. An unclosed ``<think>`` means the reply never
    reached its answer: the visible text is "" and the flag is True. A stray ``</think>`` with no
    opening tag (chat templates that open the block inside the prompt) makes only the text after
    the last ``</think>`` visible. When any tag was handled, surrounding whitespace is stripped;
    text without tags is returned unchanged.
    """
    if "<" not in content or not (_THINK_OPEN.search(content) or _THINK_CLOSE.search(content)):
        return content, False
    text = _THINK_BLOCK.sub("", content)
    if _THINK_OPEN.search(text):
        return "", True
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    return text.strip(), False


def repeats(tail: str, window: int, limit: int) -> bool:
    """Repetition guard: the last window·limit characters are the last `window` characters repeated
    `limit` times.

    What it catches: any output that ends in a loop whose period p DIVIDES `window` (p = window, or
    p = 1, 2, 4, … for window 128) sustained over window·limit characters — a p-periodic tail is
    also window-periodic in that case, so one comparison covers every such period. What it does not
    catch: periods that do not divide `window` (e.g. a 100-character loop with window 128), loops
    shorter than window·limit characters, and near-repeats (counters, varying numbers).
    """
    span = window * limit
    if window <= 0 or limit <= 1 or len(tail) < span:
        return False
    seg = tail[-span:]
    return seg == seg[-window:] * limit


# -- text helpers of the transport ---------------------------------------------------------------
_SECRET_HEADERS = ("authorization", "proxy-authorization", "api-key", "x-api-key")


def one_line(text: str, limit: int = 300) -> str:
    """`text` with whitespace runs collapsed to one space, cut to `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def credential_values(headers: Mapping[str, str]) -> list[str]:
    """Secret values in request headers (the whole value and the token after its scheme), longest
    first, so that they can be masked wherever endpoint text is kept."""
    found = []
    for k, v in headers.items():
        if k.lower() in _SECRET_HEADERS and v:
            found.append(v)
            scheme, _, token = v.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    return sorted((s for s in found if len(s) >= 6), key=len, reverse=True)


def mask(text: str, secrets: list[str]) -> str:
    for s in secrets:
        text = text.replace(s, "***")
    return text


def error_message(body: bytes) -> str:
    """The human message of an error body: OpenAI-style ``{"error": {"message": …}}`` or the text."""
    text = body.decode("utf-8", errors="replace")
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        msg = err.get("message") if isinstance(err, dict) else err
        if isinstance(msg, str) and msg:
            return msg
    return text
