"""What store maintenance answers (service/store/maintenance.py): a verification of every object and every
journal → object reference, and a garbage collection's counts and items. The service's `POST /store/verify`
and `POST /store/gc` answer these models as they are."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

_ANSWER = ConfigDict(extra="forbid", use_attribute_docstrings=True)

GcAction = Literal["delete", "deleted", "keep_young", "rescued", "blocked"]


class Missing(BaseModel):
    """A digest something reachable names, with no object."""

    model_config = _ANSWER
    digest: str
    """The missing object."""
    referenced_from: list[str]
    """Where it is named (the first few)."""
    references: int
    """How many times it is named."""


class Unrepaired(BaseModel):
    """A corrupt or missing object no source held a good copy of."""

    model_config = _ANSWER
    digest: str
    """The object."""
    reason: str
    """Why it was not repaired."""


class Verified(BaseModel):
    """Every object re-hashed and every reference from the journal followed."""

    model_config = _ANSWER
    objects: int
    """Objects in the store."""
    bytes: int
    """Their bytes."""
    reachable: int
    """Objects a reference reaches."""
    references: int
    """References followed."""
    corrupt: list[str]
    """Objects whose bytes do not hash to their name."""
    missing: list[Missing]
    """Digests named but absent."""
    problems: int
    """Corrupt plus missing."""
    ok: bool
    """No problem."""
    elapsed_s: float
    """Seconds it took."""
    repaired: list[str] | None = None
    """With repair: the objects copied in from a good source."""
    unrepaired: list[Unrepaired] | None = None
    """With repair: the ones that could not be."""
    sources: list[str] | None = None
    """With repair: the sources asked (SR_BENCH_REPAIR_FROM)."""


class GcItem(BaseModel):
    """One unreachable object and what gc did with it."""

    model_config = _ANSWER
    digest: str
    """The object."""
    bytes: int
    """Its size."""
    age_s: float | None
    """Its age in seconds (None: the backend reports no time; never deleted)."""
    action: GcAction
    """delete (dry run), deleted, keep_young (inside the grace period), rescued (referenced meanwhile) or
    blocked (kept: the mark met a reference it could not follow, see ``unreadable``)."""


class Unreadable(BaseModel):
    """A reachable reference gc's mark could not follow: while one is left, gc deletes nothing."""

    model_config = _ANSWER
    digest: str | None
    """The object (None: a journal cell that no longer holds a readable reference)."""
    where: str
    """What names it: a journal cell, or the object (and path) it was reached through."""
    reason: str
    """missing, or why no copy of it verifies."""


class Collected(BaseModel):
    """A garbage collection's counts (each with a ``*_bytes`` twin) and every unreachable object."""

    model_config = _ANSWER
    dry_run: bool
    """Nothing was deleted."""
    grace_s: float
    """The grace period: younger unreachable objects are kept."""
    objects: int = 0
    """Objects listed."""
    bytes: int = 0
    """Their bytes."""
    reachable: int = 0
    """Objects a reference reaches."""
    reachable_bytes: int = 0
    """Their bytes."""
    unreachable: int = 0
    """Objects nothing reaches."""
    unreachable_bytes: int = 0
    """Their bytes."""
    collectable: int = 0
    """Unreachable and older than the grace period."""
    collectable_bytes: int = 0
    """Their bytes."""
    young: int = 0
    """Unreachable but inside the grace period."""
    young_bytes: int = 0
    """Their bytes."""
    rescued: int = 0
    """Referenced by a row committed while gc ran."""
    rescued_bytes: int = 0
    """Their bytes."""
    deleted: int = 0
    """Deleted."""
    deleted_bytes: int = 0
    """Their bytes."""
    items: list[GcItem]
    """Every unreachable object."""
    unreadable: list[Unreadable] = []
    """Reachable references the mark could not follow (missing, damaged, a damaged journal cell)."""
    refused: str | None = None
    """When ``unreadable`` is not empty: the one line saying gc deleted (or would delete) nothing, and the fix."""
    elapsed_s: float
    """Seconds it took."""
