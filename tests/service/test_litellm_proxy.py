"""MoM targets behind the real LiteLLM proxy on loopback (``pip install 'sr-bench[litellm]'``).

The proxy serves mock deployments (``mock_response``: no upstream, no outside call; the remote cost map
is not fetched): a group ``grp`` load-balanced over two deployments with ``simple-shuffle``, a group
``broken`` whose only deployment fails and falls back to ``grp``, and a master key (a wrong key gets
LiteLLM's 400 "No connected db."). A callback module logs what the proxy itself did per call (the
deployment, its usage and its cost), and the figures sr-bench reports are checked against that log.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import Api, free_port, freeze, loopback_process, manifest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("litellm") is None or importlib.util.find_spec("fastapi") is None
    or importlib.util.find_spec("uvicorn") is None,
    reason="the LiteLLM proxy is not installed (pip install 'sr-bench[litellm]')")

MASTER_KEY = "sk-srbench-test-master-0001"
# USD per million tokens; the proxy is given the same prices per token, so its cost is comparable
PRICES = {"openai/dep-a": {"input": 1.0, "cached_input": 1.0, "cache_write": 1.0, "output": 4.0},
          "openai/dep-b": {"input": 3.0, "cached_input": 3.0, "cache_write": 3.0, "output": 15.0}}
DEPLOYMENT_MODEL = {"dep-a-id": "openai/dep-a", "dep-b-id": "openai/dep-b"}

CONFIG = """\
model_list:
  - model_name: grp
    litellm_params: {{model: openai/dep-a, api_key: fake-a, api_base: "http://127.0.0.1:9/v1", mock_response: "Answer: A"}}
    model_info: {{id: dep-a-id, input_cost_per_token: 0.000001, output_cost_per_token: 0.000004}}
  - model_name: grp
    litellm_params: {{model: openai/dep-b, api_key: fake-b, api_base: "http://127.0.0.1:9/v1", mock_response: "Answer: B"}}
    model_info: {{id: dep-b-id, input_cost_per_token: 0.000003, output_cost_per_token: 0.000015}}
  - model_name: broken
    litellm_params: {{model: openai/dep-x, api_key: fake-x, api_base: "http://127.0.0.1:9/v1", mock_response: "litellm.InternalServerError"}}
    model_info: {{id: dep-x-id}}
router_settings:
  routing_strategy: simple-shuffle
  allowed_fails: 1000
  fallbacks: [{{"broken": ["grp"]}}]
general_settings:
  master_key: {key}
litellm_settings:
  callbacks: probe_log.probe
  request_timeout: 30
"""

PROBE = """\
import json, os
from litellm.integrations.custom_logger import CustomLogger


class Probe(CustomLogger):
    def _write(self, kind, kwargs, response_obj):
        info = (kwargs.get("litellm_params") or {}).get("model_info") or {}
        usage = getattr(response_obj, "usage", None)
        row = {"kind": kind, "call_id": kwargs.get("litellm_call_id"), "model_id": info.get("id"),
               "response_cost": kwargs.get("response_cost"),
               "prompt_tokens": getattr(usage, "prompt_tokens", None),
               "completion_tokens": getattr(usage, "completion_tokens", None)}
        with open(os.environ["SRBENCH_PROBE_LOG"], "a") as f:
            f.write(json.dumps(row) + "\\n")

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write("success", kwargs, response_obj)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write("failure", kwargs, response_obj)


probe = Probe()
"""


class Proxy:
    def __init__(self, url: str, log: Path) -> None:
        self.url, self.log = url, log

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    root = tmp_path_factory.mktemp("litellm")
    (root / "config.yaml").write_text(CONFIG.format(key=MASTER_KEY))
    (root / "probe_log.py").write_text(PROBE)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY") and k != "DATABASE_URL"}
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "SRBENCH_PROBE_LOG": str(root / "probe.jsonl"),
                # anything that would still try to leave this host fails at once on loopback
                "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                "NO_PROXY": "127.0.0.1,localhost", "PYTHONPATH": str(root)})
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(root / "config.yaml"),
           "--host", "127.0.0.1", "--port", str(port)]
    with loopback_process(cmd, url + "/health/liveliness", root / "proxy.log", timeout=240, cwd=root, env=env):
        yield Proxy(url, root / "probe.jsonl")


def _target(tid: str, url: str, model: str, key_env: str, **extra: Any) -> dict[str, Any]:
    return {"id": tid, "kind": "mom", "base_url": url + "/v1", "model": model, "api_key_env": key_env,
            "prices": PRICES, "models": sorted(PRICES), "max_inference_calls": 2, **extra}


def _records(api: Api, run_id: str) -> dict[str, dict[str, Any]]:
    calls = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
    return {c["cell_id"]: api.ok("GET", f"/runs/{run_id}/calls/{c['cell_id']}") | {"target_id": c["target_id"]}
            for c in calls if c["call"]}


def test_litellm_router_group_fallbacks_bad_key_and_offline_reattribution(api, prepare, proxy, monkeypatch) -> None:
    monkeypatch.setenv("LL_TEST_KEY", MASTER_KEY)
    monkeypatch.setenv("LL_BAD_KEY", "sk-not-a-key-of-this-proxy-99")
    ds = prepare("mmlu-pro")                                   # 14 cases
    api.ok("POST", "/targets", {"targets": [
        _target("ll", proxy.url, "grp", "LL_TEST_KEY", router="litellm"),
        _target("ll-fb", proxy.url, "broken", "LL_TEST_KEY", router="litellm", max_inference_calls=1),
        _target("ll-badkey", proxy.url, "grp", "LL_BAD_KEY", router="litellm"),
        _target("ll-vsr", proxy.url, "grp", "LL_TEST_KEY", config_hash="not-reported")]})   # default router
    m = manifest(ds, [{"id": t} for t in ("ll", "ll-fb", "ll-badkey", "ll-vsr")])
    m["limits"].update(total_timeout_s=60, idle_timeout_s=30, case_timeout_s=60, max_run_seconds=240,
                       max_cost_usd=None)
    plan = freeze(api, m)
    assert any("router litellm reports no configuration hash" in n for n in plan["notices"]), plan["notices"]
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    run = api.wait(run_id, timeout=240)

    # the bad key (LiteLLM: 400 "No connected db.") stops its own target; the others went on
    assert run["status"] == "failed" and "ll-badkey (auth)" in run["error"] and "No connected db" in run["error"], run
    events = api.ok("GET", f"/runs/{run_id}/events")["events"]
    assert [e["data"]["target_id"] for e in events if e["kind"] == "dispatch_stopped"] == ["ll-badkey"]
    report = api.ok("GET", f"/runs/{run_id}/report")
    summary = {t["target_id"]: t for t in report["summary"]["targets"]}
    assert summary["ll-badkey"]["failure_classes"] == {"http_400": summary["ll-badkey"]["failed"]}
    assert 1 <= summary["ll-badkey"]["failed"] <= 4 and summary["ll-badkey"]["pending"] >= 10   # ≤ concurrency in flight
    rows = {r["cell_id"]: r for r in api.ok("GET", f"/runs/{run_id}/results")["results"]}
    for tid in ("ll", "ll-fb", "ll-vsr"):
        unanswered = [{k: r.get(k) for k in ("cell_id", "state", "error_class", "error")}
                      for r in rows.values() if r["target_id"] == tid and r.get("state") != "completed"]
        assert summary[tid]["completed"] == 14, (unanswered, run["error"], events)

    probe = proxy.entries()
    success = {e["call_id"]: e for e in probe if e["kind"] == "success"}
    failures = Counter(e["call_id"] for e in probe if e["kind"] == "failure")
    records = _records(api, run_id)
    by_target: dict[str, list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]] = {}
    for cell_id, rec in records.items():
        if rec["target_id"] == "ll-badkey":
            continue
        headers = rec["record"]["headers"]
        assert headers["x-litellm-model-group"] == "grp" and MASTER_KEY not in json.dumps(headers)
        assert rec["selected_model"] == rows[cell_id]["selected_model"]      # the calls page says what the row says
        by_target.setdefault(rec["target_id"], []).append((rec["record"], success[headers["x-litellm-call-id"]],
                                                           rows[cell_id]))

    # the router group: buckets and cost equal the proxy's own usage and cost, call for call
    mix: Counter[str] = Counter()
    for record, seen, row in by_target["ll"]:
        model = DEPLOYMENT_MODEL[seen["model_id"]]
        mix[model] += 1
        assert record["usage"] == {"input": seen["prompt_tokens"], "cached_input": 0, "cache_write": 0,
                                   "output": seen["completion_tokens"]}
        assert row["cost_usd"] == pytest.approx(seen["response_cost"], rel=1e-9, abs=1e-15)
        assert (row["selected_model"], row["deployment"]) == (model, seen["model_id"])
        assert (row["retries"], row["fallbacks"], row["inference_calls"]) == (0, 0, 1)
        assert failures[record["headers"]["x-litellm-call-id"]] == 0
    ll = summary["ll"]
    assert ll["cost_usd"] == pytest.approx(sum(s["response_cost"] for _, s, _ in by_target["ll"]), rel=1e-9)
    assert ll["tokens"]["input"] == sum(s["prompt_tokens"] for _, s, _ in by_target["ll"])
    assert ll["routing"]["model_mix"] == dict(mix) == ll["selected_models"]
    assert set(mix) <= set(PRICES) and sum(mix.values()) == 14
    assert ll["routing"]["deployments"] == {d: n for d, n in Counter(s["model_id"] for _, s, _ in by_target["ll"]).items()}
    assert (ll["routing"]["retries"], ll["routing"]["fallbacks"]) == (0, 0)

    # the fallback group: each call fell back once (an extra inference call): recorded, its cost unknown
    for record, seen, row in by_target["ll-fb"]:
        assert failures[record["headers"]["x-litellm-call-id"]] == 1          # the proxy's failed attempt
        assert (row["retries"], row["fallbacks"], row["inference_calls"]) == (0, 1, 2)
        assert row["selected_model"] == DEPLOYMENT_MODEL[seen["model_id"]] and row["cost_usd"] is None
        assert "fallback" in row["cost_unknown_reason"]
    fb = summary["ll-fb"]["routing"]
    assert (fb["fallbacks"], fb["calls_with_retries_or_fallbacks"], fb["calls_over_max_inference_calls"]) == (14, 14, 14)
    assert summary["ll-fb"]["cost_usd"] is None
    assert any("ll-fb made more inference calls than its max_inference_calls in 14" in x for x in report["limitations"])

    # planned with the default router: nothing attributed, never guessed ...
    vsr = summary["ll-vsr"]
    assert vsr["cost_usd"] is None and vsr["routing"]["model_mix"] == {} and vsr["routing"]["unattributed_calls"] == 14
    # ... until reconcile-usage re-attributes it offline from the stored headers (zero model calls)
    n_probe = len(proxy.entries())
    api.error("POST", f"/runs/{run_id}/reconcile-usage", {"routers": {"ll-vsr": "nope"}}, 400, "unknown_router")
    res = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {"routers": {"ll-vsr": "litellm"}})
    c = res                                     # the correction itself (upstream wire: a bare answer)
    assert res["model_requests"] == 0 and c["routers"] == {"ll-vsr": "litellm"}
    assert c["verified_count"] == 28 and c["changed_count"] == 0                          # ll and ll-vsr
    assert c["unverifiable_count"] == 14 + summary["ll-badkey"]["failed"]                  # fallbacks, the bad key
    again = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {"routers": {"ll-vsr": "litellm"}})
    assert again["cache_hit"] is True and again["appended"] is False
    assert len(proxy.entries()) == n_probe
    fixed = {t["target_id"]: t for t in api.ok("GET", f"/runs/{run_id}/report")["summary"]["targets"]}
    assert fixed["ll-vsr"]["cost_usd"] == pytest.approx(sum(s["response_cost"] for _, s, _ in by_target["ll-vsr"]),
                                                        rel=1e-9)
    assert fixed["ll-vsr"]["routing"]["router"] == "litellm"
    assert fixed["ll-vsr"]["routing"]["model_mix"] == dict(Counter(DEPLOYMENT_MODEL[s["model_id"]]
                                                                   for _, s, _ in by_target["ll-vsr"]))
    assert fixed["ll"]["cost_usd"] == ll["cost_usd"]
