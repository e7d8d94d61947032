"""The registry and the CAT-1 catalog, and the pinned-source downloader (no network: MockTransport)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import httpx
import pytest

from srbench.benchmarks import REGISTRY, all_benchmarks, catalog, get
from srbench.benchmarks.base import Benchmark, SourcePin
from srbench.benchmarks.sources import fetch_pinned, file_url, matches, read_files, source_record, tarball_url
from srbench.benchmarks.unavailable import UnavailableBenchmark
from srbench.errors import InvalidInput, SourceUnavailable

CAT1 = [
    ("mmlu-pro", 14, 500, 2000), ("gpqa-diamond", 4, 40, 158), ("hle", 4, 40, 200),
    ("livecodebench", 2, 30, 150), ("scicode", 1, 3, 20), ("terminal-bench-2.1", 1, 3, 15),
    ("simpleqa-verified", 5, 100, 500), ("arc-agi-2", 2, 12, 80), ("tau3", 3, 12, 60),
]
AVAILABLE = {"livecodebench", "scicode", "mmlu-pro", "gpqa-diamond", "hle", "simpleqa-verified", "arc-agi-2", "tau3"}


@pytest.fixture(autouse=True)
def _no_docker(monkeypatch):
    """Terminal-Bench is available where a Docker engine answers: these tests fix it to "no engine"
    (tests/benchmarks/test_terminal_bench.py checks both answers)."""
    from srbench.benchmarks.terminal_bench import adapter

    monkeypatch.setattr(adapter, "availability", lambda: "needs a Docker engine for its task containers: none")


def test_catalog_matches_cat1():
    cat = catalog()
    assert cat["version"] == "sr-bench-1.0"
    rows = [(b["id"], b["profiles"]["smoke"], b["profiles"]["quick"], b["profiles"]["standard"])
            for b in cat["benchmarks"]]
    assert rows == CAT1
    assert {k: cat["totals"][k] for k in ("smoke", "quick", "standard")} == {"smoke": 36, "quick": 740, "standard": 3183}
    assert cat["totals"]["available"] == {p: sum(r[i + 1] for r in CAT1 if r[0] in AVAILABLE)
                                          for i, p in enumerate(("smoke", "quick", "standard"))}
    assert sum(b["weight"] for b in cat["benchmarks"]) == 100 and cat["weights_note"]
    json.dumps(cat)


def test_availability_and_pins():
    for b in all_benchmarks():
        assert isinstance(b, Benchmark)
        assert b.available == (b.id in AVAILABLE)
        assert len(b.source.revision) == 40 and int(b.source.revision, 16) >= 0
        assert set(b.profiles) == {"smoke", "quick", "standard"}
        if not b.available:
            assert b.catalog_entry().reason
            if not isinstance(b, UnavailableBenchmark):     # a host requirement: its source still loads
                continue
            with pytest.raises(InvalidInput, match=f"{b.id} is not available"):
                b.load({}, seed=1, revision="r")
            with pytest.raises(InvalidInput, match="not available"):
                b.fetch(Path("/nonexistent"))
    assert get("gpqa-diamond").source.gated and get("hle").source.gated
    assert get("mmlu-pro").grader_version == "sr-bench-mcq-final-v2"
    assert get("arc-agi-2").grader_version == "sr-bench-arc-exact-v1"
    assert get("hle").grader_version == get("simpleqa-verified").grader_version == "sr-bench-reference-judge-v1"


def test_get_unknown_names_known_ids():
    with pytest.raises(InvalidInput) as err:
        get("mmlu")
    assert all(i in str(err.value) for i in REGISTRY)


# -- sources -----------------------------------------------------------------------------------
HF = SourcePin(url="https://huggingface.co/datasets/org/set", revision="a" * 40, files=("data/x.parquet",))
GATED = SourcePin(url="https://huggingface.co/datasets/org/gated", revision="b" * 40, files=("g.csv",), gated=True)
GIT = SourcePin(url="https://github.com/owner/repo", revision="c" * 40, files=("data/evaluation/*.json",))


def test_urls_and_glob_matching():
    assert file_url(HF, "data/x.parquet") == f"https://huggingface.co/datasets/org/set/resolve/{'a' * 40}/data/x.parquet"
    assert file_url(GIT, "README.md") == f"https://raw.githubusercontent.com/owner/repo/{'c' * 40}/README.md"
    assert tarball_url(GIT) == f"https://codeload.github.com/owner/repo/tar.gz/{'c' * 40}"
    assert matches("data/evaluation/a.json", "data/evaluation/*.json")
    assert not matches("data/evaluation/sub/a.json", "data/evaluation/*.json")


def test_download_sends_token_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers.get("authorization")))
        return httpx.Response(200, content=b"PAR1 bytes")

    out = fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(handler))
    assert out == {"data/x.parquet": tmp_path / ("a" * 40) / "data/x.parquet"}
    assert out["data/x.parquet"].read_bytes() == b"PAR1 bytes"
    assert seen == [(file_url(HF, "data/x.parquet"), "Bearer hf_secret")]
    fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(handler))
    assert len(seen) == 1                                           # cached
    rec = source_record(HF, read_files(out), origin="download")
    assert rec.files[0].sha256 == hashlib.sha256(b"PAR1 bytes").hexdigest() and rec.revision == "a" * 40


def _tarball(prefix: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in [("data/evaluation/t1.json", b'{"a":1}'), ("data/evaluation/t2.json", b'{"b":2}'),
                           ("data/evaluation/sub/t3.json", b"{}"), ("data/training/t4.json", b"{}"),
                           ("README.md", b"hi")]:
            info = tarfile.TarInfo(f"{prefix}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo(f"{prefix}/data/evaluation/link.json")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    return buf.getvalue()


def test_git_glob_via_tarball(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers.get("authorization")))
        return httpx.Response(200, content=_tarball("repo-" + "c" * 40))

    out = fetch_pinned(GIT, tmp_path, transport=httpx.MockTransport(handler))
    assert sorted(out) == ["data/evaluation/t1.json", "data/evaluation/t2.json"]
    assert read_files(out)["data/evaluation/t2.json"] == b'{"b":2}'
    assert seen == [(tarball_url(GIT), None)]                      # the HF token never goes to GitHub
    assert fetch_pinned(GIT, tmp_path, transport=httpx.MockTransport(handler)) == out
    assert len(seen) == 1


@pytest.mark.parametrize("token", [None, "hf_x"])
def test_gated_error_says_accept_terms(tmp_path, monkeypatch, token):
    if token:
        monkeypatch.setenv("HF_TOKEN", token)
    else:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    transport = httpx.MockTransport(lambda r: httpx.Response(401 if token is None else 403))
    with pytest.raises(SourceUnavailable) as err:
        fetch_pinned(GATED, tmp_path, transport=transport)
    msg = str(err.value)
    assert f"accept the terms at {GATED.url}" in msg and "set HF_TOKEN" in msg and "\n" not in msg
    assert err.value.code == "source_gated"
    assert not (tmp_path / ("b" * 40) / "g.csv").exists()


def test_network_and_http_errors(tmp_path):
    def offline(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route", request=request)

    with pytest.raises(SourceUnavailable, match=r"--source-path DIR --revision a{40}"):
        fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(offline))
    with pytest.raises(SourceUnavailable, match="HTTP 404"):
        fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    with pytest.raises(SourceUnavailable, match="HTTP 403"):
        fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(lambda r: httpx.Response(403)))
    with pytest.raises(SourceUnavailable, match="HTTP 500"):
        fetch_pinned(HF, tmp_path, transport=httpx.MockTransport(lambda r: httpx.Response(500)))
    with pytest.raises(SourceUnavailable, match="unreadable"):
        fetch_pinned(GIT, tmp_path, transport=httpx.MockTransport(lambda r: httpx.Response(200, content=b"nope")))
    assert list(tmp_path.rglob("*.part-*")) == []


def test_read_files_missing(tmp_path):
    with pytest.raises(SourceUnavailable, match="cannot read"):
        read_files({"x": tmp_path / "nope"})
