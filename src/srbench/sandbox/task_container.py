"""Agent task containers (Terminal-Bench) on the Docker engine ``DOCKER_HOST`` names, local or remote.

Unlike the grader's one-shot sandbox (``docker_backend``), a task container lives for one agent
trial: it is started from the task's image, receives one command at a time (``exec``, each with its
own timeout, output kept as bounded tails), has files copied in (``put_files``) and read back
(``read_file``), and is removed at the end. Rules:

- **Images**: built from the task's ``environment/`` (Dockerfile + context) with **local base images
  only**: every image the Dockerfile names is checked on the engine first and a missing one is
  `BaseImageMissing` (one line naming it), never pulled (the engine would pull a missing base by
  itself). Builds run with no network by default. Images are **cached by content**: the tag is
  ``sr-bench-task:<key>``, key = sha256 over the context files, the base image ids and the build
  network, so a task is built once per engine and reused by every cell (labelled
  ``sr-bench.owned=task-image``; ``remove_images()`` deletes them).
- **Containers**: ``network_mode=none``, memory (= memory + swap), CPU and pids limits, no new
  privileges; the command is a shell loop (the image's entrypoint is not run).
- **Ownership**: every container carries ``sr-bench.owned=task-container``, the scope (the store
  id the service set with `set_scope`), the cell and this process's token. `sweep()` at service
  start removes the scope's containers left by an earlier process (a kill -9 mid-trial).
Every call here is blocking; callers in an event loop use a thread.
"""

from __future__ import annotations

import io
import os
import secrets
import tarfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from srbench.cas.digest import canonical_json, sha256_bytes
from srbench.sandbox.base import SandboxFault, SandboxUnavailable
from srbench.sandbox.dockerfile import external_images
from srbench.sandbox.exec_stream import Tail, read_frames
from srbench.schemas.wire import WireJSON

OWNED = "sr-bench.owned"
SCOPE = "sr-bench.scope"
CELL = "sr-bench.cell"
PROCESS = "sr-bench.process"
IMAGE_KEY = "sr-bench.image-key"
IMAGE_REPO = "sr-bench-task"
PROCESS_TOKEN = secrets.token_hex(8)           # this process's containers are never swept by itself
KEEPALIVE = ["sh", "-c", "while :; do sleep 3600; done"]
# the command runs under coreutils/busybox `timeout` when the image has it (the host deadline is the backstop)
WRAPPER = ('b=bash; command -v bash >/dev/null 2>&1 || b=sh; '
           'if command -v timeout >/dev/null 2>&1; then exec timeout -k 5 "$2" "$b" -c "$1"; fi; exec "$b" -c "$1"')

_scope = "default"
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class TaskEnvironmentUnavailable(SandboxUnavailable):
    code = "task_environment_unavailable"


class BaseImageMissing(TaskEnvironmentUnavailable):
    code = "base_image_missing"


class TaskBuildFailed(SandboxFault):
    code = "task_build_failed"


def set_scope(scope: str) -> None:
    """Which store's containers this process makes (the service sets its store id at start)."""
    global _scope
    _scope = scope


def current_scope() -> str:
    return _scope


def _docker() -> Any:
    try:
        # deferred: docker is optional and heavy: imported only when a container is used
        import docker
    except ImportError as exc:
        raise TaskEnvironmentUnavailable("task containers need the docker package: pip install 'sr-bench[sandbox]'"
                                         ) from exc
    return docker


def engine(timeout_s: float = 60.0) -> Any:
    """The low-level client of the engine at DOCKER_HOST; TaskEnvironmentUnavailable (one line) otherwise."""
    docker = _docker()
    try:
        api = docker.from_env(timeout=int(timeout_s)).api
        api.ping()
    except Exception as exc:  # noqa: BLE001 - any connection problem is one message
        where = os.environ.get("DOCKER_HOST") or "the default socket"
        raise TaskEnvironmentUnavailable(f"no Docker engine reachable at {where} ({type(exc).__name__}): start "
                                         "one (or set DOCKER_HOST to its socket) on the service host") from None
    return api


def engine_facts(api: Any) -> WireJSON:
    v = api.version()
    host = os.environ.get("DOCKER_HOST", "")
    return {"version": v.get("Version"), "api_version": v.get("ApiVersion"), "os": v.get("Os"), "arch": v.get("Arch"),
            "local": not host or host.startswith("unix://")}


# -- images -------------------------------------------------------------------------------------
def base_images(api: Any, dockerfile: bytes, where: str) -> dict[str, WireJSON]:
    """{image: {id, repo_digests}} for every external image the Dockerfile names; BaseImageMissing
    naming every absent one (sr-bench never pulls)."""
    docker = _docker()
    try:
        names = external_images(dockerfile.decode("utf-8", "replace"), where)
    except Exception as exc:  # InvalidInput: an unknowable base
        raise TaskBuildFailed(getattr(exc, "message", str(exc))) from None
    found, missing = {}, []
    for name in names:
        try:
            info = api.inspect_image(name)
        except docker.errors.ImageNotFound:
            missing.append(name)
            continue
        except docker.errors.APIError as exc:
            raise TaskEnvironmentUnavailable(f"the Docker engine refused to inspect {name}: {exc.explanation}") from None
        found[name] = {"id": info["Id"], "repo_digests": sorted(info.get("RepoDigests") or [])}
    if missing:
        raise BaseImageMissing(f"{where}: base image {', '.join(missing)} is not on the Docker engine; load or build "
                               "it there first (sr-bench never pulls images from a registry)")
    return found


def context_tar(files: dict[str, bytes], executable: Any) -> bytes:
    """A tar of `files` (sorted, fixed mtime/owner, scripts 0755) — the same bytes for the same files."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for rel in sorted(files):
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                    tar.addfile(info)
            info = tarfile.TarInfo(rel)
            info.size, info.mtime = len(files[rel]), 0
            info.mode = 0o755 if executable(rel, files[rel]) else 0o644
            tar.addfile(info, io.BytesIO(files[rel]))
    return buf.getvalue()


@dataclass(frozen=True)
class ImageInfo:
    tag: str
    image_id: str
    key: str
    bases: dict[str, WireJSON]
    built: bool                       # False: the cached image was reused
    build_network: str
    build_s: float = 0.0


def _lock(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def ensure_image(api: Any, env_files: dict[str, bytes], *, where: str, executable: Any,
                 build_timeout_s: float = 600.0, network: str = "none") -> ImageInfo:
    """The task image for this environment: the cached one when present, else built (local bases only)."""
    docker = _docker()
    if "Dockerfile" not in env_files:
        raise TaskBuildFailed(f"{where}: the environment has no Dockerfile")
    bases = base_images(api, env_files["Dockerfile"], where)
    key = sha256_bytes(canonical_json({"v": 1, "files": {r: sha256_bytes(d) for r, d in env_files.items()},
                                       "bases": {b: i["id"] for b, i in bases.items()}, "network": network}))
    tag = f"{IMAGE_REPO}:{key[:32]}"
    with _lock(key):
        try:
            info = api.inspect_image(tag)
            if (info.get("Config", {}).get("Labels") or {}).get(IMAGE_KEY) == key:
                return ImageInfo(tag, info["Id"], key, bases, False, network)
        except docker.errors.ImageNotFound:
            pass
        started = time.monotonic()
        context = context_tar(env_files, executable)
        tail: list[str] = []
        image_id = None
        try:
            stream = api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag, pull=False, rm=True,
                               forcerm=True, network_mode=network, decode=True, timeout=int(build_timeout_s) + 5,
                               labels={OWNED: "task-image", IMAGE_KEY: key, SCOPE: current_scope()})
            for chunk in stream:
                if "error" in chunk:
                    raise TaskBuildFailed(f"{where}: the image build failed: {str(chunk['error']).strip()[:400]}")
                line = str(chunk.get("stream") or "").strip()
                if line:
                    tail = (tail + [line])[-3:]
                if isinstance(chunk.get("aux"), dict) and chunk["aux"].get("ID"):
                    image_id = chunk["aux"]["ID"]
                if time.monotonic() - started > build_timeout_s:
                    raise TaskBuildFailed(f"{where}: the image build took over {build_timeout_s:g} s")
        except TaskBuildFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - engine or timeout failure: one line
            raise TaskBuildFailed(f"{where}: the image build failed ({type(exc).__name__}): {' | '.join(tail)}"
                                  ) from None
        info = api.inspect_image(tag)
        if image_id is not None and info["Id"] != image_id:
            raise TaskBuildFailed(f"{where}: the built image {image_id} is not what {tag} names ({info['Id']})")
        return ImageInfo(tag, info["Id"], key, bases, True, network, round(time.monotonic() - started, 3))


def remove_images(api: Any, scope: str | None = None) -> list[str]:
    """Delete the cached task images (those first built for `scope`, or all); containers using one
    are removed first by the caller."""
    removed = []
    labels = [f"{OWNED}=task-image"] + ([f"{SCOPE}={scope}"] if scope else [])
    for img in api.images(filters={"label": labels}):
        try:
            api.remove_image(img["Id"], force=True)
            removed.append(img["Id"])
        except Exception:  # noqa: BLE001 - in use or gone
            pass
    return removed


# -- containers ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContainerLimits:
    cpus: float
    memory_mb: int
    pids: int = 4096

    def as_dict(self) -> WireJSON:
        return {"cpus": self.cpus, "memory_mb": self.memory_mb, "memory_swap_mb": self.memory_mb, "pids": self.pids,
                "network": "none", "no_new_privileges": True}


@dataclass
class CommandResult:
    exit_code: int | None
    stdout: bytes                   # the tail kept
    stderr: bytes
    stdout_bytes: int               # everything the command wrote
    stderr_bytes: int
    timed_out: bool
    wall_s: float
    extra: WireJSON = field(default_factory=dict)


class TaskContainer:
    """One running task container; `remove()` (idempotent) ends it."""

    def __init__(self, api: Any, image: ImageInfo, limits: ContainerLimits, *, cell: str,
                 env: dict[str, str] | None = None) -> None:
        self.api, self.image, self.limits = api, image, limits
        labels = {OWNED: "task-container", SCOPE: current_scope(), CELL: cell[:200], PROCESS: PROCESS_TOKEN}
        host = api.create_host_config(network_mode="none", mem_limit=limits.memory_mb << 20,
                                      memswap_limit=limits.memory_mb << 20, nano_cpus=int(limits.cpus * 1e9),
                                      pids_limit=limits.pids, security_opt=["no-new-privileges"])
        self.id: str | None = None
        try:
            self.id = api.create_container(image.image_id, entrypoint=KEEPALIVE[:1], command=KEEPALIVE[1:],
                                           labels=labels, host_config=host, network_disabled=True,
                                           environment=dict(env or {}))["Id"]
            api.start(self.id)
        except Exception as exc:  # noqa: BLE001
            self.remove()
            raise SandboxFault(f"the Docker engine could not start the task container: {exc}") from None
        self.workdir = (api.inspect_image(image.image_id).get("Config") or {}).get("WorkingDir") or "/"

    def exec(self, command: str, timeout_s: float, *, env: dict[str, str] | None = None,
             keep: tuple[int, int] = (96_000, 32_000), user: str | None = None) -> CommandResult:
        """Run `command` with bash (sh without bash) in the container's working directory; the
        command gets `timeout_s`, then it is killed; stdout/stderr tails of `keep` bytes are kept."""
        if self.id is None:
            raise SandboxFault("the task container is gone")
        started = time.monotonic()
        argv = ["sh", "-c", WRAPPER, "sr-bench", command, f"{max(1.0, timeout_s):g}"]
        try:
            ex = self.api.exec_create(self.id, argv, environment=dict(env or {}), user=user or "")["Id"]
            sock = self.api.exec_start(ex, socket=True)
        except Exception as exc:  # noqa: BLE001
            raise SandboxFault(f"the Docker engine could not run a command in the task container: {exc}") from None
        out, err = Tail(keep[0]), Tail(keep[1])
        timed_out = not read_frames(sock, started + timeout_s + 10, out, err)
        exit_code = None
        try:
            info = self.api.exec_inspect(ex)
            if not info.get("Running"):
                exit_code = info.get("ExitCode")
        except Exception:  # noqa: BLE001
            pass
        # `timeout` ends the command with 124 (137 after the -k kill): that is the per-command limit firing
        if exit_code in (124, 137) and time.monotonic() - started >= timeout_s - 0.5:
            timed_out = True
        return CommandResult(exit_code, bytes(out.data), bytes(err.data), out.total, err.total, timed_out,
                             round(time.monotonic() - started, 3))

    def put_files(self, dest: str, files: dict[str, bytes], executable: Any) -> None:
        """Copy `files` (relative names) into the directory `dest` (created, owned by root)."""
        assert self.id is not None
        prefix = dest.strip("/")
        data = context_tar({f"{prefix}/{rel}": d for rel, d in files.items()}, executable)
        try:
            if not self.api.put_archive(self.id, "/", data):
                raise SandboxFault(f"the Docker engine refused to copy files to {dest}")
        except SandboxFault:
            raise
        except Exception as exc:  # noqa: BLE001
            raise SandboxFault(f"the Docker engine could not copy files to {dest}: {exc}") from None

    def read_file(self, path: str, max_bytes: int) -> bytes | None:
        """The file's bytes (None when it does not exist); SandboxFault when larger than `max_bytes`."""
        docker = _docker()
        assert self.id is not None
        try:
            stream, stat = self.api.get_archive(self.id, path)
        except docker.errors.NotFound:
            return None
        except Exception as exc:  # noqa: BLE001
            raise SandboxFault(f"the Docker engine could not read {path}: {exc}") from None
        if int(stat.get("size", 0)) > max_bytes:
            raise SandboxFault(f"{path} is {stat.get('size')} bytes, over the {max_bytes} read")
        raw = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            member = next((m for m in tar.getmembers() if m.isfile()), None)
            fh = tar.extractfile(member) if member is not None else None
            return fh.read(max_bytes + 1)[:max_bytes] if fh is not None else None

    def remove(self) -> None:
        if self.id is None:
            return
        cid, self.id = self.id, None
        try:
            self.api.remove_container(cid, force=True, v=True)
        except Exception:  # noqa: BLE001 - best effort; labelled for the sweep at the next start
            pass


def sweep(api: Any | None = None, scope: str | None = None) -> list[str]:
    """Remove the scope's task containers made by another (earlier) process; returns their ids."""
    api = api or engine(timeout_s=15)
    wanted = scope or current_scope()
    removed = []
    for c in api.containers(all=True, filters={"label": [f"{OWNED}=task-container", f"{SCOPE}={wanted}"]}):
        if (c.get("Labels") or {}).get(PROCESS) == PROCESS_TOKEN:
            continue
        try:
            api.remove_container(c["Id"], force=True, v=True)
            removed.append(c["Id"])
        except Exception:  # noqa: BLE001 - removed meanwhile
            pass
    return removed


def owned_containers(api: Any, scope: str | None = None) -> list[WireJSON]:
    filters = [f"{OWNED}=task-container"] + ([f"{SCOPE}={scope}"] if scope else [])
    return list(api.containers(all=True, filters={"label": filters}))
