"""Dataset preparation jobs (issue 13, item 2): an unknown benchmark is refused before any job exists;
a job still active when the service stopped is failed on the next start, never resumed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from srbench.client.embedded import EmbeddedService

from .helpers import Api


def test_a_job_left_running_fails_on_restart(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    for name in ("SR_BENCH_OBJECTS_URL", "SR_BENCH_URL", "SR_BENCH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    job = {"id": "prep-" + "a" * 32, "benchmark": "arc-agi-2", "profile": "smoke", "seed": 1,
           "request": {"benchmark": "arc-agi-2", "profile": "smoke", "seed": 1}, "status": "running",
           "phase": "downloading", "created_at": "2026-01-01T00:00:00+00:00",
           "updated_at": "2026-01-01T00:00:00+00:00", "owner": "local"}
    with EmbeddedService(tmp_path / "store") as svc:
        api = Api(svc.url, svc.token)
        assert api.error("POST", "/dataset-preparations", {"benchmark": "no-such"}, 400)
        assert api.ok("GET", "/dataset-preparations") == {"preparations": []}
        svc.service.journal.set_ref_sync("preparation", job["id"], job)       # as a stopped service left it
        api.close()
    with EmbeddedService(tmp_path / "store") as svc:
        api = Api(svc.url, svc.token)
        got = api.ok("GET", f"/dataset-preparations/{job['id']}")["preparation"]
        assert got["status"] == "failed" and "Retry explicitly" in got["error"] and got["updated_at"] > job["updated_at"]
        options = api.ok("GET", "/dataset-preparations/options")["benchmarks"]
        arc = next(b for b in options if b["id"] == "arc-agi-2")
        assert arc["profiles"] == {"smoke": 2, "quick": 12, "standard": 80}
        api.close()


def _finished(api: Api, job: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while job["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
        job = api.ok("GET", f"/dataset-preparations/{job['id']}")["preparation"]
    return job


def test_a_job_is_stored_with_its_own_keys_and_answered_by_64_hex_ids(tmp_path: Path, monkeypatch: Any) -> None:
    """The journal row of a job keeps exactly the keys it was given or updated with (issue 26: the row as
    the dict code wrote it), its dataset by ref; the answer has the same keys, the dataset by 64-hex id."""
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    for name in ("SR_BENCH_OBJECTS_URL", "SR_BENCH_URL", "SR_BENCH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    common = {"id", "profile", "seed", "source", "request", "status", "phase", "created_at", "updated_at", "owner",
              "dataset"}
    with EmbeddedService(tmp_path / "store") as svc:
        api = Api(svc.url, svc.token)
        for body, keys in (({"benchmark": "arc-agi-2", "profile": "smoke", "seed": 1, "source": "mirror"},
                            common | {"benchmark"}),
                           ({"benchmarks": ["arc-agi-2"], "profile": "quick", "seed": 1, "source": "mirror"},
                            common | {"benchmarks", "items"})):
            job = _finished(api, api.ok("POST", "/dataset-preparations", body)["preparation"])
            row = svc.service.journal.get_ref("preparation", job["id"])
            assert job["status"] == "completed" and set(row) == set(job) == keys
            assert row["request"] == body and {k: row[k] for k in body} == body
            ref = row["dataset"]["id"]
            assert row["dataset"] == svc.service.journal.get_ref("dataset", ref)
            assert job["dataset"]["ref"] == ref and len(job["dataset"]["id"]) == 64
            assert {k: v for k, v in job["dataset"].items() if k not in ("id", "ref")} == {
                k: v for k, v in row["dataset"].items() if k != "id"}
            for item, stored in zip(job.get("items", []), row.get("items", []), strict=True):
                assert set(item) == set(stored) == {"benchmark", "status", "phase", "reused", "source_ids"}
                assert stored["source_ids"][0].startswith("ds-") and len(item["source_ids"][0]) == 64
        api.close()
