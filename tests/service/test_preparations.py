"""Dataset preparation jobs (issue 13, item 2): an unknown benchmark is refused before any job exists;
a job still active when the service stopped is failed on the next start, never resumed."""

from __future__ import annotations

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
