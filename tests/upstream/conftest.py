"""The conformance suite's world: upstream's released `vllm-sr benchmark` CLI (vllm-sr 0.4.0 from PyPI,
unchanged, in its own interpreter: SR_BENCH_UPSTREAM_VLLM_SR names its `vllm-sr` script) in a subprocess,
against sr-bench's real service on loopback, with simulated OpenAI-compatible endpoints.

One service per module (the commands read each other's runs); every test drives the CLI as its users do:
`vllm-sr benchmark --url URL --store STORE --no-autostart …` with the token in SR_BENCH_TOKEN.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread

from .upstream_env import ENV, upstream_cli

PRICES = {"strong": {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0},
          "weak": {"input": 0.2, "cached_input": 0.1, "cache_write": 0.2, "output": 0.8}}
LIMITS = {"concurrency": 4, "total_timeout_s": 20, "idle_timeout_s": 10, "case_timeout_s": 20, "max_run_seconds": 60}


@dataclass
class Upstream:
    """`vllm-sr benchmark …` against one sr-bench service; `cwd` holds the files the commands read and write."""

    script: Path
    url: str
    store: Path
    token: str
    cwd: Path
    seen: list[str] = field(default_factory=list)

    def run(self, *args: str, code: int | None = 0, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SR_BENCH_", "VLLM_SR_"))}
        env.update(SR_BENCH_TOKEN=self.token, HOME=str(self.cwd / "home"))
        cmd = [str(self.script), "benchmark", "--url", self.url, "--store", str(self.store), "--no-autostart", *args]
        proc = subprocess.run(cmd, cwd=self.cwd, env=env, capture_output=True, text=True, timeout=timeout)
        self.seen.append(" ".join(args))
        if code is not None and proc.returncode != code:
            raise AssertionError(f"vllm-sr benchmark {' '.join(args)} exited {proc.returncode}, not {code}:\n"
                                 f"{proc.stderr[-2000:]}\n{proc.stdout[-1000:]}")
        return proc

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self.run(*args, code=code).stdout)

    def write(self, name: str, value: Any) -> str:
        path = self.cwd / name
        path.write_text(json.dumps(value, indent=2))
        return str(path)

    def read(self, name: str) -> Any:
        return json.loads((self.cwd / name).read_text())


@dataclass
class World:
    up: Upstream
    service: EmbeddedService
    sim: SimulatorThread
    dataset: dict[str, Any]
    cases_file: Path
    api: Callable[..., Any]


def _targets(sim: SimulatorThread) -> list[dict[str, Any]]:
    return [{"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong",
             "prices": {"strong": PRICES["strong"]}},
            {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": {"weak": PRICES["weak"]}},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "prices": PRICES,
             "config_hash": "cfg-up", "preview_url": sim.router_url + "/preview", "max_inference_calls": 1},
            {"id": "dead", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "dead",
             "prices": {"dead": PRICES["weak"]}}]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    script = upstream_cli()
    root = tmp_path_factory.mktemp("upstream")
    with pytest.MonkeyPatch.context() as mp:
        for name in [k for k in os.environ if k.startswith("SR_BENCH_") and k != ENV]:
            mp.delenv(name)
        mp.setenv("SR_BENCH_HOME", str(root / "home"))
        with EmbeddedService(root / "store") as service:
            source = samples.write_mmlu_pro(root / "mmlu-pro")
            ds = service.client.post("/datasets/prepare", {
                "benchmark": "mmlu-pro", "profile": "smoke", "source_path": str(source),
                "revision": samples.SAMPLE_REVISION})
            # a user's own copy of the dataset file (upstream's `plan` reads it, or the .jsonl path the service answers)
            cases_file = root / "data" / "cases.jsonl"
            cases_file.parent.mkdir()
            shutil.copyfile(ds["path"], cases_file)
            router = RouterRule(strong="strong", weak="weak", long_prompt_chars=10**6, keywords=("the",),
                                config_hash="cfg-up")
            models = [SimModel("strong", skill=0.9, cached_fraction=0.5), SimModel("weak", skill=0.3)]
            with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim:
                up = Upstream(script, service.url, service.store_dir, service.token, root)
                up.write("targets.json", _targets(sim))
                up.run("target", "register", "--file", str(root / "targets.json"))
                yield World(up, service, sim, ds, cases_file,
                            lambda method, path, body=None: service.client.request(method, path, json=body))


def manifest(w: World, targets: list[Any], **extra: Any) -> dict[str, Any]:
    """A manifest as upstream's users write it: the dataset by path and sha256, targets spelled out."""
    return {"version": "sr-bench-1.0", "name": "conformance", "profile": "smoke", "seed": w.dataset["seed"],
            "dataset": {"path": str(w.cases_file), "sha256": w.dataset["sha256"]}, "targets": targets,
            "limits": dict(LIMITS), **extra}


def registered(w: World, *ids: str) -> list[dict[str, Any]]:
    """The registered targets named, spelled out as upstream's `plan` needs them (it reads no registry)."""
    by_id = {t["id"]: t for t in w.up.read("targets.json")}
    return [by_id[i] for i in ids]
