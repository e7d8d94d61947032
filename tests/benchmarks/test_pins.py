"""Issue 27 item 1: the pin table equals research/source-pins.md, and its checker refuses a changed or
truncated file in one line (size first, sha256 streamed) and knows the same bytes under any name."""

from __future__ import annotations

import hashlib
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from srbench.benchmarks import all_benchmarks, pins
from srbench.benchmarks.gittree import tree_of_dir
from srbench.benchmarks.livecodebench import FILES as LCB_FILES
from srbench.benchmarks.pins import PINS, FilePin, SourceMismatch, SourcePins, check_file, check_paths
from srbench.benchmarks.tau import tasks as tau_tasks

# research/source-pins.md (checked 2026-12-04): benchmark → (revision, {file: (size, sha256, rows)})
_TAU = "data/tau2/domains"
DOC = {
    "mmlu-pro": ("b189ec765aa7ed75c8acfea42df31fdae71f97be", {"data/test-00000-of-00001.parquet": (
        4144185, "0e24a191921c2f453518a537a8b2117bd137e7714d4ef1565e9ba06c1ecb9ad8", 12032)}),
    "gpqa-diamond": ("633f5ee89ab8ad4522a9f850766b73f62147ffdd", {"gpqa_diamond.csv": (
        1373492, "41d1213cd7a4998605a26c2798500652572007161b3a92817ba46b35befcd305", 198)}),
    "hle": ("5a81a4c7271a2a2a312b9a690f0c2fde837e4c29", {"data/test-00000-of-00001.parquet": (
        None, "6d0ee0602e8aea6b159509577e884f48ecac7b8e3f6822a35f51335a446c726a", 2500)}),
    "simpleqa-verified": ("0dc97e0d28d8233463e005cdc4475cc2a13ba2dc", {"simpleqa_verified.csv": (
        349184, "b5db21155444763543fe31b67e7cf28ce2bb225742a5b889421c5f182e2f92f5", 1000)}),
    "livecodebench": ("0fe84c3912ea0c4d4a78037083943e8f0c4dd505", {
        "test.jsonl": (1252609773, "2bd02b38beb48e8c46b5b9987095d999ff38cd8efc255ea5d58974317c48f63f", 400),
        "test2.jsonl": (713377060, "095df7c5daf15f882c51a9deb84085cff1e073495a5dbcf95015a564d485f3a3", 111),
        "test3.jsonl": (623360766, "28ed26cc83363ce3f1fe2d5fad9f8393077beb1907b167a31bd3b32f80801b79", 101),
        "test4.jsonl": (1204644685, "d711138ddaebfcf5f8ec6a4283ee677298c0f5c5d374a235af92aaf0584510da", 101),
        "test5.jsonl": (557699297, "7f77571c2a6df0c2a72a3277650309f67e01e0008e18117e624633df53f81214", 167),
        "test6.jsonl": (134303240, "bb4c364f71921c4495a6ad15abe1a927350b720009f4933e2e71f8af0f6fd1f5", 175)}),
    "scicode": ("4510f6a6aa27c43fad7b43da2c59602a86e88480", {"problems_test.jsonl": (
        933500, "38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d", 65)}),
    "tau3": ("fc0055dc4e0a316c3f83133267fbd6faaa770992", {
        f"{_TAU}/airline/tasks.json": (155528, "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052", 50),
        f"{_TAU}/airline/split_tasks.json": (1443, "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
                                             None),
        f"{_TAU}/airline/policy.md": (7676, "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4", None),
        f"{_TAU}/airline/db.json": (7042725, "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b", None),
        f"{_TAU}/retail/tasks.json": (345982, "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8", 114),
        f"{_TAU}/retail/split_tasks.json": (3263, "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
                                            None),
        f"{_TAU}/retail/policy.md": (6699, "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467", None),
        f"{_TAU}/retail/db.json": (2811616, "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765", None),
        f"{_TAU}/telecom/tasks.json": (13977063, "37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4",
                                       2285),
        f"{_TAU}/telecom/split_tasks.json": (356149, "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
                                             None),
        f"{_TAU}/telecom/main_policy.md": (5699, "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
                                           None),
        f"{_TAU}/telecom/tech_support_manual.md": (
            17589, "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba", None),
        f"{_TAU}/telecom/db.toml": (9628, "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0", None),
        f"{_TAU}/telecom/user_db.toml": (933, "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c", None),
        "data/tau2/user_simulator/simulation_guidelines.md": (
            1449, "740a29dfa64d7bc08eea3bf7493575b914a63f744acbaf7f199ee07eddaf72d3", None),
        "data/tau2/user_simulator/simulation_guidelines_tools.md": (
            2747, "cbf3d8a4d8642fd04e559862f1afef55d7dd4e6a7e727ca49e239023c599de0c", None)}),
}
CONTENT = {     # the md's derived content_sha256 candidates
    "mmlu-pro": "76fdb98060520554c15f3afd108cd8b40d9a70a67ee135a091b03b95b3675d57",
    "gpqa-diamond": "3dda360ddc30efcc8c5ce69dc3978497565d1daf1b60328b568046502b3f2b3e",
    "hle": "3638bcadc37a550150810d164c69c795c1c51f9befc1b3b6109f41f0a9254133",
    "simpleqa-verified": "7fdbf9e232fc3d5aa36182cbae837f954732c4cec5bb7aedecedf4b3b97dc906",
    "livecodebench": "6b66816de2bb20fae7d9bd94db61d021dd8ec97d7a253f9e71d71327512abd73",
    "scicode": "d9e1ef2cd116aa310305a129825dae65203baa05868b6753e7ff9dc782807be1",
    "tau3": "f7f2a239628169b1508d77cd64d3ff688f801f2a3085c473b60d19b1f487cf28",
}


def test_the_shipped_pin_table_equals_source_pins_md() -> None:
    for bench, (revision, files) in DOC.items():
        got = PINS[bench]
        assert got.revision == revision and got.method == "file-sha256", bench
        assert {n: (p.size, p.sha256, p.rows) for n, p in got.files.items()} == files, bench
        assert pins.listing_sha256({n: p.sha256 for n, p in got.files.items()}) == CONTENT[bench], bench
    assert PINS["arc-agi-2"].revision == "f3283f727488ad98fe575ea6a5ac981e4a188e49"
    assert PINS["arc-agi-2"].content_sha256 == "1437cbddca1516fed0be08b5ae756f6b89c21f2184edcf0027335ca41f791809"
    tb = PINS["terminal-bench-2.1"]
    assert (tb.revision, tb.tree and tb.tree.path, tb.tree and tb.tree.git_tree, tb.method) == (
        "7131e4375048a0e408a8fb404b5f499d726b695b", "tasks", "2f0f5fdc68f0befd9b4745386eb8698264b00d8a", "git-tree")
    assert (pins.SCICODE_TEST_DATA.size, pins.SCICODE_TEST_DATA.sha256) == (
        1049345865, "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890")
    assert set(PINS["scicode"].files["problems_test.jsonl"].aliases) >= {"problems_all.jsonl",
                                                                         "eval/data/problems_all.jsonl"}


def test_every_benchmark_is_pinned_at_its_registry_revision_with_its_own_file_names() -> None:
    registry = {b.id: b for b in all_benchmarks()}
    assert set(PINS) == set(registry)
    for bid, b in registry.items():
        assert PINS[bid].revision == b.source.revision, bid
    assert tuple(PINS["livecodebench"].files) == LCB_FILES
    assert set(PINS["tau3"].files) == set(tau_tasks.pinned_files())
    assert registry["arc-agi-2"].source.content_sha256 == PINS["arc-agi-2"].content_sha256


def _pin_of(path: Path) -> FilePin:
    data = path.read_bytes()
    return FilePin(sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def test_a_right_file_passes_and_a_changed_or_truncated_one_is_refused_in_one_line(tmp_path, monkeypatch) -> None:
    f = tmp_path / "test.jsonl"
    f.write_bytes(b'{"a": 1}\n' * 1000)
    pin = _pin_of(f)
    check_file(f, "test.jsonl", pin, fix="fix it")
    f.write_bytes(b'{"a": 2}\n' + b'{"a": 1}\n' * 999)           # one byte changed, same size
    with pytest.raises(SourceMismatch) as info:
        check_file(f, "test.jsonl", pin, fix="pass --revision")
    msg = info.value.message
    actual = hashlib.sha256(f.read_bytes()).hexdigest()
    assert "\n" not in msg and msg.startswith("test.jsonl (") and f"pinned sha256 {pin.sha256}" in msg
    assert f"actual sha256 {actual}" in msg and msg.endswith("pass --revision")
    f.write_bytes(b'{"a": 1}\n' * 999)                             # truncated: the size fails first, unhashed
    monkeypatch.setattr(pins, "sha256_stream", lambda p: pytest.fail("hashed a file of the wrong size"))
    with pytest.raises(SourceMismatch, match=r"8991 bytes where the pin is 9000 \(sha256 not computed") as info:
        check_file(f, "test.jsonl", pin, fix="x")
    assert "\n" not in info.value.message and pin.sha256 in info.value.message


def test_same_bytes_under_any_known_name_pass_and_every_pinned_file_must_be_there(tmp_path) -> None:
    a, b = tmp_path / "problems_all.jsonl", tmp_path / "other.jsonl"
    a.write_bytes(b"problem rows\n")
    b.write_bytes(b"x")
    table = SourcePins(revision="r" * 40, files={"problems_test.jsonl": FilePin(
        sha256=hashlib.sha256(b"problem rows\n").hexdigest(), size=13, aliases=("problems_all.jsonl",)),
        "extra.jsonl": _pin_of(b)})
    check_paths(table, {"problems_all.jsonl": a, "extra.jsonl": b}, fix="f")
    with pytest.raises(SourceMismatch, match="holds extra.jsonl, which this copy lacks"):
        check_paths(table, {"problems_all.jsonl": a}, fix="f")
    with pytest.raises(SourceMismatch, match="unknown.jsonl is not a file of the pinned revision"):
        check_paths(table, {"problems_all.jsonl": a, "extra.jsonl": b, "unknown.jsonl": b}, fix="f")


def test_hashing_a_1_gib_file_streams_with_flat_memory(tmp_path) -> None:
    big = tmp_path / "big.jsonl"
    with big.open("wb") as fh:                   # sparse: no disk, but every byte is read and hashed
        fh.truncate(1 << 30)
    tracemalloc.start()
    try:
        digest = pins.sha256_stream(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest == "49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14"   # sha256 of 1 GiB of zeros
    assert peak < 8 << 20, f"peak {peak} bytes while hashing 1 GiB"


def test_the_git_tree_of_a_directory_is_the_one_git_computes(tmp_path) -> None:
    tasks = tmp_path / "repo" / "tasks"
    (tasks / "a" / "environment").mkdir(parents=True)
    (tasks / "a" / "task.toml").write_text("[metadata]\n")
    run = tasks / "a" / "environment" / "run.sh"
    run.write_text("#!/bin/sh\necho hi\n")
    run.chmod(0o755)
    (tasks / "a-b").mkdir()
    (tasks / "a-b" / "task.toml").write_text("x")
    (tasks / "a.txt").write_text("sorted between a and a-b as git sorts")
    (tasks / "dataset.toml").write_text("name = 'x'\n")
    (tasks / "a" / "link").symlink_to("task.toml")
    (tasks / "empty").mkdir()
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    try:
        subprocess.run([*git, "init", "-q"], check=True)
    except FileNotFoundError:
        pytest.skip("git is not installed")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "t"], check=True)
    want = subprocess.run([*git, "rev-parse", "HEAD:tasks"], check=True, capture_output=True, text=True).stdout.strip()
    assert tree_of_dir(tasks) == want
    (tasks / "a" / "task.toml").write_text("[metadata]\n ")
    assert tree_of_dir(tasks) != want


def test_a_download_that_differs_is_refused_removed_from_the_cache_and_a_wrong_length_fails_first(
        tmp_path, monkeypatch) -> None:
    import httpx

    from srbench.benchmarks import sources
    from srbench.benchmarks.acquire import acquire
    from srbench.benchmarks.mmlu_pro import TEST_FILE, MmluPro
    from srbench.simulate import samples

    good = (samples.write_mmlu_pro(tmp_path / "src") / TEST_FILE).read_bytes()
    monkeypatch.setitem(PINS, "mmlu-pro", SourcePins(revision=MmluPro.source.revision, files={TEST_FILE: FilePin(
        sha256=hashlib.sha256(good).hexdigest(), size=len(good))}))
    served: dict[str, bytes] = {"body": good[:-1] + bytes([good[-1] ^ 1])}
    headers: dict[str, str] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=served["body"], headers=headers)

    real = sources._client
    monkeypatch.setattr(sources, "_client", lambda transport, timeout_s: real(httpx.MockTransport(handler), timeout_s))
    bench = MmluPro()
    cached = tmp_path / "cache" / "mmlu-pro" / MmluPro.source.revision / TEST_FILE
    with pytest.raises(SourceMismatch, match=f"pinned sha256 {hashlib.sha256(good).hexdigest()}, actual sha256 "):
        acquire(bench, mode="download", cache_dir=tmp_path / "cache")
    assert not cached.exists()                       # the retry downloads it again
    served["body"] = good[:100]
    with pytest.raises(SourceMismatch, match=f"announces 100 bytes where the pinned file has {len(good)}"):
        acquire(bench, mode="download", cache_dir=tmp_path / "cache")
    assert not cached.exists()
    served["body"] = good
    got = acquire(bench, mode="download", cache_dir=tmp_path / "cache")
    assert (got.check, got.revision, got.origin) == ("file-sha256", MmluPro.source.revision, "download")
    assert cached.read_bytes() == good


def test_a_terminal_bench_download_is_checked_by_the_git_tree_of_its_tarball(tmp_path, monkeypatch) -> None:
    import io
    import tarfile

    import httpx

    from srbench.benchmarks.acquire import acquire
    from srbench.benchmarks.terminal_bench import adapter
    from srbench.benchmarks.terminal_bench import source as tb_source
    from srbench.simulate.terminal_tasks import write_terminal_bench

    monkeypatch.setattr(adapter, "availability", lambda: None)
    root = write_terminal_bench(tmp_path / "checkout", "sr-bench/base:fixture")
    (root / "tasks" / "dataset.toml").write_text("name = 'fixture'\n")      # outside any task, still in the tree
    TB = adapter.TerminalBench21()
    rev = TB.source.revision
    want = tree_of_dir(root / "tasks")
    monkeypatch.setitem(PINS, TB.id, PINS[TB.id].model_copy(update={"tree": PINS[TB.id].tree.model_copy(  # type: ignore[union-attr]
        update={"git_tree": want})}))

    def tarball(change: bool) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(root / "tasks", arcname=f"terminal-bench-2-1-{rev}/tasks")
            if change:
                data = b"changed\n"
                info = tarfile.TarInfo(f"terminal-bench-2-1-{rev}/tasks/dataset.toml")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return buf.getvalue()

    served = {"body": tarball(change=True)}
    real = tb_source._client
    monkeypatch.setattr(tb_source, "_client", lambda transport, timeout_s: real(
        httpx.MockTransport(lambda request: httpx.Response(200, content=served["body"])), timeout_s))
    with pytest.raises(SourceMismatch, match=f"pinned git tree {want}, actual "):
        acquire(TB, mode="download", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache" / TB.id / rev / tb_source.INDEX).exists()      # the retry downloads again
    served["body"] = tarball(change=False)
    got = acquire(TB, mode="download", cache_dir=tmp_path / "cache")
    assert (got.check, got.revision) == ("git-tree", rev)
    assert tb_source.tasks_tree(tmp_path / "cache" / TB.id / rev) == want
