"""The ``robustness`` rule (issue 43, item 4): a router's decision flip rate under deterministic prompt
perturbations, from stored preview runs only — one of the plan as it is and one per perturbation kind
(`perturbation` in the plan; stages/dispatch/perturb.py), each of which asked the router's preview endpoint only.
Memoised on the runs' report digests; no model is called and nothing is sent.

For router t, case i and perturbation k, the pair (i, k) counts when both previews completed and named a model;
it flips when the models differ (a changed decision name is counted apart). A case's flip share f_i = flips_i /
pairs_i; a benchmark's (and the overall) flip rate is the mean of f_i over its cases with a pair, with Hoeffding's
interval for a mean of values in [0, 1]: r = √(ln(2/α)/(2n)), α = 0.05 (a case's pairs share its prompt, so they
are not independent). A perturbation kind's rate is flips / pairs (one pair a case) with Wilson's interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench import VERSION
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.schemas.derived import SavedReport
from srbench.schemas.diagnosis import DiagnosedRow
from srbench.schemas.plan import Perturbation, Plan
from srbench.schemas.robustness import Flip, FlipRate, Robustness, TargetRobustness
from srbench.stages.report.results import all_rows
from srbench.stages.stats.basic import wilson

ROBUSTNESS_VERSION = "sr-bench-robustness-v1"
ALPHA = 0.05
FINISHED = ("completed", "failed")
STATISTICS = ["flip rate per benchmark and overall: the mean over cases of each case's share of flipped pairs, "
              "Hoeffding's interval for a mean of [0, 1] values at alpha 0.05",
              "flip rate per perturbation: flips / pairs (one pair a case), Wilson 95 %"]
Side = tuple[Mapping[str, object], Sequence[Mapping[str, object]], Plan]
"""A stored report, its result rows and its plan."""


class RobustnessInputs(BaseModel):
    """The rule's inputs: report digests."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    original: str
    """The unperturbed preview run's report."""
    perturbed: list[str]
    """The perturbed preview runs' reports."""


def _hoeffding(shares: list[float]) -> list[float] | None:
    if not shares:
        return None
    m, r = sum(shares) / len(shares), math.sqrt(math.log(2 / ALPHA) / (2 * len(shares)))
    return [max(0.0, m - r), min(1.0, m + r)]


Pair = tuple[str, str, Perturbation, str, str, str | None, str | None] | None
"""(case, benchmark, perturbation, original model, model, original decision, decision); None: unanswered."""


def _rate(scope: str, pairs: list[tuple[str, Perturbation, Pair]], per_case: bool) -> FlipRate:
    answered = [p for _, _, p in pairs if p is not None]
    by_case: dict[str, list[int]] = {}
    for p in answered:
        by_case.setdefault(p[0], []).append(int(p[3] != p[4]))
    shares = [sum(v) / len(v) for v in by_case.values()]
    flips = sum(int(p[3] != p[4]) for p in answered)
    rate = (sum(shares) / len(shares) if shares else None) if per_case else (flips / len(answered) if answered else None)
    return FlipRate(scope=scope, cases=len(by_case), pairs=len(answered), flips=flips,
                    decision_flips=sum(int(p[5] != p[6]) for p in answered), unanswered=len(pairs) - len(answered),
                    flip_rate=rate, ci95=_hoeffding(shares) if per_case else wilson(flips, len(answered)))


def _pairs(tid: str, original: dict[tuple[str, str], DiagnosedRow],
           perturbed: dict[Perturbation, dict[tuple[str, str], DiagnosedRow]]) -> list[tuple[str, Perturbation, Pair]]:
    """(benchmark, perturbation, pair) for every case and perturbation of router `tid`."""
    out: list[tuple[str, Perturbation, Pair]] = []
    for (case, t), row in sorted(original.items()):
        if t != tid:
            continue
        for kind, rows in sorted(perturbed.items()):
            other = rows[(case, t)]
            ok = row.state == other.state == "completed" and row.selected_model and other.selected_model
            out.append((row.benchmark, kind, (case, row.benchmark, kind, row.selected_model or "",
                                              other.selected_model or "", row.decision, other.decision) if ok else None))
    return out


def _target(tid: str, original: dict[tuple[str, str], DiagnosedRow],
            perturbed: dict[Perturbation, dict[tuple[str, str], DiagnosedRow]]) -> TargetRobustness:
    pairs = _pairs(tid, original, perturbed)
    benches, kinds = sorted({b for b, _, _ in pairs}), sorted({k for _, k, _ in pairs})
    flips = [Flip(case_id=p[0], benchmark=p[1], perturbation=p[2], original_model=p[3], model=p[4],
                  original_decision=p[5], decision=p[6]) for _, _, p in pairs if p is not None and p[3] != p[4]]
    return TargetRobustness(
        target_id=tid, overall=_rate("(all)", pairs, True),
        benchmarks=[_rate(b, [x for x in pairs if x[0] == b], True) for b in benches],
        perturbations=[_rate(k, [x for x in pairs if x[1] == k], False) for k in kinds], flips=flips)


def _checked(side: str, report: Mapping[str, object], rows: Sequence[Mapping[str, object]],
             plan: Plan) -> dict[tuple[str, str], DiagnosedRow]:
    view = ComparedReport.model_validate(report)
    if plan.mode != "preview":
        raise InvalidInput(f"robustness reads preview runs; the {side} run is a {plan.mode} run", code="not_preview")
    if view.status not in FINISHED:
        raise InvalidInput(f"the {side} preview run is {view.status}; robustness reads finished previews "
                           "(completed or failed)", code="run_not_finished")
    return {(r.case_id, r.target_id): r for r in (DiagnosedRow.model_validate(x) for x in rows)}


def measure(original: Side, perturbed: Sequence[Side]) -> Robustness:
    """The flip rates of every router of `original` (an unperturbed preview) under each perturbed preview."""
    orows = _checked("original", *original)
    oplan = original[2]
    if oplan.perturbation is not None:
        raise InvalidInput(f"the original preview is itself perturbed ({oplan.perturbation}); give the unperturbed "
                           "one first", code="not_comparable")
    by_kind: dict[Perturbation, dict[tuple[str, str], DiagnosedRow]] = {}
    runs: dict[str, str | None] = {}
    for rep, rows, plan in perturbed:
        kind = plan.perturbation
        if kind is None or kind in by_kind:
            raise InvalidInput("each perturbed preview needs its own perturbation kind (one run per kind, none "
                               "unperturbed)", code="not_comparable")
        same = (plan.case_sha256, plan.seed, [pt.target for pt in plan.targets], plan.preview_context)
        if same != (oplan.case_sha256, oplan.seed, [pt.target for pt in oplan.targets], oplan.preview_context):
            raise InvalidInput(f"the {kind} preview differs from the original in its cases, seed, targets or "
                               "preview context; perturb the same plan", code="not_comparable")
        by_kind[kind] = _checked(kind, rep, rows, plan)
        runs[kind] = ComparedReport.model_validate(rep).run_id
    if not by_kind:
        raise InvalidInput("robustness needs at least one perturbed preview run", code="not_comparable")
    routers = [pt.target.id for pt in oplan.targets]
    return Robustness(version=VERSION, robustness_version=ROBUSTNESS_VERSION,
                      original_run=ComparedReport.model_validate(original[0]).run_id, perturbed_runs=runs,
                      cases=len({c for c, _ in orows}), seed=oplan.seed,
                      targets=[_target(t, orows, by_kind) for t in routers], statistics=STATISTICS)


def _side(store: ObjectStore, digest: str) -> Side:
    rep = store.get_json(digest)
    view = SavedReport.model_validate(rep)
    return rep, all_rows(store, view.results), Plan.model_validate(store.get_json(view.provenance.plan))


def _rule(store: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
    inputs = RobustnessInputs.model_validate(raw_inputs)
    return measure(_side(store, inputs.original), [_side(store, d) for d in inputs.perturbed]).dump()


ROBUSTNESS = Rule("robustness", ROBUSTNESS_VERSION, _rule)


def robustness(engine: Engine, original: str, perturbed: list[str], subject: str) -> tuple[str, bool, str]:
    """(digest, cache hit, why) of the robustness of a preview run's routers (report digests)."""
    r = engine.build(ROBUSTNESS, RobustnessInputs(original=original, perturbed=perturbed).model_dump(), {},
                     subject=subject)
    return r.output, r.hit, r.explanation
