"""`setup` for SciCode (DEP-4/DEP-5): the test data is fetched (file:// and a loopback HTTP server stand
in for the pinned URL) only when absent, with its sha256 checked — a file that does not match is never
kept; the check names what is missing and is ready once the sandbox and the expected data are there."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from integration.conftest import Cli
from srbench.errors import IntegrityError, SourceUnavailable
from srbench.sandbox import SandboxUnavailable, install, open_sandbox, scicode_data
from srbench.service.store.setup_checks import checks


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "served" / "test_data.h5"
    src.parent.mkdir()
    src.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(range(256)) * 64)      # stands in for the 1 GB file
    return src, scicode_data.file_sha256(src)


@pytest.fixture
def server(data) -> Iterator[tuple[str, list[str]]]:
    src, _ = data
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            if self.path != "/test_data.h5":
                self.send_error(404)
                return
            body = src.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


def test_fetch_from_a_file_url_checks_the_sha256(tmp_path: Path, data) -> None:
    src, sha = data
    dest = tmp_path / "home" / "assets" / "scicode" / "test_data.h5"
    got = install.fetch_scicode_data(dest, sha, log=lambda _: None, url=src.as_uri())
    assert got == dest and dest.read_bytes() == src.read_bytes()
    src.write_bytes(b"changed")                                      # present: never fetched again
    assert install.fetch_scicode_data(dest, sha, log=lambda _: None, url=src.as_uri()) == dest


def test_fetch_over_http_and_a_mismatch_keeps_nothing(tmp_path: Path, data, server) -> None:
    _, sha = data
    base, seen = server
    dest = tmp_path / "a" / "test_data.h5"
    install.fetch_scicode_data(dest, sha, log=lambda _: None, url=base + "/test_data.h5")
    assert seen == ["/test_data.h5"] and scicode_data.file_sha256(dest) == sha
    other = tmp_path / "b" / "test_data.h5"
    with pytest.raises(IntegrityError, match="nothing was kept") as info:
        install.fetch_scicode_data(other, install.SCICODE_H5_SHA256, log=lambda _: None, url=base + "/test_data.h5")
    assert "48b0272a" in info.value.message and "\n" not in info.value.message
    assert not other.exists() and not other.with_name("test_data.h5.part").exists()
    with pytest.raises(SourceUnavailable, match="HTTP 404.*SR_BENCH_SCICODE_TEST_DATA"):
        install.fetch_scicode_data(other, sha, log=lambda _: None, url=base + "/missing")
    assert not other.with_name("test_data.h5.part").exists()


def test_setup_install_refuses_data_that_is_not_the_pin_before_building(tmp_path: Path, data, monkeypatch) -> None:
    src, _ = data
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(tmp_path / "dest.h5"))
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA_URL", src.as_uri())
    monkeypatch.setattr(install.builder, "build", lambda *a, **k: pytest.fail("built with unchecked data"))
    with pytest.raises(IntegrityError, match="the pinned test_data.h5 is 48b0272a"):
        install.setup_sandbox(install=True, build_sandbox=True, benchmarks={"scicode"}, log=lambda _: None)
    assert not (tmp_path / "dest.h5").exists()
    assert install.scicode_data_url() == src.as_uri()
    monkeypatch.delenv("SR_BENCH_SCICODE_TEST_DATA_URL")
    assert install.scicode_data_url() == install.SCICODE_H5_URL and "17G_k65N_6yFFZ2O-jQH00Lh6iaw3z-AW" in install.SCICODE_H5_URL


def test_the_cli_says_what_is_missing_in_one_line(tmp_path: Path, data) -> None:
    src, _ = data
    cli = Cli(tmp_path, {"SR_BENCH_SANDBOX_DIR": str(tmp_path / "no-sandbox"),
                         "SR_BENCH_SCICODE_TEST_DATA": str(tmp_path / "absent.h5"),
                         "SR_BENCH_SCICODE_TEST_DATA_URL": src.as_uri()})
    res = cli.run("setup", "--benchmark", "scicode", ok=False)
    assert res.returncode == 1
    row = json.loads(res.stdout)["benchmarks"][0]
    assert row["benchmark"] == "scicode" and row["available"] is True and row["ready"] is False
    assert any("code-grading sandbox" in m for m in row["missing"])
    bad = cli.run("setup", "--benchmark", "scicode", "--install", ok=False)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "the pinned test_data.h5 is 48b0272a" in bad.stderr and not (tmp_path / "absent.h5").exists()
    cli.run("stop", ok=False)


def test_the_check_is_ready_with_the_sandbox_and_the_expected_data(tmp_path: Path, data, monkeypatch) -> None:
    try:
        open_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no grading sandbox here: {exc.message}")
    src, sha = data
    monkeypatch.setenv("SR_BENCH_SCICODE_TEST_DATA", str(src))
    store = tmp_path / "store"
    store.mkdir()
    row = next(r for r in checks(store, set()).benchmarks if r.benchmark == "scicode")
    assert not row.ready and any(f"has sha256 {sha}, grading needs 48b0272a" in m for m in row.missing)
    (store / "benchmark-options.json").write_text(json.dumps({"scicode": {"test_data_sha256": sha}}))
    row = next(r for r in checks(store, set()).benchmarks if r.benchmark == "scicode")
    assert row.missing == [] and row.ready is True and row.sandbox is not None
    assert "matplotlib" in row.sandbox.python_packages


def _receipt(directory: Path, packages: dict[str, str]) -> None:
    from srbench.sandbox import build as builder

    rootfs = directory / "rootfs"
    (rootfs / "usr").mkdir(parents=True)
    (rootfs / "usr" / "marker").write_text("x", "utf-8")
    (directory / "receipt.json").write_text(json.dumps({"python_packages": packages,
                                                        "rootfs_digest": builder.tree_digest(rootfs)}), "utf-8")


def test_a_build_with_the_wheels_is_reused_without_install_never_downgraded(tmp_path: Path, monkeypatch) -> None:
    from srbench.sandbox import build as builder

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")     # the rootfs alone is checked
    full, bare = tmp_path / "full", tmp_path / "bare"
    _receipt(full, dict(builder.PYTHON_PINS))
    _receipt(bare, {})
    assert install.up_to_date(full, deps=False, h5_sha=None)         # more than asked: up to date
    assert install.up_to_date(full, deps=True, h5_sha=None)
    assert install.up_to_date(bare, deps=False, h5_sha=None)
    assert not install.up_to_date(bare, deps=True, h5_sha=None)      # the wheels are missing: rebuild
    _receipt(tmp_path / "other", {"numpy": "0.0.1"})
    assert not install.up_to_date(tmp_path / "other", deps=False, h5_sha=None)   # not the pins: rebuild
    (full / "rootfs" / "usr" / "marker").write_text("changed", "utf-8")
    assert not install.up_to_date(full, deps=False, h5_sha=None)     # the rootfs no longer matches its receipt
