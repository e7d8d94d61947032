"""The store's target registry file: upstream's `target register --file` writes ``<store>/targets.json``
on the store host, and the service reads it (besides ``POST /targets``, sr-bench's own route).

The file is a JSON list of targets or ``{"targets": [...]}``, with upstream's registry keys only. Each
target is validated as one ``POST /targets`` registers (the same `Target` model, its router checked,
ids unique); a file that does not validate is a one-line 400 on every route that reads the registry,
naming the file, the target and the problem, and nothing of it is registered. A valid file's targets
are registered in the journal when its content changes (its sha256 is kept, so a restart does not
register it again over a later ``POST /targets``): the latest of the two operator actions wins.
upstream's ``cost_mode`` and ``native_limits`` have no sr-bench meaning; a file using them is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from srbench.errors import InvalidInput
from srbench.schemas.target import Target
from srbench.schemas.text import one_line
from srbench.targets import routers
from srbench.targets.pricing import price_problem

if TYPE_CHECKING:
    from srbench.service.app import Service

FILE = "targets.json"
KIND = "targets-file"          # journal ref: the sha256 of the file content last registered
UPSTREAM_KEYS = frozenset({"id", "kind", "base_url", "model", "api_key_env", "config_hash", "prices", "preview_url",
                           "expected_response_model", "cost_mode", "max_inference_calls", "preview_api_key_env",
                           "request_params", "capture_recipe", "native_limits"})
UNSUPPORTED = ("cost_mode", "native_limits")
SRBENCH_KEYS = frozenset({"models", "router"})       # sr-bench's own target fields, allowed beside upstream's
MAX_BYTES = 1024 * 1024        # as `POST /targets` reads (api_requests.RegisterTargets): up to 1000 targets
MAX_TARGETS = 1000


def _fail(problem: str) -> InvalidInput:
    return InvalidInput(one_line(f"the store's {FILE}: {problem} (fix the file, or remove it and register "
                                 "targets with `sr-bench target register`)"), code="invalid_target_registry")


def parse(raw: bytes) -> list[Target]:
    """The targets a registry file holds, validated; InvalidInput names the first problem."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _fail(f"not JSON ({exc})") from None
    except RecursionError:
        raise _fail("not JSON this service reads (nested too deeply)") from None
    if isinstance(data, dict) and set(data) == {"targets"}:
        data = data["targets"]
    if not isinstance(data, list):
        raise _fail("must be a list of targets or {\"targets\": [...]}")
    if len(data) > MAX_TARGETS:
        raise _fail(f"{len(data)} targets; at most {MAX_TARGETS}")
    out: list[Target] = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise _fail(f"targets[{i}] is not an object")
        unknown = sorted(set(entry) - UPSTREAM_KEYS - SRBENCH_KEYS)
        if unknown:
            raise _fail(f"targets[{i}]: unsupported field(s) {', '.join(unknown)}")
        used = [k for k in UNSUPPORTED if k in entry]
        if used:
            raise _fail(f"targets[{i}].{used[0]}: upstream's field has no meaning in sr-bench; remove it")
        try:
            target = Target.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise _fail(f"targets[{i}]{'.' + where if where else ''}: {err['msg']}") from None
        bad = routers.router_problem(target)
        if bad is not None:
            raise _fail(f"targets[{i}].router: {bad}")
        bad = price_problem(target)
        if bad is not None:
            raise _fail(f"targets[{i}].{bad}")
        out.append(target)
    dupes = sorted(i for i, n in Counter(t.id for t in out).items() if n > 1)
    if dupes:
        raise _fail(f"duplicate target id(s): {', '.join(dupes)}")
    return out


# path → (the file's stat signature, its sha256) when it was last found registered: every targets/plans
# request calls `sync`, and an unchanged file is then one stat instead of a read and a hash
_SEEN: dict[str, tuple[tuple[int, int, int, int], str]] = {}


def _signature(path: Path) -> tuple[int, int, int, int] | None:
    """Inode, size, mtime and ctime; None when absent, or when changed in the last 2 s (a timestamp's
    granularity could then hide a second write of the same size, as git's "racy" index entries)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if time.time() - max(st.st_mtime, st.st_ctime) < 2.0:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sync(service: Service) -> None:
    """Register the file's targets when its content changed since it was last registered."""
    path = service.store_dir / FILE
    sig, seen = _signature(path), _SEEN.get(str(path))
    if sig is not None and seen is not None and seen[0] == sig and service.journal.get_ref(KIND, "sha256") == seen[1]:
        return
    raw = _read(path)
    if raw is None:
        return
    sha = hashlib.sha256(raw).hexdigest()
    if service.journal.get_ref(KIND, "sha256") != sha:
        targets = parse(raw)
        for t in targets:
            service.journal.set_ref_sync("target", t.id, t.model_dump(mode="json"))
        service.journal.set_ref_sync(KIND, "sha256", sha)
    if sig is not None:
        _SEEN[str(path)] = (sig, sha)


def _read(path: Any) -> bytes | None:
    """The file's bytes (None when absent): a regular file of at most MAX_BYTES, opened without blocking,
    so a FIFO or a device in its place is refused instead of holding the service."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail(f"cannot read it ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _fail("is not a regular file")
        if info.st_size > MAX_BYTES:
            raise _fail(f"{info.st_size} bytes; at most {MAX_BYTES}")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BYTES:
                raise _fail(f"more than {MAX_BYTES} bytes; at most {MAX_BYTES}")
        return b"".join(chunks)
    except OSError as exc:
        raise _fail(f"cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
