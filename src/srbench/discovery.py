"""Where the store, its service and its token live (SVC-2, SVC-3, SVC-5, SVC-6).

- Managed store: ``<state-root>/.sr-bench/<stack>/store`` with state-root = the working directory
  (``SR_BENCH_STATE_ROOT`` overrides) and stack ``default`` (``SR_BENCH_STACK``).
- The managed service token is a private regular file (0600, never a symlink) beside the store.
- ``SR_BENCH_URL`` selects an external service; its token comes from ``SR_BENCH_TOKEN`` or from the
  variable that ``SR_BENCH_TOKEN_ENV`` names.
- The host API listens on loopback, port 8090 + ``SR_BENCH_PORT_OFFSET`` (``SR_BENCH_PORT`` wins); a
  default port already taken (another store's service) is replaced by a free one, and the service
  records where it listens in ``<store>/service.json``, where the CLI finds it.
- An https service is trusted through the system's trust store, or the PEM certificates that
  ``--ca-file`` / ``SR_BENCH_CA_FILE`` names (`client_verify`).
- The cache root (DEP-5) and the store's ``benchmark-options.json`` (DEP-1).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from srbench.errors import InvalidInput

if TYPE_CHECKING:        # annotations only: discovery stays free of pydantic at import (the CLI's start)
    import ssl

    from pydantic import JsonValue

BASE_PORT = 8090
API_PREFIX = "/api/sr-bench/v1"
CA_ENV = "SR_BENCH_CA_FILE"
CONNECT_TIMEOUT_S = 5.0        # a service or an object store that does not answer a connection by then is named


def token_env_name() -> str:
    return os.environ.get("SR_BENCH_TOKEN_ENV") or "SR_BENCH_TOKEN"


def env_token() -> str | None:
    value = os.environ.get(token_env_name())
    return value or None


def client_verify(ca_file: str | None = None) -> ssl.SSLContext | bool:
    """How a client checks an https service's certificate: against the PEM certificates in `ca_file`
    (``--ca-file``) or ``SR_BENCH_CA_FILE`` (a self-signed service certificate, or a private CA), else
    against the system's trust store (True)."""
    where = ca_file or os.environ.get(CA_ENV)
    if not where:
        return True
    # deferred: ssl loads only for a client that was given a CA file (the CLI starts light)
    import ssl

    try:
        return ssl.create_default_context(cafile=where)
    except (OSError, ssl.SSLError) as exc:
        raise InvalidInput(f"--ca-file / {CA_ENV} {where}: no PEM certificate could be read from it "
                           f"({getattr(exc, 'strerror', None) or exc}); give the service's certificate or "
                           "the CA that signed it") from None


def default_port() -> int:
    """``SR_BENCH_PORT`` (exact; 0 = any free port), else 8090 + ``SR_BENCH_PORT_OFFSET``."""
    for name in ("SR_BENCH_PORT", "SR_BENCH_PORT_OFFSET"):
        raw = os.environ.get(name, "").strip()
        if not raw:
            continue
        try:
            value = int(raw)
        except ValueError:
            raise InvalidInput(f"{name} must be a whole number, got {raw!r}") from None
        port = value if name == "SR_BENCH_PORT" else BASE_PORT + value
        if not 0 <= port <= 65535:
            raise InvalidInput(f"{name}={raw} gives port {port}, outside 0-65535")
        return port
    return BASE_PORT


def managed_store() -> Path:
    root = Path(os.environ.get("SR_BENCH_STATE_ROOT") or os.getcwd())
    stack = os.environ.get("SR_BENCH_STACK") or "default"
    if stack.strip(".") == "" or any(c in stack for c in "/\\\x00"):     # "../../x" made a store outside
        raise InvalidInput(f"SR_BENCH_STACK must be a plain name (no '/', not '.' or '..'), got {stack!r}")
    return root / ".sr-bench" / stack / "store"


def resolve_store(store: str | None) -> Path:
    if store:
        return Path(store).expanduser().resolve()
    if os.environ.get("SR_BENCH_STORE"):
        return Path(os.environ["SR_BENCH_STORE"]).expanduser().resolve()
    return managed_store().resolve()


def store_identity_of(store_dir: Path) -> str:
    """The store's identity as upstream clients check it: the SHA-256 of its canonical path. A service
    in a container whose path differs from the host's is given the host's with ``--store-identity``."""
    return hashlib.sha256(str(store_dir.expanduser().resolve()).encode()).hexdigest()


def store_command(store: Path, command: str = "stop") -> str:
    """The command line a message tells the user to type for `store` (``sr-bench --store DIR stop``), the path
    quoted for a shell (a store path may hold spaces or quotes)."""
    return f"sr-bench --store {shlex.quote(str(store))} {command}"


def token_path(store: Path) -> Path:
    return store.parent / f"{store.name}.service-token"


def read_private_file(path: Path, what: str = "token file") -> str | None:
    """Read a private secret file; refuse symlinks and files others can read."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"{what} {path} is not a regular file (symlinks are refused)")
    if st.st_mode & 0o077:
        raise InvalidInput(f"{what} {path} is readable by others; chmod 600 it")
    if st.st_uid != os.getuid():
        raise InvalidInput(f"{what} {path} belongs to another user")
    return path.read_text().strip() or None


def ensure_private_secret(path: Path, what: str = "token file") -> str:
    """The secret kept in `path`, created (random, 0600, O_EXCL, no symlink follow) if absent."""
    try:
        existing = read_private_file(path, what)
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} {path} is not UTF-8 text (damaged?): remove it, and the next command makes a "
                           "new one (anyone given the old one needs the new one)") from None
    if existing:
        return existing
    if path.exists():           # (O_EXCL below would say only "File exists")
        raise InvalidInput(f"{what} {path} is empty (its making was cut short?): remove it, and the next command "
                           "makes a new one (anyone given the old one needs the new one)")
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secret)
    return secret


def ensure_token(store: Path) -> str:
    """The managed token of a local store; a store that cannot be written here is named as such (a store
    path that is a file: before its token file is made beside it)."""
    if store.exists() and not store.is_dir():
        raise InvalidInput(unwritable_store(store, NotADirectoryError(errno.ENOTDIR, "it is a file, not a directory")))
    try:
        return ensure_private_secret(token_path(store))
    except OSError as exc:
        raise InvalidInput(unwritable_store(store, exc)) from None


def unwritable_store(store: Path, exc: OSError) -> str:
    """One line naming a store directory that cannot be created or written (not the file that failed)."""
    return (f"the store {store} cannot be written here ({exc.strerror or exc}): give --store (or SR_BENCH_STORE) "
            "a directory this user can create and write")


def cache_home() -> Path:
    """DEP-5: the cache root, ``~/.cache/vllm-sr/sr-bench-1.0`` unless ``SR_BENCH_HOME`` says otherwise."""
    return Path(os.environ.get("SR_BENCH_HOME") or os.path.expanduser("~/.cache/vllm-sr/sr-bench-1.0"))


OPTIONS_FIX = "correct the file, or remove it and set the options again with `sr-bench options set`"


def read_benchmark_options(store_dir: Path) -> dict[str, JsonValue]:
    """The operator's `<store>/benchmark-options.json` (DEP-1); absent means no options."""
    path = store_dir / "benchmark-options.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, OSError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}): {OPTIONS_FIX}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} must be a JSON object keyed by benchmark id: {OPTIONS_FIX}")
    return data


@dataclass
class ServiceInfo:
    url: str
    pid: int
    store_id: str
    store_dir: str | None = None       # `dir_identity` of the directory the service opened (None: older file)


def dir_identity(store: Path) -> str | None:
    """The store directory as the file system knows it (device and inode): a copy of the store — its
    service.json and token copied with it — is another directory, a bind mount of it the same one."""
    try:
        st = os.stat(store)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def service_file(store: Path) -> Path:
    return store / "service.json"


def read_service_info(store: Path) -> ServiceInfo | None:
    try:
        data = json.loads(service_file(store).read_text())
        info = ServiceInfo(url=data["url"], pid=int(data["pid"]), store_id=data["store_id"],
                           store_dir=data.get("store_dir"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if info.store_dir is not None and info.store_dir != dir_identity(store):
        return None        # a copied store: the service named there serves the original, not this one
    return info


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
