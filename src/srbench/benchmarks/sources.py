"""Pinned upstream sources: download them (httpx), read local copies, and record what was read.

A Hugging Face dataset file is fetched from ``<url>/resolve/<revision>/<file>``; a GitHub file from
``raw.githubusercontent.com/<owner>/<repo>/<revision>/<file>``; a GitHub glob (``data/evaluation/*.json``)
from the revision's tarball on ``codeload.github.com``, keeping only the matching regular files.
``HF_TOKEN`` from the environment is sent as a Bearer token to Hugging Face only (never to GitHub;
httpx drops it on cross-host redirects). Downloads are cached under ``<dest_dir>/<revision>/``,
laid out like the upstream repository, and written atomically, so a cached copy is always whole.

Every failure is a `SourceUnavailable` with one line saying what to do: accept the terms and set
``HF_TOKEN`` for a gated source (DS-10), or prepare offline with ``--source-path DIR --revision R``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlparse

from srbench.benchmarks.contract import SourcePin
from srbench.benchmarks.pins import SourceMismatch, listing_sha256
from srbench.cas.digest import sha256_bytes
from srbench.errors import InvalidInput, SourceUnavailable
from srbench.schemas.dataset import SourceFile, SourceRecord

if TYPE_CHECKING:
    import httpx

Origin = Literal["download", "local-import", "package"]
TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 15.0        # an offline host fails fast and the offline mirror (if any) is used
_CHUNK = 1 << 20


# -- URLs --------------------------------------------------------------------------------------
def _host(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


def is_glob(name: str) -> bool:
    return any(ch in name for ch in "*?[")


def _github_repo(url: str) -> str:
    parts = [p for p in urlparse(url).path.split("/") if p]
    if len(parts) < 2:
        raise InvalidInput(f"source url {url} does not name a GitHub owner/repository")
    return f"{parts[0]}/{parts[1].removesuffix('.git')}"


def file_url(pin: SourcePin, name: str) -> str:
    """The download URL of one pinned file at the pinned revision."""
    host = _host(pin.url)
    if host == "huggingface.co":
        return f"{pin.url.rstrip('/')}/resolve/{pin.revision}/{name}"
    if host == "github.com":
        return f"https://raw.githubusercontent.com/{_github_repo(pin.url)}/{pin.revision}/{name}"
    raise InvalidInput(f"no downloader for source host {host or pin.url!r}")


def tarball_url(pin: SourcePin) -> str:
    if _host(pin.url) != "github.com":
        raise InvalidInput(f"glob files need a git source on github.com, not {pin.url}")
    return f"https://codeload.github.com/{_github_repo(pin.url)}/tar.gz/{pin.revision}"


def matches(name: str, pattern: str) -> bool:
    """Glob match segment by segment (``*`` never crosses ``/``)."""
    a, b = name.split("/"), pattern.split("/")
    return len(a) == len(b) and all(fnmatch.fnmatchcase(x, y) for x, y in zip(a, b, strict=True))


# -- errors ------------------------------------------------------------------------------------
def _offline_hint(pin: SourcePin) -> str:
    return f"or prepare from a local copy with --source-path DIR --revision {pin.revision}"


def _status_error(pin: SourcePin, url: str, status: int) -> SourceUnavailable:
    if status in (401, 403):
        if pin.gated:
            token = "HF_TOKEN was refused" if os.environ.get("HF_TOKEN") else "HF_TOKEN is not set"
            return SourceUnavailable(
                f"{pin.url} is gated (HTTP {status}, {token}): accept the terms at {pin.url} and set "
                f"HF_TOKEN to a token of that account, {_offline_hint(pin)}",
                code="source_gated",
            )
        return SourceUnavailable(f"access denied (HTTP {status}) for {url}: set HF_TOKEN if the source "
                                 f"needs an account, {_offline_hint(pin)}")
    if status == 404:
        return SourceUnavailable(f"{url} not found (HTTP 404): revision {pin.revision} of {pin.url} lacks "
                                 f"this file, {_offline_hint(pin)}")
    return SourceUnavailable(f"download of {url} failed with HTTP {status}: retry later, {_offline_hint(pin)}")


def _network_error(pin: SourcePin, url: str, exc: Exception) -> SourceUnavailable:
    kind = type(exc).__name__
    return SourceUnavailable(f"cannot download {url} ({kind}): check the network, {_offline_hint(pin)}")


# -- download ----------------------------------------------------------------------------------
def _headers(url: str) -> dict[str, str]:
    token = os.environ.get("HF_TOKEN", "").strip()
    if token and _host(url) == "huggingface.co":
        return {"Authorization": f"Bearer {token}"}
    return {}


def _write_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part-{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _get(client: httpx.Client, pin: SourcePin, url: str, dest: Path, size: int | None = None) -> None:
    """Download `url` to `dest`; a pinned `size` the answer's Content-Length contradicts fails at once."""
    import httpx  # deferred: only a download needs it (the service and its workers load it otherwise never)

    try:
        with client.stream("GET", url, headers=_headers(url)) as resp:
            if resp.status_code != 200:
                raise _status_error(pin, url, resp.status_code)
            announced = resp.headers.get("content-length")
            if size is not None and announced is not None and announced.isdigit() and int(announced) != size \
                    and not resp.headers.get("content-encoding"):
                raise SourceMismatch(f"{url} announces {announced} bytes where the pinned file has {size}: not the "
                                     f"pinned file (nothing was kept); retry, or prepare from a checked local copy")
            _write_atomic(dest, resp.iter_bytes(_CHUNK))
    except httpx.HTTPError as exc:
        raise _network_error(pin, url, exc) from exc
    except OSError as exc:
        raise SourceUnavailable(f"cannot write {dest}: {exc.strerror or exc}") from exc


def _extract_glob(pin: SourcePin, archive: Path, pattern: str, root: Path) -> list[str]:
    names: list[str] = []
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                parts = member.name.split("/", 1)
                if len(parts) != 2 or not member.isfile():
                    continue
                rel = parts[1]
                if ".." in rel.split("/") or rel.startswith("/") or not matches(rel, pattern):
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                _write_atomic(root / rel, [fh.read()])
                names.append(rel)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SourceUnavailable(f"the tarball of {pin.url} at {pin.revision} is unreadable ({exc}): delete "
                                f"{archive} and retry, {_offline_hint(pin)}") from exc
    if not names:
        raise SourceUnavailable(f"no file matches {pattern} in {pin.url} at {pin.revision}, {_offline_hint(pin)}")
    return sorted(names)


def _index_path(root: Path, pattern: str) -> Path:
    return root / f".sr-bench-glob-{sha256_bytes(pattern.encode())[:16]}.json"


def _client(transport: httpx.BaseTransport | None, timeout_s: float) -> httpx.Client:
    import httpx  # deferred: only a download needs it (with rich, click and pygments: ~6 MiB a process)

    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S))
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=True)


def fetch_pinned(pin: SourcePin, dest_dir: Path, *, transport: httpx.BaseTransport | None = None,
                 timeout_s: float = TIMEOUT_S, sizes: dict[str, int | None] | None = None) -> dict[str, Path]:
    """Download every pinned file (cached) and return ``{repository-relative name: local path}``;
    `sizes` (from the pin table) lets a download of the wrong length fail before its body is read."""
    root = Path(dest_dir) / pin.revision
    out: dict[str, Path] = {}
    client: httpx.Client | None = None
    try:
        for name in pin.files:
            if is_glob(name):
                index = _index_path(root, name)
                if index.is_file():
                    cached = json.loads(index.read_text("utf-8"))
                    if all((root / n).is_file() for n in cached):
                        out.update({n: root / n for n in cached})
                        continue
                client = client or _client(transport, timeout_s)
                archive = root / ".sr-bench-source.tar.gz"
                if not archive.is_file():
                    _get(client, pin, tarball_url(pin), archive)
                names = _extract_glob(pin, archive, name, root)
                _write_atomic(index, [json.dumps(names).encode("utf-8")])
                archive.unlink(missing_ok=True)
                out.update({n: root / n for n in names})
            else:
                dest = root / name
                if not dest.is_file():
                    client = client or _client(transport, timeout_s)
                    _get(client, pin, file_url(pin, name), dest, (sizes or {}).get(name))
                out[name] = dest
    finally:
        if client is not None:
            client.close()
    return dict(sorted(out.items()))


# -- local copies and provenance ---------------------------------------------------------------
def locate_pinned(pin: SourcePin, root: Path) -> dict[str, Path]:
    """The pinned files under a local directory laid out like the upstream repository."""
    root = Path(root)
    if not root.is_dir():
        raise InvalidInput(f"source path {root} is not a directory")
    out: dict[str, Path] = {}
    for name in pin.files:
        if is_glob(name):
            found = {p.relative_to(root).as_posix(): p for p in root.glob(name) if p.is_file()}
            if not found:
                raise InvalidInput(f"no file matches {name} under {root}")
            out.update(found)
        else:
            path = root / name
            if not path.is_file():
                raise InvalidInput(f"{name} not found under {root}")
            out[name] = path
    return dict(sorted(out.items()))


def read_files(paths: dict[str, Path]) -> dict[str, bytes]:
    """Read every located file into ``{name: bytes}`` (sorted by name)."""
    out: dict[str, bytes] = {}
    for name in sorted(paths):
        try:
            out[name] = Path(paths[name]).read_bytes()
        except OSError as exc:
            raise SourceUnavailable(f"cannot read source file {paths[name]}: {exc.strerror or exc}") from exc
    return out


def content_sha256(files: dict[str, bytes]) -> str:
    """One hash for a set of files: the sha256 of their ``sha256sum`` listing (``<sha256>  <name>``
    lines, sorted by name). A pin's ``content_sha256`` is this over the pinned revision's files."""
    return listing_sha256({n: sha256_bytes(files[n]) for n in files})


def source_record(pin: SourcePin, files: dict[str, bytes], *, origin: Origin, revision: str | None = None,
                  access_note: str | None = None) -> SourceRecord:
    """What a dataset was built from: the pin, the revision read and the sha256 of every file read."""
    if not files:
        raise InvalidInput(f"no source files were read for {pin.url}")
    return SourceRecord(
        url=pin.url,
        revision=revision or pin.revision,
        files=[SourceFile(name=n, sha256=sha256_bytes(files[n])) for n in sorted(files)],
        origin=origin,
        license_url=pin.license_url,
        access_note=access_note if access_note is not None else pin.access_note,
    )


__all__ = [
    "content_sha256",
    "fetch_pinned",
    "file_url",
    "is_glob",
    "locate_pinned",
    "matches",
    "read_files",
    "source_record",
    "tarball_url",
]
