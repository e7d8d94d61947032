"""`setup --install` / `--build-sandbox` on this (worker) host: offline grading environment and assets.

- ``--build-sandbox``: the grading rootfs from Debian's packages (debootstrap minbase + python3) and, on
  a reachable Docker engine, its image; receipt in ``<home>/sandbox/receipt.json``.
- ``--install``: additionally the pinned grading wheels from PyPI (numpy, scipy, h5py, sympy, matplotlib)
  in the rootfs/image, and SciCode's ``test_data.h5`` at ``SR_BENCH_SCICODE_TEST_DATA`` (default
  ``<home>/assets/scicode/test_data.h5``) with its sha256 checked against the pin, baked into the
  image so a remote Docker engine has it too. The file is fetched only when it is not there, from the
  pinned URL (``SR_BENCH_SCICODE_TEST_DATA_URL`` names another, e.g. a file:// copy); a download whose
  sha256 is not the pin is deleted.
An up-to-date build (same pins, rootfs re-hashed to the receipt's digest, image present) is reused.
Neither step calls a model.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import httpx

from srbench.benchmarks.pins import SCICODE_TEST_DATA
from srbench.errors import IntegrityError, SourceUnavailable
from srbench.sandbox import build as builder
from srbench.sandbox.base import SandboxUnavailable, read_build_receipt
from srbench.sandbox.paths import sandbox_dir, scicode_test_data
from srbench.sandbox.scicode_data import PINNED_SHA256
from srbench.schemas.wire import WireJSON

SCICODE_H5_SHA256 = PINNED_SHA256
# the authors' Google Drive file (README step 3), in the direct-download form the nvidia-scicode wheel uses
SCICODE_H5_URL = "https://drive.usercontent.google.com/download?id=17G_k65N_6yFFZ2O-jQH00Lh6iaw3z-AW&confirm=y"


def scicode_data_url() -> str:
    """The pinned URL, or ``SR_BENCH_SCICODE_TEST_DATA_URL`` (a mirror, a file:// URL): the sha256 pin holds."""
    return os.environ.get("SR_BENCH_SCICODE_TEST_DATA_URL") or SCICODE_H5_URL


def _download(url: str, part: Path) -> None:
    if url.startswith("file://"):
        src = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        try:
            shutil.copyfile(src, part)
        except OSError as exc:
            raise SourceUnavailable(f"cannot read SciCode's test data at {url}: {exc.strerror or exc}") from exc
        return
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=httpx.Timeout(60, connect=15)) as resp:
            if resp.status_code != 200:
                raise SourceUnavailable(f"SciCode test data: HTTP {resp.status_code} from {urllib.parse.urlsplit(url).netloc}")
            with part.open("wb") as fh:
                for chunk in resp.iter_bytes(1 << 20):
                    fh.write(chunk)
    except httpx.HTTPError as exc:
        raise SourceUnavailable(f"cannot download SciCode's test_data.h5 ({type(exc).__name__})") from exc


def _differs(path: Path, sha256: str) -> str | None:
    """How the file at `path` differs from the expected sha256 (its size first when that is the pinned
    file: a wrong 1 GB file fails before it is hashed), None when it is that file."""
    size = path.stat().st_size
    if sha256 == SCICODE_TEST_DATA.sha256 and SCICODE_TEST_DATA.size is not None and size != SCICODE_TEST_DATA.size:
        return f"{size} bytes where the pinned file has {SCICODE_TEST_DATA.size} (sha256 not computed)"
    got = builder.sha256_file(path)
    return None if got == sha256 else f"sha256 {got}"


def fetch_scicode_data(dest: Path, sha256: str = SCICODE_H5_SHA256, log: Callable[[str], None] = print,
                       url: str | None = None) -> Path:
    """The SciCode test data at `dest`, downloaded when absent; its sha256 must equal the pin. A download
    that does not match is deleted, never left at `dest`."""
    if not dest.is_file():
        url = url or scicode_data_url()
        log(f"fetching SciCode test_data.h5 to {dest}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        try:
            _download(url, part)
            got = _differs(part, sha256)
            if got is not None:
                raise IntegrityError(f"the SciCode test data from {urllib.parse.urlsplit(url).netloc or url} has "
                                     f"{got}; the pinned test_data.h5 is {sha256} (nothing was kept)")
        except SourceUnavailable as exc:
            part.unlink(missing_ok=True)
            raise SourceUnavailable(f"{exc.message}; put the file at {dest} (or name it with "
                                    "SR_BENCH_SCICODE_TEST_DATA) and rerun: its sha256 is checked") from None
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        part.replace(dest)
    got = _differs(dest, sha256)
    if got is not None:
        raise IntegrityError(f"{dest} has {got}; SciCode's pinned test_data.h5 is {sha256}")
    return dest


def up_to_date(directory: Path, deps: bool, h5_sha: str | None) -> bool:
    try:
        receipt = read_build_receipt(directory)
    except SandboxUnavailable:
        return False
    packages = receipt.python_packages
    # a build with the grading wheels also serves a request without them: never downgrade it
    if packages != dict(builder.PYTHON_PINS) and (deps or packages):
        return False
    if h5_sha is not None and receipt.scicode_test_data_sha256 != h5_sha:
        return False
    if not (directory / "rootfs").is_dir() or builder.tree_digest(directory / "rootfs") != receipt.rootfs_digest:
        return False
    image = receipt.docker
    try:
        # deferred: docker is optional and heavy: imported only when a container is used
        import docker

        api = docker.from_env(timeout=30).api
        api.ping()
    except Exception:  # noqa: BLE001 - no engine now: the rootfs alone is what there is to check
        return True
    if image is None:
        return False
    try:
        return bool(api.inspect_image(image.image_id)["Id"] == image.image_id)
    except Exception:  # noqa: BLE001 - missing image
        return False


def setup_sandbox(*, install: bool, build_sandbox: bool, benchmarks: set[str],
                  log: Callable[[str], None] = print) -> WireJSON:
    """What `setup --install/--build-sandbox` did: the receipt and the assets, as a JSON document."""
    out: WireJSON = {"sandbox_dir": str(sandbox_dir())}
    h5 = None
    if install and "scicode" in benchmarks:
        h5 = fetch_scicode_data(scicode_test_data(), log=log)
        out["scicode_test_data"] = {"path": str(h5), "sha256": SCICODE_H5_SHA256}
    directory = sandbox_dir()
    h5_sha = SCICODE_H5_SHA256 if h5 else None
    if up_to_date(directory, install, h5_sha):
        log(f"the grading sandbox in {directory} is up to date (reused)")
        out["reused"] = True
    else:
        builder.build(directory, deps=install, scicode_h5=h5, scicode_sha256=h5_sha, log=log)
        out["reused"] = False
    out["receipt"] = read_build_receipt(directory).as_json()
    out["note"] = "no model was called"
    return out
