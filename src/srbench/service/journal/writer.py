"""The journal: the store's only mutable state (SQLite, WAL), written by one thread of the service.

Tables: `refs` (named things: datasets, targets, benchmark options), `runs`, `cells` (each planned
case × target and its transitions), `calls` (each model call of a multi-call cell, a conversation:
its role, target, state, request and call-record digests, cost and budget reservation), `events`,
and the action cache of the rule engine; their definitions and numbered migrations are in
service/journal/schema.py.

All writes go through one writer thread that commits in groups: every write queued while a commit
is in flight lands in the next single transaction, so N concurrent dispatches cost one fsync, not
N. `submit` returns once the write is durable (synchronous=FULL). A write may carry the objects its
rows name (`Staged`): the writer stores a group's objects together (one pack, cas/packs.py) before
its transactions, behind one durability barrier when they must be on disk first. Reads use
per-thread connections.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules.engine import CacheEntry
from srbench.schemas.event import EventType
from srbench.schemas.event_data import EventData, NoData
from srbench.service.journal.schema import migrate

Write = Callable[[sqlite3.Connection], Any]
_STOP = object()


class Staged(NamedTuple):
    """The objects a write's rows will name, stored by the writer before the write's transaction;
    `durable`: on disk (the barrier) before it commits, not only present."""

    blobs: list[bytes]
    durable: bool


# a reader connection's page cache (SQLite's own is 2 MiB a connection, and the service has one a thread: 10 MiB
# held at a 10k-cell run's report, issue 42 item 3); the pages are in the kernel's page cache, and the report's
# scan, a batch's look-ups by id and a page's indexed query were no slower with it (a 100k-cell journal)
READER_CACHE_KIB = 512


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Journal:
    """One writer thread with group commit; any thread may read."""

    def __init__(self, path: str, objects: ObjectStore | None = None) -> None:
        """`objects` stores what writes stage (`Staged`), and its `sync` is the durability barrier."""
        self.path = path
        self.objects = objects
        new = not os.path.exists(path)
        try:
            self._wconn = _connect(path)
        except sqlite3.DatabaseError as exc:      # not a database (damaged, or another file in its place)
            raise InvalidInput(f"the journal {path} cannot be opened ({exc}): it is damaged or not an sr-bench "
                               "journal; restore the store from a copy, or give another --store") from None
        if new:
            os.chmod(path, 0o600)
        try:
            migrate(self._wconn, path)          # the schema, versioned: service/journal/schema.py
        except BaseException:
            self._wconn.close()
            raise
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []   # closed with the journal (no file stays open)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()   # C-level: no Condition per put
        self._closed = False
        self._thread = threading.Thread(target=self._writer, name="journal-writer", daemon=True)
        self._thread.start()
        self.commits = 0

    # -- writing -------------------------------------------------------------------------------
    def _writer(self) -> None:
        conn = self._wconn
        while True:
            item = self._queue.get()
            if item is _STOP:
                self._fail_pending()
                return
            batch = [item]
            while True:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    self._queue.put(_STOP)
                    break
                batch.append(nxt)
            try:
                self._commit(conn, batch)
            except BaseException as exc:    # never let the writer die: a dead writer hangs every later write
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                for _, fut, _ in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                _deliver([fut for _, fut, _ in batch])      # (a waiter handed over already is skipped)

    def _commit(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        """One group commit. A write that fails is rolled back alone; a failure that takes the whole
        transaction with it (SQLite rolls back by itself on SQLITE_FULL or an I/O error, e.g. a full
        disk) fails every write of the batch: none of them committed.

        The group's staged objects are stored first, all in one `put_many`. Writes whose objects
        must be durable commit after the barrier; the others (a cell's `dispatching`, which holds up
        a send) commit first, in their own transaction, and hear of it at once, so that they never
        wait for a barrier over other cells' objects."""
        failed = self._store_objects(batch)
        gone = set(failed)
        plain: list[tuple[Write, Any]] = []
        synced: list[tuple[Write, Any]] = []
        for fn, fut, st in batch:
            if fut not in gone:
                (synced if st is not None and st.durable and st.blobs else plain).append((fn, fut))
        if plain:
            self._transact(conn, plain)
        _deliver([*failed, *(fut for _, fut in plain)])
        if synced:
            try:
                assert self.objects is not None             # (_store_objects failed them otherwise)
                self.objects.sync()
            except BaseException as exc:
                for _, fut in synced:
                    fut.set_exception(exc)
            else:
                self._transact(conn, synced)
            _deliver([fut for _, fut in synced])

    def _store_objects(self, batch: list[Any]) -> list[Any]:
        """Store every object the batch's writes staged (made durable later, by the barrier); the
        futures of the writes that staged objects when that failed (they are failed: a row never
        names an object that was not stored)."""
        blobs = [b for _, _, st in batch if st is not None for b in st.blobs]
        if not blobs:
            return []
        try:
            if self.objects is None:
                raise InvalidInput("this journal has no object store to stage objects in")
            self.objects.put_many(blobs, durable=False)
        except BaseException as exc:
            failed = [fut for _, fut, st in batch if st is not None and st.blobs]
            for fut in failed:
                fut.set_exception(exc)
            return failed
        return []

    def _transact(self, conn: sqlite3.Connection, ready: list[tuple[Write, Any]]) -> None:
        results: list[tuple[Any, Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:    # e.g. another process holds the write lock too long
            for _, fut in ready:
                fut.set_exception(exc)
            return
        for fn, fut in ready:
            conn.execute("SAVEPOINT w")
            try:
                value = fn(conn)
                conn.execute("RELEASE w")
                results.append((fut, value, None))
            except BaseException as exc:  # one bad write must not poison the group
                if not conn.in_transaction:
                    raise                 # the transaction is gone: the caller fails the whole batch
                conn.execute("ROLLBACK TO w")
                conn.execute("RELEASE w")
                results.append((fut, None, exc))
        try:
            conn.execute("COMMIT")
            self.commits += 1
        except BaseException as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            results = [(f, None, exc) for f, _, _ in results]
        for fut, value, failure in results:
            if failure is None:
                fut.set_result(value)
            else:
                fut.set_exception(failure)

    def _fail_pending(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                item[1].set_exception(RuntimeError("the journal is closed"))
                _deliver([item[1]])

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the journal is closed")

    def submit_nowait(self, fn: Write) -> concurrent.futures.Future[Any]:
        """Queue a write from any thread and return at once (its future says how it went)."""
        self._check_open()
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((fn, fut, None))
        return fut

    def submit_sync(self, fn: Write, staged: Staged | None = None) -> Any:
        """Queue a write and block until it is committed; returns fn's result."""
        self._check_open()
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((fn, fut, staged))
        return fut.result()

    async def submit(self, fn: Write, staged: Staged | None = None) -> Any:
        """Queue a write and await its commit without blocking the event loop.

        `staged` objects are stored by the writer thread before the transaction, so one thread hop
        covers both the objects and the journal row. The writer wakes the loop once per transaction
        for all of its waiters, not once per write.
        """
        self._check_open()
        loop = asyncio.get_running_loop()
        waiter = _LoopWaiter(loop, loop.create_future())
        self._queue.put((fn, waiter, staged))
        return await waiter.future

    def close(self) -> None:
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout=10)
        self._wconn.close()
        for conn in self._readers:
            conn.close()

    # -- reading -------------------------------------------------------------------------------
    def reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
            self._local.conn = conn
            self._readers.append(conn)
        return conn

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """The reads inside see one state of the journal (a read transaction on this thread's connection; WAL
        lets the writer go on meanwhile). Nested use joins the outer snapshot."""
        conn = self.reader()
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        return self.reader().execute(sql, args).fetchall()

    def one(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.reader().execute(sql, args).fetchone()
        return row

    # -- refs ----------------------------------------------------------------------------------
    def get_ref(self, kind: str, name: str) -> Any | None:
        row = self.one("SELECT value FROM refs WHERE kind=? AND name=?", (kind, name))
        return None if row is None else json.loads(row["value"])

    def list_refs(self, kind: str) -> list[tuple[str, Any]]:
        rows = self.query("SELECT name, value FROM refs WHERE kind=? ORDER BY name", (kind,))
        return [(r["name"], json.loads(r["value"])) for r in rows]

    def set_ref_sync(self, kind: str, name: str, value: Any) -> None:
        text = json.dumps(value, sort_keys=True)
        self.submit_sync(lambda c: c.execute(
            "INSERT INTO refs(kind,name,value,updated_at) VALUES(?,?,?,?) "
            "ON CONFLICT(kind,name) DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at",
            (kind, name, text, time.time())))


class _LoopWaiter:
    """An event-loop future the writer thread settles: the outcome is kept on the writer and handed
    to the loop in one call per group commit (`_deliver`)."""

    __slots__ = ("loop", "future", "outcome")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> None:
        self.loop, self.future = loop, future
        self.outcome: tuple[Any, BaseException | None] | None = None

    def done(self) -> bool:
        return self.outcome is not None

    def set_result(self, value: Any) -> None:
        self.outcome = (value, None)

    def set_exception(self, exc: BaseException) -> None:
        self.outcome = (None, exc)


def _settle(waiters: list[_LoopWaiter]) -> None:
    for w in waiters:
        if w.future.done() or w.outcome is None:     # cancelled by its awaiter meanwhile
            continue
        value, exc = w.outcome
        if exc is None:
            w.future.set_result(value)
        else:
            w.future.set_exception(exc)


def _deliver(futures: list[Any]) -> None:
    """Hand the settled loop waiters of one group to their loops, one wake-up per loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_LoopWaiter]] = {}
    for f in futures:
        if isinstance(f, _LoopWaiter) and f.outcome is not None:
            by_loop.setdefault(f.loop, []).append(f)
    for loop, waiters in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, waiters)
        except RuntimeError:        # the loop is closed: nobody awaits these any more
            pass


def add_event(conn: sqlite3.Connection, run_id: str, type_: EventType, data: EventData | None = None) -> None:
    """One event of the run: its kind and its data model, stored as sorted JSON of the fields set."""
    conn.execute("INSERT INTO events(run_id, ts, type, data) VALUES(?,?,?,?)",
                 (run_id, time.time(), type_, json.dumps((data or NoData()).dump(), sort_keys=True)))


def write_action_entries(c: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Action-cache entries, each (rule, subject, key, output, inputs JSON, params JSON, version)."""
    c.executemany("INSERT OR REPLACE INTO action_cache(key, output) VALUES(?,?)", [(r[2], r[3]) for r in rows])
    c.executemany("INSERT OR REPLACE INTO action_last VALUES(?,?,?,?,?,?,?)", rows)


class JournalActionCache:
    """The rule engine's action cache, persisted in the journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def lookup(self, key: str) -> str | None:
        row = self.journal.one("SELECT output FROM action_cache WHERE key=?", (key,))
        return None if row is None else row["output"]

    def record(self, rule: str, subject: str, entry: CacheEntry) -> None:
        self.record_many([(rule, subject, entry)])

    def record_many(self, entries: list[tuple[str, str, CacheEntry]]) -> None:
        """All entries in one transaction (the rule engine flushes an outer build's entries at once)."""
        rows = [(rule, subject, e.key, e.output, json.dumps(e.inputs, sort_keys=True),
                 json.dumps(e.params, sort_keys=True), e.version) for rule, subject, e in entries]

        self.journal.submit_sync(lambda c: write_action_entries(c, rows))

    def last(self, rule: str, subject: str) -> CacheEntry | None:
        row = self.journal.one("SELECT * FROM action_last WHERE rule=? AND subject=?", (rule, subject))
        if row is None:
            return None
        return CacheEntry(row["key"], row["output"], json.loads(row["inputs"]), json.loads(row["params"]),
                          row["version"])
