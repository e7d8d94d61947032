"""Deterministic task selection, ``stratified-hash-v1`` (version 1), and the profile cuts (DS-2, DS-3).

One order is computed for every case of a source, and all profiles are cut from it:

1. Group the cases by ``metadata.stratum``.
2. Within a group, sort by ``digest_json([seed, case_id])`` (BLAKE3 of canonical JSON, compared as
   the hex string; ties, which need equal ids, cannot occur because ids are unique).
3. Interleave proportionally: first one head case per stratum in sorted stratum order; then every
   remaining case, at index ``i`` of a stratum with ``L`` remaining cases, gets the key
   ``(i + 0.5) / L`` — computed as the exact fraction ``(2i + 1) / 2L`` so no float rounding is
   involved — and the cases follow in ascending key, ties broken by stratum name.

Cuts: smoke = ``ordered[0:s]``, quick = ``ordered[0:q]``, standard = ``ordered[q:q+S]``; hence
smoke ⊂ quick and standard ∩ quick = ∅. Stratum names compare as Python strings (code points), so the
order is the same on every host. ``--limit N`` keeps the first N cases of the profile (DS-8).
Selected cases get ``metadata.split`` = holdout for standard, dev otherwise.

With an exclusion set (a named history, `stages.exclusions`): the same order, from which the cases of
the profiles before this one (standard: quick) and the excluded cases are taken out, once; the profile
is the first ``count`` (or ``--limit``) cases of what is left. Fewer left than that is an error: an
excluded case never fills a shortfall and the count never shrinks.

``stratum-round-robin-v1`` (τ³): within each stratum the same hash order; then one case of every
stratum in sorted stratum order, round after round, a stratum that has run out being skipped — a
balanced cut (smoke 3 = one task per domain) whatever the strata's sizes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction

from srbench.cas.digest import digest_json
from srbench.errors import InvalidInput
from srbench.schemas.dataset import PROFILES, Case, Selection, split_of

ALGORITHM = "stratified-hash-v1"
ROUND_ROBIN = "stratum-round-robin-v1"
ALGORITHMS: tuple[str, ...] = (ALGORITHM, ROUND_ROBIN)
VERSION = 1


def _check_ids(cases: Sequence[Case]) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise InvalidInput(f"duplicate case id {case.id}: selection needs unique task ids")
        seen.add(case.id)


def _groups(cases: Sequence[Case], seed: int) -> dict[str, list[tuple[str, Case]]]:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInput(f"seed must be an integer, got {seed!r}")
    _check_ids(cases)
    groups: dict[str, list[tuple[str, Case]]] = defaultdict(list)
    for case in cases:
        groups[case.metadata.stratum].append((digest_json([seed, case.id]), case))
    for name in groups:
        groups[name].sort(key=lambda item: (item[0], item[1].id))
    return groups


def order_round_robin(cases: Sequence[Case], seed: int) -> list[Case]:
    """All cases in the `stratum-round-robin-v1` order for `seed`."""
    groups = _groups(cases, seed)
    strata = sorted(groups)
    longest = max((len(g) for g in groups.values()), default=0)
    return [groups[s][i][1] for i in range(longest) for s in strata if i < len(groups[s])]


def order(cases: Sequence[Case], seed: int, algorithm: str = ALGORITHM) -> list[Case]:
    """All cases in the one `stratified-hash-v1` (or `algorithm`) order for `seed`."""
    if algorithm == ROUND_ROBIN:
        return order_round_robin(cases, seed)
    if algorithm != ALGORITHM:
        raise InvalidInput(f"unknown selection algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    groups = _groups(cases, seed)
    strata = sorted(groups)
    ordered = [groups[name][0][1] for name in strata]
    rest: list[tuple[Fraction, str, int, Case]] = []
    for name in strata:
        tail = groups[name][1:]
        length = len(tail)
        rest.extend((Fraction(2 * i + 1, 2 * length), name, i, item[1]) for i, item in enumerate(tail))
    rest.sort(key=lambda item: item[:3])
    ordered.extend(item[3] for item in rest)
    return ordered


def _check_counts(counts: dict[str, int], benchmark: str) -> None:
    for name in PROFILES:
        value = counts.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(f"{benchmark}: profile count {name}={value!r} must be a positive integer")
    if counts["smoke"] > counts["quick"]:
        raise InvalidInput(f"{benchmark}: smoke ({counts['smoke']}) must not exceed quick ({counts['quick']})")


def profile_bounds(profile: str, counts: dict[str, int]) -> tuple[int, int]:
    """``(start, stop)`` of `profile` in the ordered source."""
    if profile == "smoke":
        return 0, counts["smoke"]
    if profile == "quick":
        return 0, counts["quick"]
    if profile == "standard":
        return counts["quick"], counts["quick"] + counts["standard"]
    raise InvalidInput(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")


def check_limit(limit: int | None, size: int, profile: str) -> None:
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= size:
        raise InvalidInput(f"--limit must be an integer from 1 to {size} (the {profile} profile size), got {limit!r}")


def select(cases: Sequence[Case], profile: str, counts: dict[str, int], seed: int, limit: int | None = None,
           *, benchmark: str | None = None, algorithm: str = ALGORITHM) -> list[Case]:
    """The cases of `profile` (a prefix of it with `limit`), each a copy with ``metadata.split`` set."""
    name = benchmark or (cases[0].benchmark if cases else "benchmark")
    _check_counts(counts, name)
    start, stop = profile_bounds(profile, counts)
    check_limit(limit, stop - start, profile)
    if len(cases) < stop:
        detail = f"quick {counts['quick']} + standard {counts['standard']} = {stop}" if start else str(stop)
        raise InvalidInput(f"{name}: the {profile} profile needs {detail} tasks but the source has "
                           f"{len(cases)}; use a smaller profile or a complete source")
    chosen = order(cases, seed, algorithm)[start:stop]
    if limit is not None:
        chosen = chosen[:limit]
    split = split_of(profile)
    return [c.model_copy(update={"metadata": c.metadata.model_copy(update={"split": split})}, deep=True)
            for c in chosen]


def select_excluding(cases: Sequence[Case], profile: str, counts: dict[str, int], seed: int, excluded: set[str],
                     limit: int | None = None, *, benchmark: str, algorithm: str = ALGORITHM) -> tuple[list[Case], int]:
    """(the cases of `profile` none of whose ids is in `excluded` nor in an earlier profile's cut, the
    number of source cases taken out). Raises InvalidInput (code ``exclusion_shortfall``) when too few remain."""
    _check_counts(counts, benchmark)
    start, stop = profile_bounds(profile, counts)
    check_limit(limit, stop - start, profile)
    ordered = order(cases, seed, algorithm)
    out = {c.id for c in ordered[:start]} | (excluded & {c.id for c in ordered})
    left = [c for c in ordered if c.id not in out]
    need = limit if limit is not None else stop - start
    if len(left) < need:
        raise InvalidInput(f"{benchmark}: the {profile} profile needs {need} tasks but only {len(left)} of the source's "
                           f"{len(ordered)} remain after excluding {len(out)} (earlier profiles and the named history); "
                           "nothing was prepared: use a smaller profile or a shorter history",
                           code="exclusion_shortfall")
    split = split_of(profile)
    return [c.model_copy(update={"metadata": c.metadata.model_copy(update={"split": split})}, deep=True)
            for c in left[:need]], len(out)


def selection_record(strata: str, limit: int | None = None, algorithm: str = ALGORITHM) -> Selection:
    """The manifest's record of how a benchmark's cases were chosen."""
    return Selection(algorithm=algorithm, version=VERSION, strata=strata, limit=limit,
                     custom_subset=limit is not None)
