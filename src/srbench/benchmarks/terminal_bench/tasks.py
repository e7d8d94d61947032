"""Terminal-Bench task directories: `task.toml` (both forms), the task tree, its digest, and the case.

A native task directory holds ``task.toml``, ``instruction.md`` (the prompt), ``environment/Dockerfile``
(+ the build context's other files), ``tests/test.sh`` (+ test files) and ``solution/solve.sh`` (the
oracle). Two ``task.toml`` forms are read:

- 2.1 (``schema_version = "1.1"``): ``[task]`` name/description/keywords, ``[metadata]`` difficulty,
  category, tags, time estimates; ``[verifier] timeout_sec`` + ``[verifier.env]``; ``[agent]
  timeout_sec``; ``[environment]`` build_timeout_sec, docker_image, cpus, ``memory_mb``, ``storage_mb``,
  gpus, allow_internet + ``[environment.env]``;
- 2.0 (``version = "1.0"``, or no version key): the same tables without ``[task]``, with
  ``memory = "2G"`` / ``storage = "10G"`` strings.

Both become one `TaskConfig`. A task is pinned by its tree digest: sha256 of the canonical JSON of
``{relative path: sha256 of the file}`` over every file of the directory (``.git`` excluded), so it
is the same whichever layout or host the files came from. Missing fields take Harbor's defaults
(600 s timeouts, 1 CPU, 2048 MB) as read in its task model (unverified against a pinned Harbor).
"""

from __future__ import annotations

import base64
import re
import tomllib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from srbench.cas.digest import canonical_json, sha256_bytes
from srbench.errors import InvalidInput
from srbench.schemas.wire import WireJSON

REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh")
DIFFICULTIES = ("easy", "medium", "hard")
MAX_TASK_BYTES = 256 << 20          # one task tree, all files together (refused above: say so, never truncate)
_UNITS = {"": 1, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


class TaskConfig(BaseModel):
    """One task.toml, normalized over both forms."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    form: str                               # "2.1" (schema_version 1.1) | "2.0" (version 1.0)
    name: str | None = None                 # [task] name, e.g. terminal-bench/<task> (2.1 only)
    description: str | None = None
    difficulty: str = "unknown"
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    verifier_timeout_s: float = 600.0
    verifier_env: dict[str, str] = Field(default_factory=dict)
    agent_timeout_s: float = 600.0
    build_timeout_s: float = 600.0
    docker_image: str | None = None         # the prebuilt upstream image (recorded; sr-bench builds its own)
    cpus: float = 1.0
    memory_mb: int = 2048
    storage_mb: int | None = None
    gpus: int = 0
    allow_internet: bool = True
    environment_env: dict[str, str] = Field(default_factory=dict)


def _table(doc: WireJSON, key: str, where: str) -> WireJSON:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: [{key}] must be a table")
    return value


def _number(value: Any, what: str, where: str, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or (positive and value <= 0) or value < 0:
        raise InvalidInput(f"{where}: {what} must be a {'positive' if positive else 'non-negative'} number, "
                           f"not {value!r}")
    return float(value)


def size_mb(value: Any, what: str, where: str) -> int:
    """A memory/storage size in MB: an integer of MB (``memory_mb``) or a string like ``"2G"``/``"512M"``."""
    if isinstance(value, str):
        m = _SIZE.match(value)
        if not m:
            raise InvalidInput(f"{where}: {what} {value!r} is not a size like \"2G\" or \"512M\"")
        mb = float(m.group(1)) * _UNITS[m.group(2).lower()]
    else:
        mb = _number(value, what, where)
    if mb < 1:
        raise InvalidInput(f"{where}: {what} {value!r} is under 1 MB")
    return int(round(mb))


def _env(table: WireJSON, key: str, where: str) -> dict[str, str]:
    value = table.get("env", {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str | int | float | bool)
                                              for k, v in value.items()):
        raise InvalidInput(f"{where}: [{key}.env] must map names to strings")
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}


def _strings(value: Any, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{where}: {what} must be a list of strings")
    return list(value)


def _optional_str(value: Any, what: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{where}: {what} must be a string")
    return value


def parse_task_toml(data: bytes, where: str = "task.toml") -> TaskConfig:
    """Parse either task.toml form; InvalidInput with one line naming the field otherwise."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{where} is not valid TOML: {str(exc).splitlines()[0]}") from None
    if "schema_version" in doc:
        if str(doc["schema_version"]) != "1.1":
            raise InvalidInput(f"{where}: schema_version {doc['schema_version']!r} is not supported (1.1 is; "
                               "the 2.0 form has version = \"1.0\")")
        form = "2.1"
    elif str(doc.get("version", "1.0")) == "1.0":
        form = "2.0"
    else:
        raise InvalidInput(f"{where}: version {doc['version']!r} is not supported (2.0 tasks have version = \"1.0\")")
    task, meta = _table(doc, "task", where), _table(doc, "metadata", where)
    verifier, agent, env = _table(doc, "verifier", where), _table(doc, "agent", where), _table(doc, "environment", where)
    difficulty = meta.get("difficulty", "unknown")
    if not isinstance(difficulty, str) or not difficulty.strip():
        raise InvalidInput(f"{where}: [metadata] difficulty must be a string")
    out: WireJSON = {
        "form": form, "name": _optional_str(task.get("name"), "[task] name", where),
        "description": _optional_str(task.get("description"), "[task] description", where),
        "difficulty": difficulty.strip().lower(),
        "category": _optional_str(meta.get("category"), "[metadata] category", where),
        "tags": _strings(meta.get("tags"), "[metadata] tags", where),
        "verifier_env": _env(verifier, "verifier", where), "environment_env": _env(env, "environment", where),
        "docker_image": _optional_str(env.get("docker_image"), "[environment] docker_image", where),
    }
    tables = {"verifier": verifier, "agent": agent, "environment": env}
    for table, key, field in (("verifier", "timeout_sec", "verifier_timeout_s"), ("agent", "timeout_sec", "agent_timeout_s"),
                              ("environment", "build_timeout_sec", "build_timeout_s"), ("environment", "cpus", "cpus")):
        if key in tables[table]:
            out[field] = _number(tables[table][key], f"[{table}] {key}", where)
    for keys, field in ((("memory_mb", "memory"), "memory_mb"), (("storage_mb", "storage"), "storage_mb")):
        for key in keys:
            if key in env:
                out[field] = size_mb(env[key], f"[environment] {key}", where)
                break
    if "gpus" in env:
        out["gpus"] = int(_number(env["gpus"], "[environment] gpus", where, positive=False))
    if "allow_internet" in env:
        if not isinstance(env["allow_internet"], bool):
            raise InvalidInput(f"{where}: [environment] allow_internet must be true or false")
        out["allow_internet"] = env["allow_internet"]
    return TaskConfig(**out)


# -- the task tree ------------------------------------------------------------------------------
def tree_sha256(files: dict[str, bytes]) -> str:
    """The task's pin: sha256 of canonical JSON ``{relative path: sha256}`` over every file."""
    return sha256_bytes(canonical_json({rel: sha256_bytes(data) for rel, data in files.items()}))


def split_tasks(files: dict[str, bytes], prefix: str = "tasks/") -> dict[str, dict[str, bytes]]:
    """``{task dir name: {path inside the task: bytes}}`` from repository names ``tasks/<task>/<path>``."""
    out: dict[str, dict[str, bytes]] = {}
    for name, data in files.items():
        if not name.startswith(prefix):
            raise InvalidInput(f"source file {name} is not under {prefix}<task>/")
        parts = name[len(prefix):].split("/", 1)
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise InvalidInput(f"source file {name} is not inside a task directory")
        out.setdefault(parts[0], {})[parts[1]] = data
    return out


def check_tree(task: str, files: dict[str, bytes]) -> None:
    """A runnable native task: the required files, a Dockerfile environment, a bounded size."""
    missing = [f for f in REQUIRED if f not in files]
    if missing:
        extra = (" (docker-compose environments are not supported)"
                 if any(n.startswith("environment/docker-compose") for n in files) else "")
        raise InvalidInput(f"task {task} lacks {', '.join(missing)}{extra}")
    size = sum(len(d) for d in files.values())
    if size > MAX_TASK_BYTES:
        raise InvalidInput(f"task {task} holds {size >> 20} MiB of files; sr-bench embeds at most "
                           f"{MAX_TASK_BYTES >> 20} MiB per task in a dataset")
    for rel in files:
        if rel.startswith("/") or ".." in rel.split("/") or "\\" in rel:
            raise InvalidInput(f"task {task}: file name {rel!r} is not a plain relative path")


def encode_files(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: base64.b64encode(files[rel]).decode("ascii") for rel in sorted(files)}


def decode_files(encoded: dict[str, str]) -> dict[str, bytes]:
    return {rel: base64.b64decode(data.encode("ascii")) for rel, data in encoded.items()}


def under(files: dict[str, bytes], folder: str) -> dict[str, bytes]:
    """The files below `folder/`, named relative to it."""
    pre = folder.rstrip("/") + "/"
    return {rel[len(pre):]: data for rel, data in files.items() if rel.startswith(pre)}


def executable(rel: str, data: bytes) -> bool:
    """The mode a materialized file gets (the tree digest carries no modes): scripts are executable."""
    return rel.endswith(".sh") or data.startswith(b"#!")
