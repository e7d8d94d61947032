"""A test client that speaks upstream's sr-bench client protocol (vllm-project/semantic-router's
`cli/sr_bench/client.py`, re-written here from its behaviour): it knows nothing of sr-bench.

- readiness: ``GET <url>/health`` (bare, not under the API prefix) with the bearer token; 401/403 is an
  authentication failure; ready means 200 and ``version == "sr-bench-1.0"``; on a loopback URL the
  answer's ``store_id`` must be the SHA-256 of the store's resolved path (else it is another store);
- requests: ``<url>/api/sr-bench/v1<path>`` with JSON bodies, never retried; an answer >= 400 raises
  with the body's ``error`` string;
- pages: ``after``/``limit`` and the answer's ``next_cursor``, until it is null;
- preparation jobs (`prepare`, as upstream's `benchmark_preparations` submits one benchmark or a
  `benchmarks` list): the POST answer's ``preparation``, then ``GET /dataset-preparations/{id}``'s
  ``preparation`` until it is neither queued nor running; failed raises with its error; the job's
  ``dataset`` is the result;
- token totals (`token_total`, the Dashboard's `tokenTotal()`);
- datasets as the Dashboard reads them through its proxy (`DashboardProxy`: its route contracts
  ``/datasets/{id}`` and ``/datasets/{id}/cases`` forward only a 64-hex id — upstream's DatasetReader
  takes ``[0-9a-f]{64}`` — anything else is its 404 ``sr-bench endpoint not found``; `datasets`,
  `dataset`, `dataset_cases` are the Dashboard's benchApi calls: the list's ``id`` taken as given,
  path-encoded);
- recovery from a file (`recover_from_file`, as upstream's ``benchmark recover --plan``): the file's
  ``parent_run_id`` must be the run; it sends ``mode``, ``plan_sha256`` and ``cells`` = the file's
  ``selected_cells`` when it has them, else its ``eligible_cells`` — whatever they hold.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlparse

import httpx

VERSION = "sr-bench-1.0"
PREFIX = "/api/sr-bench/v1"


class UpstreamError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        self.status, self.body = status, body
        super().__init__(body.get("error", f"HTTP {status}") if isinstance(body, dict) else f"HTTP {status}")


class UpstreamClient:
    def __init__(self, url: str, store: Path, token: str | None, actor: tuple[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self.store = Path(store).expanduser().resolve()
        self.headers = {"Authorization": "Bearer " + token} if token else {}
        if actor is not None:               # what the Dashboard's proxy adds for its signed-in user
            self.headers |= {"X-SR-Bench-Actor-ID": actor[0], "X-SR-Bench-Actor-Role": actor[1]}
        self.http = httpx.Client(timeout=30, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def ready(self) -> bool:
        try:
            resp = self.http.get(self.url + "/health", headers=self.headers, timeout=2)
        except httpx.TransportError:
            return False
        if resp.status_code in (401, 403):
            raise ValueError("Service authentication failed; set SR_BENCH_TOKEN")
        if resp.status_code != 200 or resp.json().get("version") != VERSION:
            return False
        if urlparse(self.url).hostname in ("127.0.0.1", "localhost") and \
                resp.json().get("store_id") != hashlib.sha256(str(self.store).encode()).hexdigest():
            raise ValueError("This URL belongs to a different sr-bench store; select its --store or a different --url")
        return True

    def request(self, method: str, path: str, body: Any = None) -> Any:
        if not self.ready():
            raise ValueError("sr-bench service is unavailable; start vllm-sr benchmark serve")
        resp = self.http.request(method, self.url + PREFIX + path, headers=self.headers, json=body)
        data = resp.json()
        if resp.status_code >= 400:
            raise UpstreamError(resp.status_code, data)
        return data

    def pages(self, path: str, kind: str, limit: int) -> list[Any]:
        """Every item of an evidence page route, following `next_cursor`."""
        items: list[Any] = []
        after: Any = 0
        while True:
            page = self.request("GET", f"{path}?after={after}&limit={limit}")
            assert page["limit"] == limit and len(page[kind]) <= limit, page
            items += page[kind]
            if page["next_cursor"] is None:
                return items
            assert len(page[kind]) == limit          # a page that says "more" is full
            after = page["next_cursor"]


def prepare(client: UpstreamClient, request: dict[str, Any], timeout: float = 120) -> Any:
    """Submit a preparation job and follow it to its dataset (upstream's CLI protocol)."""
    job = client.request("POST", "/dataset-preparations", request)["preparation"]
    if not re.fullmatch(r"prep-[0-9a-f]{32}", job["id"]):
        raise ValueError("Preparation ID must be prep- followed by 32 lowercase hexadecimal characters")
    deadline = time.monotonic() + timeout
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
        job = client.request("GET", "/dataset-preparations/" + job["id"])["preparation"]
    if job["status"] != "completed":
        raise ValueError(f"Preparation {job['id']} {job['status']}: " + (job.get("error") or "inspect it"))
    return job["dataset"]


def recover_from_file(client: UpstreamClient, run_id: str, path: Path, key: str, acknowledge: bool) -> Any:
    """Create a recovery child from a saved recovery plan file (upstream's CLI protocol)."""
    proposed = json.loads(path.read_text())
    if proposed.get("parent_run_id") != run_id:
        raise ValueError("Recovery plan belongs to another parent run")
    return client.request("POST", f"/runs/{run_id}/recover", {
        "mode": proposed["mode"], "plan_sha256": proposed["plan_sha256"],
        "cells": proposed.get("selected_cells", proposed["eligible_cells"]),
        "idempotency_key": key, "acknowledge_new_attempt": acknowledge})


def token_total(value: Any) -> int | None:
    """What upstream's Dashboard shows as a token total (its `tokenTotal`): a number, ``total_tokens``,
    or the sum of the four ``*_tokens`` buckets when all are numbers; None shows as a dash."""
    if isinstance(value, int):
        return value
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("total_tokens"), int):
        return int(value["total_tokens"])
    buckets = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    return sum(value[k] for k in buckets) if all(isinstance(value.get(k), int) for k in buckets) else None


DATASET_ID = re.compile(r"[0-9a-f]{64}")


class DashboardProxy:
    """Upstream's Dashboard in front of the service: a path naming a dataset other than by 64 hex
    digits is answered 404 by the proxy and never reaches the service."""

    def __init__(self, client: UpstreamClient) -> None:
        self.client = client
        self.forwarded: list[str] = []

    def get(self, path: str) -> Any:
        parts = path.split("?", 1)[0].strip("/").split("/")
        if parts[0] == "datasets" and len(parts) in (2, 3) and parts[1] not in ("selection", "compose"):
            if not DATASET_ID.fullmatch(parts[1]) or (len(parts) == 3 and parts[2] != "cases"):
                raise UpstreamError(404, {"error": {"message": "sr-bench endpoint not found"}})
        self.forwarded.append(path)
        return self.client.request("GET", path)


def datasets(proxy: DashboardProxy) -> list[Any]:
    return proxy.get("/datasets")["datasets"]


def dataset(proxy: DashboardProxy, dataset_id: str) -> Any:
    return proxy.get("/datasets/" + quote(dataset_id, safe=""))


def dataset_cases(proxy: DashboardProxy, dataset_id: str, **filters: Any) -> Any:
    query = urlencode({k: str(v) for k, v in filters.items() if v not in (None, "")})
    return proxy.get(f"/datasets/{quote(dataset_id, safe='')}/cases?{query}")
