"""DC-4: a report's content_digest covers its per-cell rows (not only the summary), without the fields
two stores may disagree on (stages/plan/identity.py)."""

from __future__ import annotations

from srbench.stages.plan.identity import content_digest
from srbench.stages.report.results import all_rows

from .helpers import freeze, manifest, single


def test_the_content_digest_covers_the_rows(api, prepare, sim, service) -> None:
    ds = prepare("mmlu-pro", limit=4)
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    report = api.ok("GET", f"/runs/{run_id}/report")
    stored = service.service.objects.get_json(report["report_digest"])
    rows = all_rows(service.service.objects, stored["results"])
    assert len(rows) == 4
    body = {k: v for k, v in stored.items() if k != "content_digest"}
    assert content_digest(body | {"rows": rows}) == report["content_digest"]
    rows[0] = {**rows[0], "correct": not rows[0]["correct"]}          # one answer graded otherwise
    assert content_digest(body | {"rows": rows}) != report["content_digest"]
