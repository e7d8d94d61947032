"""Build the offline grading environment from Debian's and PyPI's packages only (DEP-4, DEP-6).

``build()`` makes, under the sandbox directory:
1. ``base-rootfs/``: ``debootstrap --variant=minbase --include=python3 bookworm`` from a Debian mirror
   (kept and reused: the slow step, ~1-2 min);
2. ``rootfs/``: a copy of the base plus, with ``deps=True``, the pinned grading wheels installed with
   the host's pip (``--target``, binary wheels for CPython 3.11 manylinux, no dependency resolution:
   the pin list is complete) and, when given, SciCode's ``test_data.h5`` at
   ``/opt/sr-bench/scicode/test_data.h5`` with its sha256 checked;
3. on a reachable Docker engine, both trees imported as images (``docker import``, no registry):
   ``sr-bench-grader-base:<d>`` and ``sr-bench-grader:<d>`` (d = the rootfs digest prefix);
4. ``receipt.json``: rootfs and base digests (sha256 of a manifest of every path, mode, link target
   and file sha256), image ids, the Debian suite and every package version, the wheel pins.
Nothing here calls a model; every external command is bounded by a timeout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from srbench.errors import IntegrityError, SrBenchError
from srbench.sandbox.base import BuildImages, BuildReceipt, harness_digest
from srbench.schemas.wire import WireJSON

SUITE = "bookworm"
MIRROR = os.environ.get("SR_BENCH_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# SciCode's upstream grading image pins these (numpy 1.26.4, scipy 1.13.1, sympy 1.12.1, h5py 3.11.0,
# matplotlib 3.9.4); mpmath is sympy's one dependency, the rest matplotlib's (the pin list is complete:
# wheels are installed without dependency resolution). matplotlib is needed because one SciCode
# problem's required dependencies import mpl_toolkits.mplot3d.
PYTHON_PINS = {"numpy": "1.26.4", "scipy": "1.13.1", "h5py": "3.11.0", "sympy": "1.12.1", "mpmath": "1.3.0",
               "matplotlib": "3.9.4", "contourpy": "1.3.1", "cycler": "0.12.1", "fonttools": "4.55.3",
               "kiwisolver": "1.4.7", "packaging": "24.2", "pillow": "11.0.0", "pyparsing": "3.2.0",
               "python-dateutil": "2.9.0.post0", "six": "1.17.0"}
SITE = "usr/local/lib/python3.11/dist-packages"
H5_INSIDE = "/opt/sr-bench/scicode/test_data.h5"


class BuildFailed(SrBenchError):
    code = "sandbox_build_failed"
    http_status = 500


def _run(argv: list[str], timeout: float, what: str, log: Callable[[str], None]) -> str:
    log(f"{what}: {' '.join(argv[:3])} …")
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise BuildFailed(f"{what}: {argv[0]} is not installed (Debian: apt-get install {argv[0]})") from None
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"{what}: {argv[0]} did not finish in {int(timeout)} s") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-2:]
        raise BuildFailed(f"{what} failed (exit {done.returncode}): {' | '.join(tail)}")
    return done.stdout.decode("utf-8", "replace")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(root: Path) -> str:
    """sha256 of the sorted manifest (path, type, mode, size, sha256 or link target) of a tree."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                entry = f"L {rel} {os.readlink(p)}"
            elif stat.S_ISREG(st.st_mode):
                entry = f"F {rel} {stat.S_IMODE(st.st_mode):o} {st.st_size} {sha256_file(p)}"
            else:
                entry = f"O {rel} {stat.S_IFMT(st.st_mode):o}"
            h.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def debian_packages(rootfs: Path) -> dict[str, str]:
    out = _run(["dpkg-query", f"--admindir={rootfs}/var/lib/dpkg", "-W", "-f", "${Package}\t${Version}\n"], 60,
               "reading the rootfs package list", lambda _: None)
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)


def build_base(base: Path, log: Callable[[str], None]) -> None:
    if (base / "usr" / "bin" / "python3").exists() and (base / ".sr-bench-complete").exists():
        log(f"base rootfs {base} is already built (reused)")
        return
    if base.exists():
        shutil.rmtree(base)
    _run(["debootstrap", "--variant=minbase", "--include=python3", SUITE, str(base), MIRROR], 1200,
         "debootstrap", log)
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (base / sub).glob("*"):
            if p.is_file():
                p.unlink()
    (base / "opt" / "sr-bench" / "scicode").mkdir(parents=True, exist_ok=True)
    (base / ".sr-bench-complete").write_text("debootstrap minbase python3\n")


def install_wheels(rootfs: Path, log: Callable[[str], None]) -> None:
    target = rootfs / SITE
    target.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:", "--no-compile",
          "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
          "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "any",
          "--target", str(target), *[f"{k}=={v}" for k, v in PYTHON_PINS.items()]], 1200,
         "installing the pinned grading wheels", log)


def import_images(build_dir: Path, base: Path, rootfs: Path, digest: str, log: Callable[[str], None]) -> WireJSON:
    """Import both trees into the Docker engine; {} when no engine is reachable."""
    try:
        # deferred: docker is optional and heavy: imported only when a container is used
        import docker

        api = docker.from_env(timeout=600).api
        api.ping()
    except Exception as exc:  # noqa: BLE001 - no engine: the bwrap backend still works
        log(f"no Docker engine reachable ({type(exc).__name__}): only the bubblewrap rootfs is built")
        return {}
    ids = {}
    for name, tree in (("sr-bench-grader-base", base), ("sr-bench-grader", rootfs)):
        tag = digest[:12]
        with tempfile.NamedTemporaryFile(dir=build_dir, suffix=".tar", delete=False) as tmp:
            archive = Path(tmp.name)
        try:
            _run(["tar", "--numeric-owner", "--exclude=./.sr-bench-complete", "-C", str(tree), "-cf", str(archive), "."],
                 900, f"packing {name}", log)
            log(f"importing {name}:{tag} into the Docker engine")
            api.import_image_from_file(str(archive), repository=name, tag=tag)
            ids[name] = api.inspect_image(f"{name}:{tag}")["Id"]
        finally:
            archive.unlink(missing_ok=True)
    return {"image": f"sr-bench-grader:{digest[:12]}", "image_id": ids["sr-bench-grader"],
            "base_image": f"sr-bench-grader-base:{digest[:12]}", "base_image_id": ids["sr-bench-grader-base"]}


def build(sandbox_dir: Path, *, deps: bool = True, scicode_h5: Path | None = None, scicode_sha256: str | None = None,
          docker: bool = True, log: Callable[[str], None] = print) -> WireJSON:
    """Build (or refresh) the grading environment; returns the receipt written to receipt.json."""
    sandbox_dir.mkdir(parents=True, exist_ok=True)
    base, rootfs = sandbox_dir / "base-rootfs", sandbox_dir / "rootfs"
    build_base(base, log)
    h5_sha = None
    if scicode_h5 is not None:
        h5_sha = sha256_file(scicode_h5)
        if scicode_sha256 and h5_sha != scicode_sha256:
            raise IntegrityError(f"{scicode_h5} has sha256 {h5_sha}, the pin is {scicode_sha256}")
    staging = sandbox_dir / "rootfs.new"
    if staging.exists():
        shutil.rmtree(staging)
    _run(["cp", "-a", str(base), str(staging)], 600, "copying the base rootfs", log)
    (staging / ".sr-bench-complete").unlink(missing_ok=True)
    if deps:
        install_wheels(staging, log)
    if scicode_h5 is not None:
        shutil.copyfile(scicode_h5, staging / H5_INSIDE.lstrip("/"))
        os.chmod(staging / H5_INSIDE.lstrip("/"), 0o644)
    log("hashing the rootfs")
    digest, base_digest = tree_digest(staging), tree_digest(base)
    if rootfs.exists():
        shutil.rmtree(rootfs)
    os.replace(staging, rootfs)
    image = import_images(sandbox_dir, base, rootfs, digest, log) if docker else {}
    receipt = BuildReceipt(
        rootfs_digest=digest, base_digest=base_digest,
        debian={"suite": SUITE, "variant": "minbase", "mirror": MIRROR, "include": "python3"},
        packages=debian_packages(rootfs), python_packages=dict(PYTHON_PINS) if deps else {},
        docker=BuildImages.model_validate(image) if image else None, harness_digest=harness_digest(),
        scicode_test_data_sha256=h5_sha).as_json()
    tmp = sandbox_dir / "receipt.json.new"
    tmp.write_text(json.dumps(receipt, indent=1, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, sandbox_dir / "receipt.json")
    return receipt
