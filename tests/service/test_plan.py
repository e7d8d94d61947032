"""Plan validation over the real service (RUN-1, RUN-6, TG-2, TG-3, TG-4, TG-5, RUN-7): one clear message per
problem naming the field, every problem in one error, and the effective request parameters."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from .helpers import PRICE, freeze, manifest, single

URL = "http://127.0.0.1:9/v1"        # never called: planning sends no request
SECRET = "sk-test-DO-NOT-ECHO-4f1c9a"


@pytest.fixture
def base(api, prepare) -> dict[str, Any]:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", URL, "sim-strong"), single("weak", URL, "sim-weak")]})
    return manifest(ds, [{"id": "strong"}, {"id": "weak"}])


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = m
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        node[last] = value
    return edit


MOM = {"id": "router", "kind": "mom", "base_url": URL, "model": "MoM", "max_inference_calls": 1,
       "prices": {"sim-strong": PRICE}}
CASES: dict[str, tuple[Callable[[dict[str, Any]], None], list[str]]] = {
    "unknown top-level field": (_set("temperature", 0.5), ["temperature", "unknown field"]),
    "wrong dataset sha256": (_set("dataset.sha256", "a" * 64), ["dataset.sha256", "a" * 64]),
    "profile not the dataset's": (_set("profile", "quick"), ["profile quick", "smoke"]),
    "seed not the dataset's": (_set("seed", 1), ["seed 1", "20260918"]),
    "unregistered target": (_set("targets", [{"id": "nobody"}]), ["targets[0]", "'nobody'", "registered"]),
    "duplicate target ids": (_set("targets", [{"id": "strong"}, {"id": "strong"}]),
                             ["duplicate target id", "'strong'"]),
    "require_priced without prices": (_set("targets", [{"id": "x", "kind": "single", "base_url": URL,
                                                        "model": "m"}]), ["targets[0] (x)", "prices"]),
    "prices lack the target's model": (_set("targets", [single("x", URL, "m1", prices={"m2": PRICE})]),
                                       ["targets[0] (x)", "prices", "'m1'"]),
    "mom without config_hash": (_set("targets", [MOM]), ["targets[0] (router)", "config_hash"]),
    "pinned max_tokens above the cap": (_set("targets", [single("x", URL, request_params={"max_tokens": 9000})]),
                                        ["targets[0] (x)", "max_tokens 9000", "limits.max_output_tokens"]),
    "idle timeout above total": (_set("limits.idle_timeout_s", 60), ["limits.idle_timeout_s",
                                                                     "limits.total_timeout_s"]),
    "api_key on a target": (_set("targets", [single("x", URL, api_key=SECRET)]), ["targets[0].api_key",
                                                                                   "api_key_env"]),
    "api_key on a reference": (_set("targets", [{"id": "strong", "api_key": SECRET}]),
                               ["targets[0].api_key", "api_key_env"]),
    "sampling max_tokens above the cap": (_set("sampling", {"max_tokens": 9000}),
                                          ["sampling.max_tokens", "limits.max_output_tokens"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_clear_problem(api, base, case) -> None:
    edit, needles = CASES[case]
    m = copy.deepcopy(base)
    edit(m)
    msg = api.error("POST", "/plans", {"manifest": m}, 400, "invalid_input")
    for needle in needles:
        assert needle in msg, (case, needle, msg)
    assert "problems" not in msg, f"{case}: expected exactly one problem, got: {msg}"
    assert SECRET not in msg and "function-after" not in msg and "TargetRef" not in msg, msg


def test_all_problems_in_one_error(api, base) -> None:
    m = copy.deepcopy(base)
    m["seed"] = 1
    m["targets"] = [{"id": "nobody"}, {"id": "strong"}, {"id": "strong"}, MOM,
                    single("big", URL, request_params={"max_tokens": 9000})]
    msg = api.error("POST", "/plans", {"manifest": m}, 400, "invalid_input")
    assert msg.startswith("manifest has 5 problems: "), msg
    for needle in ("seed 1", "'nobody'", "duplicate target id 'strong'", "(router): a live MoM target must pin "
                   "config_hash", "(big): pinned max_tokens 9000"):
        assert needle in msg, (needle, msg)
    # schema problems are gathered too
    m = copy.deepcopy(base)
    m["bogus"] = 1
    m["limits"]["idle_timeout_s"] = 60
    m["targets"] = [single("x", URL, api_key=SECRET)]
    msg = api.error("POST", "/plans", {"manifest": m}, 400, "invalid_input")
    assert msg.startswith("manifest has 3 problems: "), msg
    assert "bogus" in msg and "limits.idle_timeout_s" in msg and "targets[0].api_key" in msg and SECRET not in msg


def test_sha256_problem_is_reported_with_the_others(api, base) -> None:
    m = copy.deepcopy(base)
    m["dataset"]["sha256"] = "b" * 64
    m["targets"] = [{"id": "nobody"}]
    msg = api.error("POST", "/plans", {"manifest": m}, 400, "invalid_input")
    assert "dataset.sha256" in msg and "'nobody'" in msg and msg.startswith("manifest has 2 problems"), msg


def test_register_refuses_api_key_and_stores_nothing(api) -> None:
    msg = api.error("POST", "/targets", {"targets": [single("a", URL), single("b", URL, api_key=SECRET)]}, 400)
    assert "targets[1].api_key" in msg and "api_key_env" in msg and SECRET not in msg, msg
    assert api.ok("GET", "/targets") == {"targets": []}
    msg = api.error("POST", "/targets", {"targets": [single("a", URL, api_key_env=SECRET)]}, 400)
    assert "api_key_env" in msg and SECRET not in msg, msg


def test_effective_params_target_over_sampling_over_defaults(api, prepare) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [
        single("pinned", URL, request_params={"temperature": 0.7, "max_tokens": 100, "reasoning_effort": "low"}),
        single("plain", URL)]})
    limits = {"max_output_tokens": 512, "total_timeout_s": 10, "idle_timeout_s": 5}
    plan = freeze(api, manifest(ds, [{"id": "pinned"}, {"id": "plain"}], limits=limits,
                                sampling={"temperature": 0.3, "top_p": 0.9}))
    eff = {p["id"]: p["effective_params"] for p in plan["target_profiles"]}
    assert eff["pinned"] == {"temperature": 0.7, "max_tokens": 100, "reasoning_effort": "low", "top_p": 0.9}
    assert eff["plain"] == {"temperature": 0.3, "top_p": 0.9, "max_tokens": 512}
    plan = freeze(api, manifest(ds, [{"id": "plain"}], limits=limits))
    assert plan["target_profiles"][0]["effective_params"] == {"temperature": 0, "max_tokens": 512}
    assert plan["target_profiles"][0]["registered"] is True and plan["total"] == ds["case_count"] == 14
    # the cap may be raised to fit a pinned max_tokens; the model profile is not rewritten
    plan = freeze(api, manifest(ds, [{"id": "pinned"}], limits=dict(limits, max_output_tokens=100)))
    assert plan["target_profiles"][0]["effective_params"]["max_tokens"] == 100


def test_plan_refuses_an_edited_then_rehashed_frozen_plan_at_submit(api, base) -> None:
    """A frozen plan whose effective parameters were edited and whose plan_sha256 was recomputed is not a
    reviewed plan: submit re-derives the parameters and refuses it."""
    from srbench.service.wire.projections import plan_from_wire
    from srbench.stages.plan.freeze import plan_sha256

    plan = plan_from_wire(freeze(api, base))          # sr-bench's own plan form is accepted too
    plan["targets"][0]["effective_params"]["max_tokens"] = 999999
    plan["plan_sha256"] = plan_sha256(plan)
    msg = api.error("POST", "/runs", {"manifest": plan}, 400, "invalid_input")
    assert "effective_params" in msg and "strong" in msg, msg
    assert api.run_count() == 0


def test_same_bytes_prepared_as_full_profile_and_as_limit_keep_the_plans_label(api, prepare) -> None:
    """`--limit 14` of the 14-task smoke profile freezes the same bytes as the full profile (same path and
    sha256); preparing it must not relabel plans of the full profile as a custom subset, nor the reverse."""
    full = prepare("mmlu-pro")
    sub = prepare("mmlu-pro", limit=14)
    assert (sub["sha256"], sub["path"]) == (full["sha256"], full["path"]) and sub["id"] != full["id"]
    api.ok("POST", "/targets", {"targets": [single("strong", URL, "sim-strong")]})
    plan = freeze(api, manifest(full, [{"id": "strong"}]))
    assert plan["dataset"]["custom_subset"] is False and plan["dataset"]["id"] == full["ref"], plan["dataset"]
    assert not any("custom" in n for n in plan["notices"]), plan["notices"]


def test_the_service_token_variable_is_never_a_model_credential(api, base, monkeypatch) -> None:
    msg = api.error("POST", "/targets", {"targets": [single("a", URL, api_key_env="SR_BENCH_TOKEN")]}, 400)
    assert "targets[0].api_key_env" in msg and "SR_BENCH_TOKEN" in msg, msg
    monkeypatch.setenv("SR_BENCH_TOKEN_ENV", "SRB_TEST_SERVICE_TOKEN")
    m = copy.deepcopy(base)
    m["targets"] = [single("a", URL, api_key_env="SRB_TEST_SERVICE_TOKEN")]
    msg = api.error("POST", "/plans", {"manifest": m}, 400)
    assert "targets[0] (a): api_key_env" in msg and "SRB_TEST_SERVICE_TOKEN" in msg, msg


def test_a_plan_names_its_dataset_by_digest_and_the_path_is_only_a_hint(api, base, tmp_path) -> None:
    """DS-2: the frozen plan holds no path; a manifest without one, or with one that does not exist on
    this host (a colleague's), plans to the same plan_sha256."""
    first = api.ok("POST", "/plans", {"manifest": base})["manifest"]
    assert "path" not in first["dataset"] and first["dataset"]["object"].startswith("b3:")
    no_path = copy.deepcopy(base)
    del no_path["dataset"]["path"]
    elsewhere = copy.deepcopy(base)
    elsewhere["dataset"]["path"] = str(tmp_path / "someone-elses-host" / "dataset.jsonl")
    for m in (no_path, elsewhere):
        assert api.ok("POST", "/plans", {"manifest": m})["plan_sha256"] == first["plan_sha256"]
    unknown = copy.deepcopy(no_path)
    unknown["dataset"]["sha256"] = "c" * 64
    msg = api.error("POST", "/plans", {"manifest": unknown}, 400, "invalid_input")
    assert msg == (f"manifest: dataset.sha256 {'c' * 64} is not a frozen dataset of this store (prepare or "
                   "combine it first, or `sr-bench pull` the run that used it)")
