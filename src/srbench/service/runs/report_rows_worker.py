"""The process that builds report rows while runs go on (service/runs/report_rows.py), off the service's GIL.

Run as ``python -m srbench.service.runs.report_rows_worker`` by the service (`WorkerProcess`): requests
and answers are pickles on its stdin and stdout (the first request opens the store), so no script
of the caller's is imported again and nothing is on its command line; end of input ends it.

Grading and building a row is CPU work of the same size as dispatching the call; in the service's
own process it would take turns with the event loop. This worker process opens the same object
store and reads the journal's action cache (read-only); the grade objects it writes are durable (one
barrier per batch) before it answers. It writes nothing to the journal: it returns the action-cache
entries and the rows, and the service records them in one transaction on its journal writer. A
cell graded in a sandbox is left to the service (its sandbox is the service's), and so is a cell
this process cannot build (a benchmark it does not know); the worker exits when the service does.
"""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.cas.digest import digest_bytes
from srbench.cas.packs import PackIndex
from srbench.rules import Engine
from srbench.rules.engine import CacheEntry
from srbench.service.journal.report_rows import action_output, open_read_only
from srbench.stages.report.cells import ReportInputs, cell_row, memo_entry


class _ReadCache:
    """The journal's action cache, read-only; what this process builds is returned, not written."""

    def __init__(self, journal_path: str) -> None:
        self.conn = open_read_only(journal_path)
        self.held: list[tuple[str, str, CacheEntry]] = []
        self.keys: dict[str, str] = {}

    def lookup(self, key: str) -> str | None:
        got = self.keys.get(key)
        if got is not None:
            return got
        return action_output(self.conn, key)

    def record(self, rule: str, subject: str, entry: CacheEntry) -> None:
        self.record_many([(rule, subject, entry)])

    def record_many(self, entries: list[tuple[str, str, CacheEntry]]) -> None:
        self.held.extend(entries)
        for _, _, e in entries:
            self.keys[e.key] = e.output

    def last(self, rule: str, subject: str) -> CacheEntry | None:
        return None


class _BatchStore(ObjectStore):
    """The store, with the objects one batch reads or writes kept in memory until the batch ends
    (`forget`): a row reads its call record twice (its figures, then its grade) and its grade back
    after writing it, and the cells of one case share its case object. Objects never change under
    their digest, so a kept copy is the stored one (it was verified when read, or just written). The
    batch's packed call records are read up front, one open a pack (`read_ahead`), and an object put
    again in the same batch without a barrier is not compared with its stored copy again (a batch's
    grades repeat: a multiple-choice benchmark has a few)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept: dict[str, bytes] = {}
        self.put_here: set[str] = set()

    def get_bytes(self, digest: str, *, verify: bool | None = None) -> bytes:
        got = self.kept.get(digest)
        if got is None:
            got = self.kept[digest] = super().get_bytes(digest, verify=verify)
        return got

    def put_bytes(self, data: bytes, *, durable: bool = True) -> str:
        if not durable:
            digest = digest_bytes(data)
            if digest in self.put_here:      # written or found whole in this batch; the batch's barrier covers it
                return digest
        digest = super().put_bytes(data, durable=durable)
        self.kept[digest] = data
        self.put_here.add(digest)
        return digest

    def read_ahead(self, digests: list[str]) -> None:
        """Keep the packed objects among `digests` that the pack index lists (the batch's packs: `_index_packs`),
        read one open a pack and verified (`get_packed`); the others are read one by one as before."""
        self.kept.update(self.get_packed([d for d in digests if d not in self.kept]))

    def forget(self) -> None:
        self.kept = {}
        self.put_here = set()


@dataclass
class _Worker:
    """What this process holds once `init` opened the store: the store, the read-only action cache, the
    engine over both and the report inputs of the latest plans."""

    store: _BatchStore
    cache: _ReadCache
    engine: Engine
    inputs: dict[str, ReportInputs] = field(default_factory=dict)


_worker: list[_Worker] = []          # the one `init` made


def _watch_parent(parent: int) -> None:
    """Exit when the service is gone (a kill -9 leaves no orphan worker behind)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def init(store_url: str, verify_reads: bool, journal_path: str) -> None:
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    store = _BatchStore(store_url, verify_reads=verify_reads, create=False)
    cache = _ReadCache(journal_path)
    _worker[:] = [_Worker(store, cache, Engine(store, cache))]


def build(plan_digest: str, cells: list[tuple[str, list[Any]]],
          packs: list[str] | None = None) -> tuple[list[Any], list[Any], list[str]]:
    """(action-cache entries, (cell_id, memo entry) per built row, cell ids it could not build). `packs`: the
    packs the service found the cells' calls in; only they are indexed for the batch (`_index_packs`)."""
    (w,) = _worker
    store, cache, engine, inputs = w.store, w.cache, w.engine, w.inputs
    _index_packs(store, packs)
    if plan_digest not in inputs:
        if len(inputs) > 8:
            inputs.clear()
        inputs[plan_digest] = ReportInputs.load(store, {"plan": plan_digest})
    ri = inputs[plan_digest]
    rows: list[Any] = []
    failed: list[str] = []
    store.read_ahead([d for _, cell in cells for d in (cell[4], cell[6] if len(cell) > 6 else None) if d])
    with engine.batch():            # one barrier for every grade object, before the answer
        for cell_id, cell in cells:
            if getattr(get_benchmark(ri.cases[cell[1]].benchmark), "needs_sandbox", False):
                failed.append(cell_id)      # graded in a sandbox: the service grades it, with its own sandbox
                continue
            try:
                built = cell_row(engine, ri, cell_id, cell)
            except Exception:  # noqa: BLE001 - the service builds this row itself
                failed.append(cell_id)
                continue
            if not built.volatile:
                rows.append((cell_id, memo_entry(cell, built)))
    store.forget()
    entries = [(rule, subject, e.key, e.output, e.inputs, e.params, e.version) for rule, subject, e in cache.held]
    cache.held = []
    cache.keys.clear()
    return entries, rows, failed


def _index_packs(store: ObjectStore, packs: list[str] | None) -> None:
    """Index only the batch's packs, in a pack index of the batch's own, rather than every pack of the store
    (12 MiB at 100k cells, growing with the store: issue 42 item 3). An object in none of them (a
    conversation's turns, an older grade) makes the index list the directory, as any store does; once it has,
    it is kept whole, as before."""
    if store.packs is None or packs is None:
        return
    if store.packs.listings == 0:
        store.packs = PackIndex(store.packs.directory)
    store.packs.index_only(packs)


def main() -> None:
    out = os.fdopen(os.dup(1), "wb")     # the answers; anything printed goes to stderr
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    init(*pickle.load(inp))
    pickle.dump(("ready", None), out, protocol=pickle.HIGHEST_PROTOCOL)     # imports done: rows can be asked
    out.flush()
    while True:
        try:
            request = pickle.load(inp)
        except EOFError:
            return
        try:
            answer: Any = ("ok", build(*request))
        except Exception as exc:  # noqa: BLE001 - told to the service, which builds these rows itself
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


class WorkerProcess:
    """The service's side: one worker process, one request at a time (from one thread). It answers
    ``ready`` once it has imported what it needs and opened the store (seconds on a busy host): `ready`
    tells without waiting, so rows can be built elsewhere until then."""

    def __init__(self, store: ObjectStore, journal_path: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "srbench.service.runs.report_rows_worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self._ready = False
        self._send((store.url, store.verify_reads, journal_path))

    def ready(self, wait_s: float = 0.0) -> bool:
        """Whether the worker has started (its ``ready`` answer has come), waiting at most `wait_s` for it."""
        if not self._ready and select.select([self.stdout], [], [], max(0.0, wait_s))[0]:
            self._wait_ready()
        return self._ready

    def _wait_ready(self) -> None:
        status, _ = pickle.load(self.stdout)
        if status != "ready":
            raise RuntimeError(f"the report rows worker answered {status!r} before it was ready")
        self._ready = True

    def _send(self, value: Any) -> None:
        pickle.dump(value, self.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.stdin.flush()

    def build(self, plan_digest: str, cells: list[tuple[str, list[Any]]],
              packs: list[str] | None = None) -> tuple[list[Any], list[Any], list[str]]:
        if not self._ready:
            self._wait_ready()
        self._send((plan_digest, cells, packs))
        status, value = pickle.load(self.stdout)
        if status != "ok":
            raise RuntimeError(value)
        return value

    def close(self) -> None:
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.stdout.close()


if __name__ == "__main__":
    main()
