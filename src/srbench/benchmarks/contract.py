"""The plain values of the benchmark adapter contract (base.py): where a benchmark's data lives
(`SourcePin`) and the outcome of grading one answer (`Grade`). A leaf module, so that the source
reader and the graders need not import the contract itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SourcePin:
    """Where the upstream data lives and the immutable revision sr-bench reads."""

    url: str                       # e.g. https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro
    revision: str                  # commit sha
    files: tuple[str, ...]         # paths inside the repository (globs allowed, e.g. data/evaluation/*.json)
    license_url: str | None = None
    access_note: str | None = None
    gated: bool = False
    # sha256 over every pinned file's (normalized) content, see `sources.content_sha256`; None: unknown
    content_sha256: str | None = None


@dataclass
class Grade:
    """Outcome of grading one visible final answer."""

    correct: bool
    status: str                    # correct | incorrect | ambiguous | unparsed | invalid
    extracted: Any = None
    strict_format: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)
