"""Memoised pure rules: rule keys, the action cache and "why was this rebuilt".

A rule is a pure function of input digests and parameters. Its key is the digest of the canonical
JSON of ``{rule, version, inputs, params}``; the action cache maps key → output digest (Bazel's
action cache in miniature). ``Engine.build`` returns the cached output when the key is known and
otherwise runs the rule, stores its output as an object and records the key.

For ``--explain`` the cache also remembers, per (rule, subject) — e.g. ("report", run id) — the
inputs of the last build, so a later build can say which named input changed, or "up to date".

A rule may build other rules (a report builds one grade per cell). Their outputs are written
without a sync each and their cache entries are held: when the outermost build ends, one
durability barrier covers every object it wrote and all its entries are recorded together, so a
500-cell report costs one barrier and one journal commit, not 500 of each. An entry is never
recorded before its object is durable; a crash before the flush only loses cache entries, which
the next build recomputes.

A key is computed once however many threads ask for it at the same time (issue 31): the first to
miss the cache claims the key; the others wait for its output (given to them as soon as the rule
returned, before the claimant's barrier: their own flush syncs first) instead of running the rule
again. A claim that ends without an output (the rule raised, or its output is volatile) lets one
waiter claim the key in turn. Claims live in the engine, so they hold within one process: the
service, the only writer of its journal, grades through one engine (service/runs/report_rows.py).
A rule never calls a model, never reads the clock and never touches the network.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from srbench.cas.digest import JSONValue, digest_json
from srbench.cas.store import ObjectStore

RuleInputs: TypeAlias = dict[str, JSONValue]
"""A rule's inputs: names to object digests (or lists or maps of them); part of the action key."""
RuleParams: TypeAlias = dict[str, JSONValue]
"""A rule's parameters: JSON values; part of the action key."""
RuleFn = Callable[[ObjectStore, RuleInputs, RuleParams], Any]


VOLATILE_REASON = "not cached: it depends on a passing fault"


class Volatile(Exception):  # noqa: N818 - a signal with a value, not an error
    """Raised by a rule whose output depends on a passing fault (e.g. a sandbox that was down for
    one cell): the output is stored and returned, but never recorded in the action cache, so the
    next build computes it again."""

    def __init__(self, value: Any) -> None:
        super().__init__("volatile rule output")
        self.value = value


@dataclass(frozen=True)
class Rule:
    """A named, versioned pure function. Bumping `version` invalidates every cached output."""

    name: str
    version: str
    fn: RuleFn


@dataclass
class CacheEntry:
    key: str
    output: str
    inputs: RuleInputs
    params: RuleParams
    version: str


class ActionCache(Protocol):
    def lookup(self, key: str) -> str | None: ...

    def record(self, rule: str, subject: str, entry: CacheEntry) -> None: ...

    def record_many(self, entries: list[tuple[str, str, CacheEntry]]) -> None: ...

    def last(self, rule: str, subject: str) -> CacheEntry | None: ...


class MemoryActionCache:
    """An in-process action cache (tests, and tools that run without the service)."""

    def __init__(self) -> None:
        self._keys: dict[str, str] = {}
        self._last: dict[tuple[str, str], CacheEntry] = {}
        self._lock = threading.Lock()

    def lookup(self, key: str) -> str | None:
        return self._keys.get(key)

    def record(self, rule: str, subject: str, entry: CacheEntry) -> None:
        with self._lock:
            self._keys[entry.key] = entry.output
            self._last[(rule, subject)] = entry

    def record_many(self, entries: list[tuple[str, str, CacheEntry]]) -> None:
        for rule, subject, entry in entries:
            self.record(rule, subject, entry)

    def last(self, rule: str, subject: str) -> CacheEntry | None:
        return self._last.get((rule, subject))


@dataclass
class BuildResult:
    output: str
    hit: bool
    key: str
    reasons: list[str] = field(default_factory=list)

    @property
    def explanation(self) -> str:
        if self.hit:
            return "up to date"
        return "rebuilt: " + "; ".join(self.reasons)


def rule_key(rule: Rule, inputs: RuleInputs, params: RuleParams) -> str:
    return digest_json({"rule": rule.name, "version": rule.version, "inputs": inputs, "params": params})


def _diff(name: str, old: Any, new: Any) -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if len(changed) <= 3:
            return [f"{name}[{k}] changed" for k in changed]
        return [f"{name}: {len(changed)} of {len(set(old) | set(new))} entries changed"]
    return [f"{name} changed"]


def explain(previous: CacheEntry | None, rule: Rule, inputs: RuleInputs, params: RuleParams) -> list[str]:
    """Human-readable reasons why a build with these inputs differs from the previous one."""
    if previous is None:
        return ["never built before"]
    reasons: list[str] = []
    if previous.version != rule.version:
        reasons.append(f"rule {rule.name} version {previous.version} -> {rule.version}")
    for name in sorted(set(previous.inputs) | set(inputs)):
        reasons += _diff(f"input {name}", previous.inputs.get(name), inputs.get(name))
    for name in sorted(set(previous.params) | set(params)):
        reasons += _diff(f"param {name}", previous.params.get(name), params.get(name))
    return reasons or ["output missing from the action cache"]


class _Done:
    """`threading.Event`'s set and wait, on one lock held until set (an Event is a Condition and two locks: a
    claim is made per build, most never waited for)."""

    __slots__ = ("_held", "_set")

    def __init__(self) -> None:
        self._held = threading.Lock()
        self._held.acquire()
        self._set = False

    def set(self) -> None:
        """Called by the claiming thread only."""
        if not self._set:
            self._set = True
            self._held.release()

    def wait(self) -> None:
        if not self._set:
            with self._held:        # released by `set`; each waiter takes and gives it back in turn
                pass


class _Claim:
    """A key being built by one thread: its output once the rule returned (None: no output to share)."""

    def __init__(self) -> None:
        self.done = _Done()
        self.output: str | None = None


class _Batch(threading.local):
    """The entries held by the outermost build running on this thread."""

    def __init__(self) -> None:
        self.depth = 0
        self.entries: list[tuple[str, str, CacheEntry]] = []
        self.outputs: dict[str, str] = {}
        self.claimed: list[str] = []        # keys this thread claimed, released at its flush
        self.wrote = False


class Engine:
    """Runs rules against one object store and one action cache."""

    def __init__(self, store: ObjectStore, cache: ActionCache) -> None:
        self.store = store
        self.cache = cache
        self._batch = _Batch()
        self._claims: dict[str, _Claim] = {}
        self._claims_lock = threading.Lock()

    def build(self, rule: Rule, inputs: Mapping[str, JSONValue], params: Mapping[str, JSONValue] | None = None,
              *, subject: str = "") -> BuildResult:
        batch = self._batch
        batch.depth += 1
        try:
            return self._build(batch, rule, dict(inputs), dict(params or {}), subject)
        finally:
            batch.depth -= 1
            if batch.depth == 0:
                self._flush(batch)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Builds inside share one barrier and one cache write, at the end of the outermost one."""
        batch = self._batch
        batch.depth += 1
        try:
            yield
        finally:
            batch.depth -= 1
            if batch.depth == 0:
                self._flush(batch)

    def _build(self, batch: _Batch, rule: Rule, inputs: RuleInputs, params: RuleParams,
               subject: str) -> BuildResult:
        key = rule_key(rule, inputs, params)
        previous = self.cache.last(rule.name, subject)
        while True:
            found = batch.outputs.get(key) or self.cache.lookup(key)
            if found is not None and self.store.has(found):
                if previous is None or previous.key != key:
                    self._hold(batch, rule.name, subject, CacheEntry(key, found, inputs, params, rule.version))
                return BuildResult(found, True, key)
            with self._claims_lock:
                held = self._claims.get(key)
                if held is None:
                    claim = self._claims[key] = _Claim()
            if held is None:
                break
            claim = held
            claim.done.wait()
            if claim.output is not None:          # built by another thread: its output, our barrier
                batch.wrote = True
                self._hold(batch, rule.name, subject, CacheEntry(key, claim.output, inputs, params, rule.version))
                return BuildResult(claim.output, True, key)
        return self._run(batch, rule, inputs, params, subject, key, previous, claim)

    def _run(self, batch: _Batch, rule: Rule, inputs: RuleInputs, params: RuleParams, subject: str,
             key: str, previous: CacheEntry | None, claim: _Claim) -> BuildResult:
        """Run the rule under this thread's claim of `key` (see the module docstring)."""
        reasons = explain(previous, rule, inputs, params)
        try:
            value = rule.fn(self.store, inputs, params)
        except Volatile as v:
            self._release(key, claim)
            output = self.store.put_json(v.value, durable=False)
            batch.wrote = True
            return BuildResult(output, False, key, [*reasons, VOLATILE_REASON])
        except BaseException:
            self._release(key, claim)
            raise
        try:
            output = self.store.put_json(value, durable=False)
        except BaseException:
            self._release(key, claim)
            raise
        batch.wrote = True
        self._hold(batch, rule.name, subject, CacheEntry(key, output, inputs, params, rule.version))
        claim.output = output
        claim.done.set()                # waiters take the output now; the key is released at our flush
        batch.claimed.append(key)
        return BuildResult(output, False, key, reasons)

    def _release(self, key: str, claim: _Claim) -> None:
        with self._claims_lock:
            if self._claims.get(key) is claim:
                del self._claims[key]
        claim.done.set()

    @staticmethod
    def _hold(batch: _Batch, rule: str, subject: str, entry: CacheEntry) -> None:
        batch.entries.append((rule, subject, entry))
        batch.outputs[entry.key] = entry.output

    def _flush(self, batch: _Batch) -> None:
        entries, wrote, claimed = batch.entries, batch.wrote, batch.claimed
        batch.entries, batch.outputs, batch.wrote, batch.claimed = [], {}, False, []
        try:
            if wrote:
                self.store.sync()               # the objects before the entries that name them
            if entries:
                self.cache.record_many(entries)
        finally:
            if claimed:                         # recorded (or lost with a fault): later askers read the cache
                with self._claims_lock:
                    for key in claimed:
                        self._claims.pop(key, None)

    def status(self, rule: Rule, inputs: Mapping[str, JSONValue], params: Mapping[str, JSONValue] | None = None,
               *, subject: str = "") -> BuildResult | None:
        """Without building: the cached result, or None with nothing run."""
        key = rule_key(rule, dict(inputs), dict(params or {}))
        found = self.cache.lookup(key)
        if found is not None and self.store.has(found):
            return BuildResult(found, True, key)
        return None
