"""What a dataset, a plan, a report and a comparison say about where each benchmark's cases came from.

A benchmark's cases are *the pinned source* when they were read at the registry's pinned revision, and
then the dataset records how their bytes were held to the pin table (`SourceRecord.check`,
benchmarks/pins.py). Cases read at any other revision (a local copy under another ``--revision``, a
synthetic sample, a mirror that differs) are labelled "not the pinned source" everywhere they are shown,
and a full score over them is never an sr-bench 1.0 result (stages/report/full_score.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from srbench.benchmarks import get as get_benchmark
from srbench.errors import InvalidInput
from srbench.schemas.dataset import SourceRecord
from srbench.schemas.sources import SourceLabel

NOT_PINNED = "not the pinned source"
CHECKS = {
    "file-sha256": "every file's size and sha256 equal the pin table's",
    "content-sha256": "the content sha256 of its canonical files equals the pin",
    "git-tree": "the git tree id of tasks/ equals the pin (Terminal-Bench publishes no byte digest)",
}


def _pin(benchmark: str) -> str | None:
    try:
        return get_benchmark(benchmark).source.revision
    except InvalidInput:
        return None


def dataset_notices(benchmark: str, revision: str, origin: str, check: str | None) -> list[str]:
    """The notices a freshly prepared dataset carries about its source."""
    pin = _pin(benchmark)
    if revision != pin:
        what = "imported" if origin == "local-import" else "source"
        return [f"{benchmark}: {NOT_PINNED}: {what} revision {revision} is not the pinned revision {pin}; its "
                "figures are never an sr-bench 1.0 result"]
    if check in CHECKS:
        return [f"{benchmark}: source check at the pinned revision: {CHECKS[check]}"]
    return []


def labels(sources: Mapping[str, SourceRecord] | None, revisions: Mapping[str, set[str | None]]
           ) -> dict[str, SourceLabel]:
    """Per benchmark: its revision, whether it is the pinned one, and the recorded check. `sources` is
    the registered dataset's (None when the plan read an unregistered file: the cases' revisions)."""
    out: dict[str, SourceLabel] = {}
    for b in sorted(revisions):
        rec = (sources or {}).get(b)
        revs = revisions[b]
        rev = rec.revision if rec is not None else (next(iter(revs)) if len(revs) == 1 else None)
        pinned = rev is not None and rev == _pin(b) and revs == {rev}
        out[b] = SourceLabel(revision=rev, pinned=pinned, check=rec.check if pinned and rec is not None else None)
    return out


def for_full_score(revisions: Mapping[str, set[str | None]],
                   frozen: Mapping[str, SourceLabel] | None) -> dict[str, set[str | None]]:
    """The case revisions the full score judges, where a benchmark at the pinned revision whose plan
    records no check of its bytes (an unregistered file, a dataset from before pins were checked)
    counts as unchecked, never as the pinned source. A plan without labels (older): the revisions."""
    out = {b: set(revs) for b, revs in revisions.items()}
    for b, label in (frozen or {}).items():
        if label.pinned and label.check is None and b in out:
            out[b] = {f"{label.revision} (unchecked)"}
    return out


def notices(frozen: Mapping[str, SourceLabel] | None) -> list[str]:
    """The plan's (report's, comparison's) lines for the frozen labels: what is not pinned, and which
    check applied where it is."""
    out: list[str] = []
    for b, label in sorted((frozen or {}).items()):
        if not label.pinned:
            out.append(f"{b}: {NOT_PINNED} (revision {label.revision or 'mixed'}, pinned {_pin(b)}): not an "
                       "sr-bench 1.0 result")
        elif label.check in CHECKS:
            out.append(f"{b}: pinned source, checked: {CHECKS[label.check]}")
        else:
            out.append(f"{b}: at the pinned revision, but its dataset records no content check (prepared "
                       "before pins were checked, or read from an unregistered file)")
    return out


__all__ = ["CHECKS", "NOT_PINNED", "SourceLabel", "dataset_notices", "for_full_score", "labels", "notices"]
