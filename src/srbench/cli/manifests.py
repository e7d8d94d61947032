"""A manifest as the CLI sends it: its dataset named by the file `dataset prepare` wrote, by its ``ds-`` ref
or 64-hex id, or by the SHA-256 of its bytes, resolved here to the sha256 the plan freezes (so the plan never
depends on where a file lives, and the service sees the one form it has always taken).

The forms a manifest's ``dataset`` may take:

- ``{sha256: …}`` (``path`` an optional hint) — as before, sent unchanged;
- ``{path: arc.json}`` — the manifest `dataset prepare` printed or wrote (its ``sha256`` is read), or the
  frozen ``.jsonl`` itself (its bytes are hashed); a relative path is read beside the manifest, else here;
- ``{id: ds-…}`` / ``{ref: ds-…}`` — a dataset of the store by its ref, 64-hex id or sha256;
- a bare string — a file when one exists at that path, else a ref, id or sha256.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from srbench.cas import sha256_bytes
from srbench.cli.common import Ctx, load_structured
from srbench.errors import InvalidInput, NotFound

HEX64 = re.compile(r"[0-9a-f]{64}")
NAME = re.compile(r"ds-[0-9a-f]{8,64}|[0-9a-f]{64}")
_KINDS = {"NoneType": "empty", "str": "plain text", "list": "a list", "int": "a number", "float": "a number",
          "bool": "a truth value"}     # what a YAML/JSON document that is not a mapping reads as


def read_manifest(obj: Ctx, path: str) -> Any:
    """The manifest file at `path` with its dataset resolved to ``{sha256}`` (a frozen plan: unchanged)."""
    value = load_structured(path)
    if not isinstance(value, dict) or ("targets" not in value and "case_count" in value):
        what = ("a targets file (`sr-bench target register --file " + path + "`)" if _targets_file(value)
                else "a dataset manifest (name it as the manifest's `dataset: {path: " + path + "}`)"
                if isinstance(value, dict) else _KINDS.get(type(value).__name__, f"a {type(value).__name__}"))
        raise InvalidInput(f"--manifest {path} is {what}, not a manifest: a manifest must be a mapping of version, "
                           "profile, seed, dataset and targets (docs/manifest.md)")
    if value.get("kind") != "plan" and "dataset" in value:
        value = {**value, "dataset": dataset_ref(obj, value["dataset"], Path(path).parent)}
    return value


def _targets_file(value: Any) -> bool:
    """Whether `value` reads as a targets file: a list of targets (or {"targets": [...]}) with endpoints."""
    items = value.get("targets") if isinstance(value, dict) and set(value) == {"targets"} else value
    return isinstance(items, list) and bool(items) and all(isinstance(t, dict) and "base_url" in t for t in items)


def dataset_ref(obj: Ctx, given: Any, base: Path) -> Any:
    """A manifest's `dataset` as the plan takes it: ``{sha256: …}`` (with the path hint it had)."""
    if isinstance(given, str):
        found = _file(given, base)
        return _from_file(found) if found else {"sha256": _by_name(obj, given)}
    if not isinstance(given, dict) or given.get("sha256") is not None:
        return given                                    # the service's own check names what is wrong
    keys = set(given)
    if keys == {"path"} and isinstance(given["path"], str):
        found = _file(given["path"], base)
        if found is None:
            raise InvalidInput(f"dataset.path {given['path']}: no such file (give the file `sr-bench dataset "
                               "prepare` wrote, e.g. `> arc.json`, or name the dataset by its ds- ref)")
        return _from_file(found)
    if len(keys) == 1 and keys <= {"id", "ref"} and isinstance(name := given[keys.pop()], str):
        return {"sha256": _by_name(obj, name)}
    return given


def _file(name: str, base: Path) -> Path | None:
    """The file a dataset path names: beside the manifest, else relative to here."""
    for p in (base / name, Path(name)):
        if p.is_file():
            return p
    return None


def _from_file(path: Path) -> dict[str, str]:
    """The sha256 of a printed dataset manifest, or of a frozen dataset file's bytes (its path kept as the
    hint the service may read)."""
    if path.suffix.lower() == ".jsonl":
        try:
            return {"sha256": sha256_bytes(path.read_bytes()), "path": str(path.resolve())}
        except OSError as exc:
            raise InvalidInput(f"dataset.path {path}: cannot read it ({exc.strerror or exc})") from None
    value = load_structured(str(path))
    sha = value.get("sha256") if isinstance(value, dict) else None
    if not isinstance(sha, str) or not HEX64.fullmatch(sha):
        raise InvalidInput(f"dataset.path {path}: not a dataset manifest (no sha256); give the file `sr-bench "
                           "dataset prepare` wrote, or the frozen .jsonl")
    return {"sha256": sha}


def _by_name(obj: Ctx, name: str) -> str:
    """The sha256 of the store's dataset named by its ds- ref, 64-hex id or sha256."""
    if not NAME.fullmatch(name):
        raise InvalidInput(f"dataset {name!r}: no such file, and not a dataset ref (ds-…), id or sha256 "
                           "(`sr-bench dataset list` lists them)")
    try:
        sha: str = obj.client.get(f"/datasets/{name}")["manifest"]["sha256"]
    except NotFound:
        if HEX64.fullmatch(name):       # a sha256 this store does not hold: the plan says so, as before
            return name
        raise NotFound(f"dataset {name}: not a dataset of this store (`sr-bench dataset list` lists them)") from None
    return sha
