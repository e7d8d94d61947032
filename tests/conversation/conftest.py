"""Fixtures for multi-call cells through the real service on loopback: the toy agent benchmark
registered, its native source, a fake OpenAI server that plays the agent (tool calls) and the user
simulator, both targets registered and the simulator pinned in benchmark-options.json."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import PRICE, Api, isolated_env
from srbench.benchmarks import REGISTRY
from srbench.client.embedded import EmbeddedService
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

from .toy import ToyAgent, agent_script, write_tasks

SIM_PRICE = {"input": 0.5, "cached_input": 0.5, "cache_write": 0.5, "output": 2.0}


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> ToyAgent:
    bench = ToyAgent()
    monkeypatch.setitem(REGISTRY, bench.id, bench)
    return bench


@pytest.fixture
def service(toy: ToyAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedService]:
    isolated_env(tmp_path, monkeypatch)
    with EmbeddedService(tmp_path / "store") as svc:
        yield svc


@pytest.fixture
def api(service: EmbeddedService) -> Iterator[Api]:
    a = Api(service.url, service.token)
    yield a
    a.close()


def agent_models(latency_s: float = 0.0) -> list[SimModel]:
    return [SimModel("agent-model", skill=1.0, latency_s=latency_s), SimModel("sim-user", skill=1.0, latency_s=latency_s),
            SimModel("other-model", skill=1.0, latency_s=latency_s)]


@pytest.fixture
def agent_sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(models=agent_models(), script=agent_script) as s:
        yield s


def toy_targets(sim_url: str, router_url: str | None = None) -> list[dict[str, Any]]:
    out = [{"id": "agent", "kind": "single", "base_url": sim_url, "model": "agent-model",
            "prices": {"agent-model": PRICE}},
           {"id": "user-sim", "kind": "single", "base_url": sim_url, "model": "sim-user",
            "prices": {"sim-user": SIM_PRICE}}]
    if router_url is not None:
        prices = {m: PRICE for m in ("agent-model", "other-model")}
        out.append({"id": "mom", "kind": "mom", "base_url": router_url, "model": "MoM", "config_hash": "cfg-1",
                    "max_inference_calls": 1, "models": ["agent-model", "other-model"], "prices": prices})
    return out


def pin_simulator(store_dir: Path, target: str = "user-sim") -> None:
    (Path(store_dir) / "benchmark-options.json").write_text(json.dumps({"toy-agent": {"user_simulator": target}}))


@pytest.fixture
def toy_dataset(api: Api, tmp_path: Path) -> Callable[..., dict[str, Any]]:
    src = write_tasks(tmp_path / "toy-src")

    def make(profile: str = "smoke", limit: int | None = None) -> dict[str, Any]:
        return api.ok("POST", "/datasets/prepare", {"benchmark": "toy-agent", "profile": profile, "limit": limit,
                                                    "source_path": str(src), "revision": "toy-1"})
    return make
