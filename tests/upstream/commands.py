"""Which of upstream's `vllm-sr benchmark` commands each conformance test drives (`covers`), read by the
test that holds docs/upstream.md's command table to the suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
COVERED: dict[str, list[str]] = {}       # a command as the table names it → the tests that drive it


def covers(*commands: str) -> Callable[[F], F]:
    """Record that the decorated test drives these commands (written as docs/upstream.md's table writes them)."""
    def mark(fn: F) -> F:
        for c in commands:
            COVERED.setdefault(c, []).append(fn.__name__)
        return fn
    return mark
