"""The ``diagnose`` rule (issue 43): the routing diagnosis of a candidate run's routers against a baseline run's
singles, memoised like compare — its inputs are the two reports' digests (which fix every result row and call
record it reads), so asking twice is a cache hit. No model is called."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from srbench.cas import ObjectStore
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.derived import SavedReport
from srbench.stages.compare.diagnose import DIAGNOSE_VERSION, diagnose
from srbench.stages.derived.rules import CompareInputs, priced_plan
from srbench.stages.report.results import all_rows


def _headers(store: ObjectStore, call: str) -> Mapping[str, str]:
    """A stored call record's response headers (a conversation record has none of its own: empty)."""
    record = store.get_json(call)
    headers = record.get("headers") if isinstance(record, dict) else None
    return {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}


def _diagnose(store: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
    inputs = CompareInputs.model_validate(raw_inputs)
    b, c = store.get_json(inputs.baseline), store.get_json(inputs.candidate)
    bview, cview = SavedReport.model_validate(b), SavedReport.model_validate(c)
    out = diagnose(b, all_rows(store, bview.results), priced_plan(store, bview), c, all_rows(store, cview.results),
                   priced_plan(store, cview), headers_of=lambda call: _headers(store, call))
    return out.model_copy(update={"baseline_report": inputs.baseline, "candidate_report": inputs.candidate}).dump()


DIAGNOSE = Rule("diagnose", DIAGNOSE_VERSION, _diagnose)


def diagnosis(engine: Engine, baseline_report: str, candidate_report: str, subject: str) -> tuple[str, bool, str]:
    """(digest, cache hit, why) of the diagnosis of two runs' reports."""
    r = engine.build(DIAGNOSE, CompareInputs(baseline=baseline_report, candidate=candidate_report).model_dump(), {},
                     subject=subject)
    return r.output, r.hit, r.explanation
