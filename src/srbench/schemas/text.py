"""Text the service accepts from outside: valid Unicode, bounded, and paths a filesystem can hold.

Checked at the edge so that no hostile string reaches the journal (SQLite refuses lone surrogates),
canonical JSON (UTF-8 only) or the filesystem (NUL, names over 255 bytes, paths over 4096 bytes):
each problem is one line naming where it is.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator

MAX_PATH_BYTES = 4096            # PATH_MAX on Linux
MAX_NAME_BYTES = 255             # NAME_MAX: one path component


def lone_surrogate_at(value: Any) -> str | None:
    """The location (``a.b[2]``, or ``a.b key``) of the first string or key in a JSON value that holds a
    lone surrogate (``"\\ud800"`` parses to one; it is not Unicode text), else None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, loc = stack.pop()
        if isinstance(v, str):
            if not _utf8(v):
                return loc or "the body"
        elif isinstance(v, dict):
            for k, child in v.items():
                here = f"{loc}.{k}" if loc and _utf8(k) else (k if _utf8(k) else None)
                if here is None:
                    return f"{loc + ' ' if loc else ''}a key"
                stack.append((child, here))
        elif isinstance(v, list):
            stack.extend((child, f"{loc}[{i}]") for i, child in enumerate(v))
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_local_path(value: str) -> str:
    """A path this host's filesystem can name: not empty, no NUL or other control character, at most
    4096 bytes, each component at most 255 bytes (UTF-8)."""
    if not value:
        raise ValueError("must not be empty")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ValueError("must not contain control characters (NUL, newline, …)")
    if not _utf8(value):
        raise ValueError("must be valid Unicode text")
    size = len(value.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise ValueError(f"is {size} bytes long; a path holds at most {MAX_PATH_BYTES}")
    longest = max((len(part.encode("utf-8")) for part in value.split("/")), default=0)
    if longest > MAX_NAME_BYTES:
        raise ValueError(f"has a component of {longest} bytes; a file name holds at most {MAX_NAME_BYTES}")
    return value


LocalPath = Annotated[str, AfterValidator(check_local_path)]


def one_line(text: str) -> str:
    """`text` with every control character (newline, NUL, …) and lone surrogate escaped: one printable line."""
    if text.isprintable() and _utf8(text):
        return text
    return "".join(c if c.isprintable() and _utf8(c) else c.encode("unicode_escape", "backslashreplace")
                   .decode("ascii") for c in text)


def shorten(text: str, n: int = 120) -> str:
    """`text` for a one-line message: at most `n` characters, control characters escaped."""
    shown = text if len(text) <= n else text[: n - 1] + "…"
    return shown.encode("unicode_escape", "backslashreplace").decode("ascii") if not shown.isprintable() else shown
