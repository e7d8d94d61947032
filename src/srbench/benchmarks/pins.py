"""The content pins of the nine sources (DS-1, DS-2): one table, one checker.

Each benchmark's pin names its pinned revision and, per file, the size, sha256 and row count agreed by
independent public projects (research/source-pins.md). Two benchmarks have no file-byte digest:
ARC-AGI-2 is pinned by ``content_sha256`` over its canonical JSON files (`sources.content_sha256`), and
Terminal-Bench 2.1 by the git tree id of ``tasks/`` (`gittree.py`). A file is known under every name
its bytes are published under (SciCode's ``problems_test.jsonl`` = ``problems_all.jsonl``).

`check_paths` / `check_bytes` hold a copy that claims the pinned revision to its pin: the size first
(a wrong 1 GB file fails at once), then the sha256 streamed in 1 MiB chunks (memory flat). A
difference is one line naming the file, the pinned and the actual sha256 (`SourceMismatch`), raised
before anything is stored. Tests point a benchmark at fixture digests with ``monkeypatch.setitem(PINS,
...)``; nothing else changes the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.errors import IntegrityError

CheckMethod = Literal["file-sha256", "content-sha256", "git-tree"]
_CHUNK = 1 << 20
_SHA = r"^[0-9a-f]{64}$"
_GIT = r"^[0-9a-f]{40}$"


class SourceMismatch(IntegrityError):
    """A copy that claims the pinned revision holds other bytes than the pin."""

    code = "source_not_pinned"


class FilePin(BaseModel):
    """One pinned file: its bytes' sha256, their size (None: no agreed size published) and row count."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    sha256: str = Field(pattern=_SHA)
    size: int | None = Field(default=None, ge=0)
    rows: int | None = Field(default=None, ge=0)
    aliases: tuple[str, ...] = ()        # other names of the same bytes


class TreePin(BaseModel):
    """A directory pinned by its git tree id (no byte digest of its files is published)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    path: str
    git_tree: str = Field(pattern=_GIT)
    tasks: int | None = None


class SourcePins(BaseModel):
    """What the pinned revision of one benchmark's source holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    revision: str
    files: dict[str, FilePin] = Field(default_factory=dict)
    content_sha256: str | None = Field(default=None, pattern=_SHA)
    tree: TreePin | None = None

    @property
    def method(self) -> CheckMethod:
        return "git-tree" if self.tree else "content-sha256" if self.content_sha256 else "file-sha256"

    def lookup(self, name: str) -> tuple[str, FilePin] | None:
        """(pinned name, pin) of a file read under `name`, its pinned name or any alias."""
        if name in self.files:
            return name, self.files[name]
        for pinned, pin in self.files.items():
            if name in pin.aliases:
                return pinned, pin
        return None


def _f(sha256: str, size: int | None, rows: int | None = None, aliases: tuple[str, ...] = ()) -> FilePin:
    return FilePin(sha256=sha256, size=size, rows=rows, aliases=aliases)


_TAU = "data/tau2/domains"
PINS: dict[str, SourcePins] = {
    "mmlu-pro": SourcePins(revision="b189ec765aa7ed75c8acfea42df31fdae71f97be", files={
        "data/test-00000-of-00001.parquet": _f(
            "0e24a191921c2f453518a537a8b2117bd137e7714d4ef1565e9ba06c1ecb9ad8", 4_144_185, 12_032)}),
    "gpqa-diamond": SourcePins(revision="633f5ee89ab8ad4522a9f850766b73f62147ffdd", files={
        "gpqa_diamond.csv": _f("41d1213cd7a4998605a26c2798500652572007161b3a92817ba46b35befcd305", 1_373_492, 198,
                               ("dataset/gpqa_diamond.csv",))}),
    "hle": SourcePins(revision="5a81a4c7271a2a2a312b9a690f0c2fde837e4c29", files={
        "data/test-00000-of-00001.parquet": _f(
            "6d0ee0602e8aea6b159509577e884f48ecac7b8e3f6822a35f51335a446c726a", None, 2_500)}),
    "simpleqa-verified": SourcePins(revision="0dc97e0d28d8233463e005cdc4475cc2a13ba2dc", files={
        "simpleqa_verified.csv": _f("b5db21155444763543fe31b67e7cf28ce2bb225742a5b889421c5f182e2f92f5", 349_184,
                                    1_000)}),
    "livecodebench": SourcePins(revision="0fe84c3912ea0c4d4a78037083943e8f0c4dd505", files={
        "test.jsonl": _f("2bd02b38beb48e8c46b5b9987095d999ff38cd8efc255ea5d58974317c48f63f", 1_252_609_773, 400),
        "test2.jsonl": _f("095df7c5daf15f882c51a9deb84085cff1e073495a5dbcf95015a564d485f3a3", 713_377_060, 111),
        "test3.jsonl": _f("28ed26cc83363ce3f1fe2d5fad9f8393077beb1907b167a31bd3b32f80801b79", 623_360_766, 101),
        "test4.jsonl": _f("d711138ddaebfcf5f8ec6a4283ee677298c0f5c5d374a235af92aaf0584510da", 1_204_644_685, 101),
        "test5.jsonl": _f("7f77571c2a6df0c2a72a3277650309f67e01e0008e18117e624633df53f81214", 557_699_297, 167),
        "test6.jsonl": _f("bb4c364f71921c4495a6ad15abe1a927350b720009f4933e2e71f8af0f6fd1f5", 134_303_240, 175)}),
    "scicode": SourcePins(revision="4510f6a6aa27c43fad7b43da2c59602a86e88480", files={
        "problems_test.jsonl": _f("38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d", 933_500, 65,
                                  ("problems_all.jsonl", "eval/data/problems_all.jsonl",
                                   "scicode/data/problems_all.jsonl"))}),
    "tau3": SourcePins(revision="fc0055dc4e0a316c3f83133267fbd6faaa770992", files={
        f"{_TAU}/airline/tasks.json": _f("ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
                                         155_528, 50),
        f"{_TAU}/airline/split_tasks.json": _f("b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
                                               1_443),
        f"{_TAU}/airline/policy.md": _f("10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4", 7_676),
        f"{_TAU}/airline/db.json": _f("1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b", 7_042_725),
        f"{_TAU}/retail/tasks.json": _f("8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
                                        345_982, 114),
        f"{_TAU}/retail/split_tasks.json": _f("ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
                                              3_263),
        f"{_TAU}/retail/policy.md": _f("2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467", 6_699),
        f"{_TAU}/retail/db.json": _f("413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765", 2_811_616),
        f"{_TAU}/telecom/tasks.json": _f("37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4",
                                         13_977_063, 2_285),
        f"{_TAU}/telecom/split_tasks.json": _f("605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
                                               356_149),
        f"{_TAU}/telecom/main_policy.md": _f("95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
                                             5_699),
        f"{_TAU}/telecom/tech_support_manual.md": _f(
            "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba", 17_589),
        f"{_TAU}/telecom/db.toml": _f("562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0", 9_628),
        f"{_TAU}/telecom/user_db.toml": _f("4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c", 933),
        "data/tau2/user_simulator/simulation_guidelines.md": _f(
            "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3", 1_449),
        "data/tau2/user_simulator/simulation_guidelines_tools.md": _f(
            "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c", 2_747)}),
    "arc-agi-2": SourcePins(revision="f3283f727488ad98fe575ea6a5ac981e4a188e49",
                            content_sha256="1437cbddca1516fed0be08b5ae756f6b89c21f2184edcf0027335ca41f791809"),
    "terminal-bench-2.1": SourcePins(revision="7131e4375048a0e408a8fb404b5f499d726b695b",
                                     tree=TreePin(path="tasks", git_tree="2f0f5fdc68f0befd9b4745386eb8698264b00d8a",
                                                  tasks=89)),
}
# SciCode's numeric targets: not revisioned (the authors' Google Drive file), checked by `setup --install`
SCICODE_TEST_DATA = _f("48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890", 1_049_345_865, 338)


def pins_for(benchmark: str) -> SourcePins | None:
    return PINS.get(benchmark)


def source_tasks(benchmark: str) -> int | None:
    """The most cases the pinned source of `benchmark` can give: its files' pinned row counts summed (or
    its tree's task count), None when the table records none. An upper bound: a loader may drop rows it
    cannot grade (HLE's image rows, τ³'s tasks outside a domain's base split)."""
    pins = PINS.get(benchmark)
    if pins is None:
        return None
    if pins.tree is not None:
        return pins.tree.tasks
    rows = [p.rows for p in pins.files.values() if p.rows is not None]
    return sum(rows) if rows else None


def sha256_stream(path: Path) -> str:
    """The sha256 of a file read in 1 MiB chunks (memory flat, whatever its size)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _refuse(name: str, pin: FilePin, where: str, *, size: int | None = None, actual: str | None = None,
            fix: str) -> SourceMismatch:
    if actual is None:
        got = f"{size} bytes where the pin is {pin.size} (sha256 not computed: the size already differs)"
    else:
        got = f"sha256 {actual}"
    return SourceMismatch(f"{name} ({where}) is not the pinned file: pinned sha256 {pin.sha256}, actual {got}; {fix}")


def check_file(path: Path, name: str, pin: FilePin, *, fix: str) -> None:
    """Size first, then the streamed sha256; `SourceMismatch` when either differs."""
    size = Path(path).stat().st_size
    if pin.size is not None and size != pin.size:
        raise _refuse(name, pin, str(path), size=size, fix=fix)
    actual = sha256_stream(path)
    if actual != pin.sha256:
        raise _refuse(name, pin, str(path), actual=actual, fix=fix)


def check_data(data: bytes, name: str, pin: FilePin, *, where: str, fix: str) -> None:
    if pin.size is not None and len(data) != pin.size:
        raise _refuse(name, pin, where, size=len(data), fix=fix)
    actual = hashlib.sha256(data).hexdigest()
    if actual != pin.sha256:
        raise _refuse(name, pin, where, actual=actual, fix=fix)


def _matched(pins: SourcePins, names: list[str], fix: str) -> dict[str, tuple[str, FilePin]]:
    out: dict[str, tuple[str, FilePin]] = {}
    for name in names:
        hit = pins.lookup(name)
        if hit is None:
            raise SourceMismatch(f"{name} is not a file of the pinned revision {pins.revision[:7]} "
                                 f"(it holds {', '.join(sorted(pins.files))}); {fix}")
        if hit[0] in {p for p, _ in out.values()}:
            raise SourceMismatch(f"{name} and another file are both the pinned {hit[0]}; give one of them")
        out[name] = hit
    missing = sorted(set(pins.files) - {p for p, _ in out.values()})
    if missing:
        raise SourceMismatch(f"the pinned revision {pins.revision[:7]} holds {', '.join(missing)}, which this copy "
                             f"lacks; give every pinned file, or {fix}")
    return out


def check_paths(pins: SourcePins, paths: Mapping[str, Path], *, fix: str,
                on_mismatch: Callable[[str], None] | None = None) -> None:
    """Every located file against its pin (by name or alias), and every pinned file present;
    `on_mismatch(name)` runs before a file's refusal is raised (a download removes its bad copy)."""
    for name, (_, pin) in _matched(pins, sorted(paths), fix).items():
        try:
            check_file(paths[name], name, pin, fix=fix)
        except SourceMismatch:
            if on_mismatch is not None:
                on_mismatch(name)
            raise


def check_files(pins: SourcePins, files: Mapping[str, bytes], *, where: str, fix: str) -> None:
    """`check_paths` for bytes already in memory (an offline mirror's files)."""
    for name, (_, pin) in _matched(pins, sorted(files), fix).items():
        check_data(files[name], name, pin, where=where, fix=fix)


def listing_sha256(digests: Mapping[str, str]) -> str:
    """`sources.content_sha256` from the files' sha256 values: the sha256 of the ``sha256sum`` listing."""
    listing = "".join(f"{digests[n]}  {n}\n" for n in sorted(digests))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


__all__ = ["PINS", "SCICODE_TEST_DATA", "CheckMethod", "FilePin", "SourceMismatch", "SourcePins", "TreePin",
           "check_data", "check_file", "check_files", "check_paths", "listing_sha256", "pins_for", "sha256_stream",
           "source_tasks"]
