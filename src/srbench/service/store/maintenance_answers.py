"""What store maintenance answers (service/store/maintenance.py): a verification of every object and every
journal → object reference, and a garbage collection's counts and items. The service's `POST /store/verify`
and `POST /store/gc` answer these models as they are."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

_ANSWER = ConfigDict(extra="forbid", use_attribute_docstrings=True)

GcAction = Literal["delete", "deleted", "keep_young", "rescued", "blocked", "keep_damaged"]
GcCopyAction = Literal["drop", "dropped", "keep", "blocked"]


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


class Unreadable(BaseModel):
    """A reachable reference gc's mark could not follow: while one is left, gc deletes nothing."""

    model_config = _ANSWER
    digest: str | None
    """The object (None: a journal cell that no longer holds a readable reference)."""
    where: str
    """What names it: a journal cell, or the object (and path) it was reached through."""
    reason: str
    """missing, or why no copy of it verifies."""


class BadCopy(BaseModel):
    """One stored copy of an object that cannot serve it (issue 38, items 2–4)."""

    model_config = _ANSWER
    digest: str
    """The digest it is stored under."""
    where: str
    """The copy: ``objects/<2 hex>/<62 hex>``, or ``packs/<name>.pack at <offset>``."""
    problem: str
    """Why: ``damaged: N bytes that hash to …``, ``misnamed entry: bytes hash to …`` (a pack entry holding
    the bytes of an object something names: `--repair` uses them), or ``not a regular file (a FIFO)``."""
    hashes_to: str | None = None
    """The digest its bytes hash to (None: it could not be read)."""


class BadFile(BaseModel):
    """A file under ``packs/`` that is not a whole pack: never read as one (a FIFO, a symbolic link, a damaged
    index, a pack cut short)."""

    model_config = _ANSWER
    where: str
    """``packs/<name>``."""
    problem: str
    """Why."""


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
    bad_copies: list[BadCopy] = []
    """Every copy that does not hash to its name or cannot be read (those of a corrupt object included)."""
    bad_files: list[BadFile] = []
    """Files under packs/ that are not whole packs."""
    damaged_references: list[Unreadable] = []
    """Journal cells that look like a reference but no longer hold a readable one."""
    problems: int
    """Corrupt plus missing, plus the bad copies of objects that also have a good one, bad files and damaged
    references."""
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
    """delete (dry run), deleted, keep_young (inside the grace period), rescued (referenced meanwhile),
    blocked (kept: the mark met a reference it could not follow, see ``unreadable``) or keep_damaged (kept:
    a copy of it that does not verify may be the only copy of the bytes it holds, or shares its pack)."""


class GcCopy(BaseModel):
    """A stored copy that does not verify, and what gc does with it (issue 38, items 2–3)."""

    model_config = _ANSWER
    digest: str
    """The digest it is stored under."""
    where: str
    """``objects/<2 hex>/<62 hex>``, or ``packs/<name>.pack at <offset>``."""
    problem: str
    """Why it does not verify."""
    action: GcCopyAction
    """drop (dry run) or dropped: the store holds its object well elsewhere (a good copy of its digest, or of
    what its bytes hash to); keep: it may be the only copy of its bytes; blocked: gc deleted nothing."""


PackFileAction = Literal["remove", "removed", "keep_young", "blocked"]


class PackFile(BaseModel):
    """A regular ``*.pack`` file that is not a readable pack (a crash lost its index, a garbage file)."""

    model_config = _ANSWER
    where: str
    """``packs/<name>``."""
    problem: str
    """Why it is not a pack."""
    age_s: float
    """Its age in seconds."""
    action: PackFileAction
    """remove (dry run) or removed: older than the grace period; keep_young; blocked: gc deleted nothing."""


class PackUpkeep(BaseModel):
    """What gc did to the packs (issue 38, item 5): unreadable pack files removed, small packs merged."""

    model_config = _ANSWER
    packs: int
    """Packs before."""
    packs_after: int
    """Packs after (a dry run: as they would be)."""
    merged: int
    """Packs that are not full merged (or that would be) ..."""
    written: int
    """... into this many new packs (`cas/upkeep.py`: every pack but one holds 10,000 objects or 128 MiB)."""
    unreadable: list[PackFile]
    """Regular ``*.pack`` files that are not packs."""


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
    bad_copies: list[GcCopy] = []
    """Every copy that does not verify, and what gc does with it."""
    packs: PackUpkeep | None = None
    """Pack upkeep (a local store)."""
    unreadable: list[Unreadable] = []
    """Reachable references the mark could not follow (missing, damaged, a damaged journal cell)."""
    refused: str | None = None
    """When ``unreadable`` is not empty: the one line saying gc deleted (or would delete) nothing, and the fix."""
    elapsed_s: float
    """Seconds it took."""
