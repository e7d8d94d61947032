"""The report rule (issue 26, item 6): one rule of the rules engine, like every other pure stage.

Its inputs are digests (the plan, the run's cells or the object holding them, a price correction, a
usage correction) and its params one `ReportParams` (the run's status, wall time, probes, early stop
and recipes, and the installed grading code: schemas/report_params.py). A build takes one `ReportRequest` (service/runs/manager.py
builds it from the run's journal rows). `ReportParams` dumps to the params as they were when they
travelled as a tuple and a dict, so no action-cache key changed when they became a model.

One version, `REPORT_RULE_VERSION`, covers all of the rule's caches, each a key made the rule's way
(`rule_key`: name, version, inputs, params):
- the action cache: the rule key itself;
- the run's report head (service/journal `report_heads`): `report_signature`, the rule key with the
  cells replaced by the journal's count of their writes, so a head answers without reading a cell;
- the row memo (service/runs/report_rows.py): the rule's input cache, rows built as the run's cells
  finished, under `row_context` — the rule key of what every row reads (plan, corrections, grading
  code), without the cells and the summary params. A hit is the row a cold build computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

from srbench.benchmarks import every_benchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.cas import ObjectStore
from srbench.cas.digest import JSONValue
from srbench.rules import Engine, Rule, RuleInputs, RuleParams, rule_key
from srbench.schemas.report_params import GradingCode, ReportDigests, ReportParams, ReportRequest
from srbench.stages.report.build import TargetRows, build
from srbench.stages.report.cells import RowMemo
from srbench.stages.report.stream import RowSpill

RULE_NAME = "report"
REPORT_RULE_VERSION = "23"    # 9: results as pages (stages/report/results.py); 10: the full score; 11: content_digest covers the rows;
# 12: router recipes (UI-7), preview rows say whether a selection needs a real run, per-benchmark paired intervals;
# 13: a MoM target's `decisions` histogram (the router's x-vsr-selected-decision; upstream's report has it);
# 14 (issue 27): per-role counts over every cell, trial errors counted, turns in the model mix, `partial` and
# accuracy over answered cells, the partial paired figure of a run that ended without every answer;
# 15: a replay's per-role counts are 0 (no model was called), its tokens per role estimated_tokens_by_role;
# 16: known_spend_usd adds the known part of a target whose cost is incomplete (a cancelled run said 0);
# 17 (issue 41): the in-run paired section's standing is compare's (formal only on pinned, checked sources);
# 18 (issue 43): an adjusted claim's claims_by_rule says `intervals: unadjusted`;
# 19 (issue 43, item 7): the paired planning of a new plan's claim (stats/power.py, singles=K) predicts the simulation;
# 20 (issue 43, item 7): that planning takes the wealth's moments, a jump-scaled crossing share and uneven bets;
# 21 (issue 43, item 7): its K step takes the router as the common control of the K claims (stats/singles.py);
# 22 (issue 43, item 7): an inconclusive in-run paired claim of a new plan is also sized per benchmark;
# 23 (issue 43, item 7): that planning's earlier-prefix share ρ(J, D) (stats/power.py), its K step's bar by Newton;
# since issue 26 this one version covers the rule, its report heads and its row memo (whose rows had their own, 3).
# Bump it when the report or one of its rows (stages/report/cells.py `cell_row`) changes.
CODE_PARAMS = ("grader_versions", "judge_templates", "published_rules")
ROW_INPUTS = ("plan", "prices", "correction")


def installed_code() -> GradingCode:
    """The installed grading code a report depends on: grader versions, judge templates, published rules."""
    installed = every_benchmark()          # the nine and the installed plugins
    return GradingCode(grader_versions={b.id: b.grader_version for b in installed},
                       judge_templates={b.id: {g: b.template_sha256_for(g) for g in b.judge_graders}
                                        for b in installed if isinstance(b, JudgedBenchmark)},
                       published_rules={b.id: b.published_rule for b in installed})


def report_params(request: ReportRequest) -> ReportParams:
    return ReportParams(run_id=request.run_id, status=request.status, wall_time_s=request.wall_time_s,
                        early_stop=request.early_stop, config_probes=request.config_probes or {},
                        recipes=request.recipes or {},
                        correction_at=request.correction_at if request.correction else None,
                        **installed_code().model_dump())


def report_inputs(request: ReportRequest, cells: JSONValue) -> RuleInputs:
    """The rule's inputs: its digests (ReportDigests, an absent correction left out) and `cells` (the cells
    map, the digest of an object holding it, or a version)."""
    digests = ReportDigests(plan=request.plan, correction=request.correction, prices=request.price_correction)
    return digests.model_dump(exclude_none=True) | {"cells": cells}


def _unbound(store: ObjectStore, inputs: RuleInputs, params: RuleParams) -> Any:
    raise RuntimeError("the report rule is bound to an engine by make_report_rule")


def _key_rule() -> Rule:
    """The rule's name and version, for its keys."""
    return Rule(RULE_NAME, REPORT_RULE_VERSION, _unbound)


def make_report_rule(engine: Engine, memo: RowMemo | None = None, observe: TargetRows | None = None) -> Rule:
    """`memo`: the rule's input cache, rows built before the report (the output is the same without it);
    `observe`: told each target's rows when the rule runs (not on a cache hit)."""
    def _report(store: ObjectStore, inputs: RuleInputs, params: RuleParams) -> dict[str, JsonValue]:
        p = ReportParams.model_validate(params)
        ctx = row_context(inputs, {k: params[k] for k in CODE_PARAMS})
        spill = RowSpill()
        try:
            return build(engine, store, inputs, p, spill, ctx, memo, observe)
        finally:
            spill.close()

    return Rule(RULE_NAME, REPORT_RULE_VERSION, _report)


def row_context(inputs: Mapping[str, object], code: RuleParams | None = None) -> str:
    """The key of the rule's row cache: what every row of a report depends on beyond its cell — the
    plan, the price and usage corrections (`inputs`: the rule's) and the grading code (`code`:
    its CODE_PARAMS, default the installed ones)."""
    digests = ReportDigests.of(inputs)
    return rule_key(_key_rule(), {k: getattr(digests, k) for k in ROW_INPUTS},
                    installed_code().model_dump() if code is None else code)


def report_signature(request: ReportRequest, cells_version: int) -> tuple[str, str]:
    """(report signature, results signature): the rule key with the cells replaced by an exact version
    of them (the journal counts every write of a run's cells). Equal signatures mean the same rule
    key, so a report built under one serves the other without reading a cell; the results signature
    leaves out what only the summary depends on (status, wall time, probes)."""
    inputs = report_inputs(request, {"version": cells_version})
    params = report_params(request).model_dump()
    rows_only = {k: params[k] for k in ("run_id", *CODE_PARAMS)}
    return rule_key(_key_rule(), inputs, params), rule_key(_key_rule(), inputs, rows_only)


def build_report(engine: Engine, request: ReportRequest, cells: dict[str, list[Any]] | str,
                 memo: RowMemo | None = None, observe: TargetRows | None = None) -> tuple[str, bool, str]:
    """Returns (report digest, cache hit, explanation). `cells` is the cells map itself or the digest
    of an object holding it (a finished run's: the rule key, the action cache and --explain then hold
    one digest, not every cell). `memo` holds rows built as the run's cells finished
    (service/runs/report_rows.py): the build reads them instead of every call and grade, and computes
    the rest; the report is the same either way."""
    r = engine.build(make_report_rule(engine, memo, observe), report_inputs(request, cells),
                     report_params(request).model_dump(), subject=request.run_id)
    return r.output, r.hit, r.explanation
