"""The offline regrade and the training export are pydantic models (issue 26, item 1): the stored
objects validate against them and serialise back to the same canonical bytes."""

from __future__ import annotations

from srbench.cas import canonical_json
from srbench.schemas.derived import (
    Export,
    ExportAnswer,
    ExportCase,
    OfflineRegrade,
    RegradeBenchmark,
    RegradeRow,
)

from .test_regrade_export import _run


def test_regrade_and_export_are_their_models(api, sim, prepare, service) -> None:
    run_id = _run(api, sim, prepare("mmlu-pro"))
    for path, model in (("regrade", OfflineRegrade), ("export", Export)):
        got = api.ok("POST", f"/runs/{run_id}/{path}", {})
        stored = service.service.objects.get_json(got["digest"])
        again = model.model_validate(stored).model_dump(mode="json", by_alias=True)
        assert canonical_json(again) == canonical_json(stored)
    for m in (OfflineRegrade, RegradeRow, RegradeBenchmark, Export, ExportCase, ExportAnswer):
        assert not [n for n, f in m.model_fields.items() if not f.description], m.__name__
