"""Issue 27 item 1, "done when": `sr-bench dataset prepare --source-path … --revision <pinned>` for each of
the nine benchmarks passes with the right bytes and exits 2 with one line naming the file, the pinned and
the actual digest for a one-byte change or a truncated file, storing nothing; another --revision is
accepted and labelled not the pinned source; SciCode's same bytes pass under another name.

The real files are not available offline, so each benchmark's pin is pointed at a native-format fixture
(``monkeypatch.setitem(PINS, …)``, the test-only override); the CLI runs in process (``--embedded``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.gittree import tree_of_dir
from srbench.benchmarks.pins import PINS, FilePin, SourcePins, sha256_stream
from srbench.benchmarks.sources import content_sha256, read_files
from srbench.cas import ObjectStore
from srbench.cas.digest import digest_bytes
from srbench.cli.main import main
from srbench.simulate import samples, scicode_samples, tau_mini, terminal_tasks


def _arc(root: Path) -> Path:
    d = root / "data" / "evaluation"
    d.mkdir(parents=True)
    for tid, k in (("0a1b2c3d", 1), ("4e5f6a7b", 2)):
        task = {"train": [{"input": [[k, 0], [0, k]], "output": [[0, k], [k, 0]]}],
                "test": [{"input": [[k, k], [0, 0]], "output": [[0, 0], [k, k]]}]}
        (d / f"{tid}.json").write_text(json.dumps(task, indent=1))
    return root


FIXTURES: dict[str, Callable[[Path], Path]] = {
    "mmlu-pro": samples.write_mmlu_pro,
    "gpqa-diamond": samples.write_gpqa,
    "hle": samples.write_hle,
    "simpleqa-verified": samples.write_simpleqa,
    "livecodebench": samples.write_livecodebench,
    "scicode": lambda root: scicode_samples.write_scicode(root, h5=False),
    "tau3": tau_mini.write_mini_domain,
    "arc-agi-2": _arc,
    "terminal-bench-2.1": lambda root: terminal_tasks.write_terminal_bench(root, "sr-bench/base:fixture"),
}


def _dir(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _pin_fixture(monkeypatch: pytest.MonkeyPatch, bench_id: str, root: Path) -> dict[str, Path]:
    """Point the benchmark's pin at the fixture's digests; returns its located files."""
    bench = get_benchmark(bench_id)
    located = bench.locate(root)
    rev = bench.source.revision
    if bench_id == "arc-agi-2":
        pins = SourcePins(revision=rev, content_sha256=content_sha256(bench.normalize(read_files(located))))
    elif bench_id == "terminal-bench-2.1":
        pins = PINS[bench_id].model_copy(update={"tree": PINS[bench_id].tree.model_copy(  # type: ignore[union-attr]
            update={"git_tree": tree_of_dir(root / "tasks")})})
    else:
        pins = SourcePins(revision=rev, files={n: FilePin(sha256=sha256_stream(p), size=p.stat().st_size,
                                                           aliases=PINS[bench_id].files[next(iter(PINS[bench_id].files))]
                                                           .aliases if bench_id == "scicode" else ())
                                               for n, p in located.items()})
    monkeypatch.setitem(PINS, bench_id, pins)
    return located


def _prepare(capsys: pytest.CaptureFixture[str], store: Path, bench: str, source: Path,
             revision: str) -> tuple[int, str, str]:
    args = ["--store", str(store), "--embedded", "dataset", "prepare", "--benchmark", bench, "--profile", "smoke",
            "--source-path", str(source), "--revision", revision, "--json"]
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_OBJECTS_URL", "SR_BENCH_EMBEDDED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    from srbench.benchmarks.terminal_bench import adapter
    monkeypatch.setattr(adapter, "availability", lambda: None)      # preparing needs no Docker engine
    return tmp_path / "store"


def _corrupt(path: Path, how: str) -> bytes:
    data = path.read_bytes()
    if how == "truncated":
        bad = data[: len(data) // 2]
    else:                                  # one byte: a digit where there is one (ARC stays valid JSON)
        i = next((i for i, b in enumerate(data) if chr(b).isdigit()), 0)
        bad = data[:i] + (b"7" if data[i:i + 1] != b"7" else b"8") + data[i + 1:]
    assert len(bad) < len(data) if how == "truncated" else (len(bad) == len(data) and bad != data)
    path.write_bytes(bad)
    return bad


def _target(bench_id: str, located: dict[str, Path], root: Path) -> Path:
    if bench_id == "terminal-bench-2.1":
        return next(p for n, p in located.items() if n.endswith("instruction.md"))
    return located[sorted(located)[0]]


@pytest.mark.parametrize("bench_id", sorted(FIXTURES))
@pytest.mark.parametrize("how", ["one-byte", "truncated"])
def test_each_benchmark_refuses_a_wrong_copy_at_the_pinned_revision(bench_id: str, how: str, env: Path, tmp_path,
                                                                     monkeypatch, capsys) -> None:
    root = FIXTURES[bench_id](tmp_path / "src")
    located = _pin_fixture(monkeypatch, bench_id, root)
    bench = get_benchmark(bench_id)
    pinned = bench.source.revision
    code, out, err = _prepare(capsys, env, bench_id, root, pinned)
    assert code == 0, err
    manifest: dict[str, Any] = json.loads(out)
    rec = manifest["sources"][bench_id]
    assert rec["revision"] == pinned and rec["check"] == PINS[bench_id].method
    assert any("source check at the pinned revision" in n for n in manifest["notices"])
    target = _target(bench_id, located, root)
    good = target.read_bytes()
    bad = _corrupt(target, how)
    code, out, err = _prepare(capsys, env, bench_id, root, pinned)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    line = lines[0]
    assert "Traceback" not in err and "--revision" in line
    if bench_id == "terminal-bench-2.1":
        assert f"pinned git tree {PINS[bench_id].tree.git_tree}, actual " in line  # type: ignore[union-attr]
    elif bench_id == "arc-agi-2":
        assert f"pinned content sha256 {PINS[bench_id].content_sha256}, actual " in line
    else:
        name = next(n for n, p in located.items() if p == target)
        pin = PINS[bench_id].files[name]
        assert line.startswith(f"error: {name} (") and f"pinned sha256 {pin.sha256}" in line
        if how == "truncated":
            assert f"{len(bad)} bytes where the pin is {pin.size}" in line
        else:
            assert f"actual sha256 {sha256_stream(target)}" in line
    assert not ObjectStore(str(env / "cas")).has(digest_bytes(bad))
    # a copy under its own revision is not held to the pin, and is labelled not the pinned source
    target.write_bytes(good)
    code, out, err = _prepare(capsys, env, bench_id, root, "my-edit-1")
    assert code == 0, err
    other = json.loads(out)
    assert "check" not in other["sources"][bench_id] and other["sources"][bench_id]["revision"] == "my-edit-1"
    assert any(n.startswith(f"{bench_id}: not the pinned source: imported revision my-edit-1") for n in other["notices"])


@pytest.mark.parametrize("name", ["problems_all.jsonl", "eval/data/problems_all.jsonl"])
def test_scicode_same_bytes_under_another_name_are_the_pinned_source(name: str, env: Path, tmp_path, monkeypatch,
                                                                       capsys) -> None:
    root = scicode_samples.write_scicode(tmp_path / "hf", h5=False)
    _pin_fixture(monkeypatch, "scicode", root)
    renamed = tmp_path / "gh" / name
    renamed.parent.mkdir(parents=True)
    shutil.copyfile(root / "problems_test.jsonl", renamed)
    pinned = get_benchmark("scicode").source.revision
    code, out, err = _prepare(capsys, env, "scicode", tmp_path / "gh", pinned)
    assert code == 0, err
    m = json.loads(out)
    assert m["sources"]["scicode"]["check"] == "file-sha256" and m["sources"]["scicode"]["revision"] == pinned
    code, out, _ = _prepare(capsys, env, "scicode", root, pinned)
    assert json.loads(out)["sha256"] == m["sha256"]          # the same cases, whatever the file's name
    _corrupt(renamed, "one-byte")
    code, _, err = _prepare(capsys, env, "scicode", tmp_path / "gh", pinned)
    assert code == 2 and f"error: {name} (" in err and len(err.strip().splitlines()) == 1
