"""The stored routing diagnosis (kind ``diagnosis``, stages/compare/diagnose.py, issue 43): from two stored runs
(the singles of a baseline run, the routers of a candidate run, on the same frozen cases) the outcome matrix, its
oracles, the router's share of the headroom, RouterArena's optimality, where the router loses (regret, a routing
confusion table, the losses with their evidence) and the routing overhead. No model is called to make it. Every
figure is defined in docs/statistics.md ("Routing diagnostics")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.comparison_inputs import ComparedRow

_FROZEN = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
NONE_CORRECT = "(none correct)"
"""The confusion table's column of cases no single answered correctly."""
COST_UNKNOWN = "(cost unknown)"
"""The confusion table's column of cases whose cheapest correct single is unknown (a cost is unknown)."""
UNATTRIBUTED = "(unattributed)"
"""The confusion table's row of router calls that named no model (or several, in a conversation)."""


class DiagnosedRow(ComparedRow):
    """What the diagnosis reads of one stored result row beyond compare's view: where its evidence is."""

    cell_id: str = ""
    """The cell."""
    stratum: str | None = None
    """The case's subject or category."""
    call: str | None = None
    """Digest of its call record."""
    decision: str | None = None
    """A router's decision."""

    def served(self) -> str | None:
        """The model the router names for the cell: its call's, or the one model of every subject turn of a
        conversation (None: none named, or several)."""
        if not self.turn_routing:
            return self.selected_model
        models = {t.selected_model for t in self.turn_routing if t.has_call}
        return models.pop() if len(models) == 1 else None


class MeanInterval(BaseModel):
    """A weighted quality of 0/1 outcomes with its weighted Hoeffding interval (stages/stats/paired.py
    `weighted_mean_hoeffding`)."""

    model_config = _FROZEN
    method: str
    """``weighted-hoeffding-mean``."""
    alpha: float
    """The error level."""
    estimate: float
    """Q = Σ_b w_b·mean(x_b)."""
    radius: float
    """r = √(ln(2/α)/2 · Σ_b w_b²/n_b)."""
    ci: list[float]
    """[max(0, Q−r), min(1, Q+r)]."""
    n: int
    """Cases in all."""


class Difference(BaseModel):
    """A paired difference of weighted quality with its weighted Hoeffding interval (the claim rule REP-6's)."""

    model_config = _FROZEN
    estimate: float
    """Δ = Σ_b w_b·mean(d_b)."""
    ci: list[float]
    """Its interval at `alpha`."""
    alpha: float
    """The error level of this interval."""


class SingleCell(BaseModel):
    """One single's answer to one case."""

    model_config = _FROZEN
    target_id: str
    """The single target."""
    correct: bool
    """Completed with a correct answer (failed, cancelled, ambiguous: False)."""
    cost_usd: float | None
    """Its principal cost; None when unknown."""


class CaseOutcome(BaseModel):
    """One row of the outcome matrix: every single's outcome and the router's on one case."""

    model_config = _FROZEN
    case_id: str
    """The case."""
    benchmark: str
    """Its benchmark."""
    stratum: str | None
    """Its subject or category (the dataset's stratum), None without one."""
    singles: list[SingleCell]
    """Each single of the baseline run, in plan order."""
    oracle_correct: bool
    """Some single answered it correctly."""
    cheapest_correct: str | None
    """The single the cheapest-correct oracle sends it to: the cheapest correct one (ties: target id), the cheapest
    of all when none is correct; None when a cost it needs is unknown."""
    router_correct: bool
    """The router's answer was correct."""
    router_cost_usd: float | None
    """The router cell's principal cost; None when unknown."""
    served_model: str | None
    """The model the router says served it (None: not named, or several in a conversation)."""
    served_single: str | None
    """The single target of the baseline run with that model (None: routed elsewhere or unattributed)."""
    optimal: bool | None
    """Served by a cheapest correct single (ties count); None when no single is correct or it was served elsewhere."""


class OracleFigures(BaseModel):
    """The oracle ceiling and the cheapest-correct oracle over every compared case."""

    model_config = _FROZEN
    quality: MeanInterval
    """The oracle ceiling: weighted quality if each case went to a single that answered it correctly."""
    cases_no_single_correct: int
    """Cases no single answered correctly (the ceiling's misses)."""
    cheapest_cost_usd: float | None
    """The cheapest-correct oracle's principal cost; its accuracy is the ceiling's."""
    cheapest_cost_reason: str | None
    """Why that cost is unknown (None: known)."""
    ceiling_cost_usd: float | None = None
    """The oracle ceiling's cost when each case stays with the best single unless another single is needed (then
    the cheapest correct one): where the ceiling sits on the quality-cost plane; None when a cost is unknown."""
    cheapest_picks: dict[str, int]
    """How many cases the cheapest-correct oracle sends to each single."""
    best_single: str
    """The strongest single (compare's rule, REP-5)."""
    best_single_quality: float
    """Its weighted quality."""
    best_single_cost_usd: float | None
    """Its principal cost."""


class SingleFigures(BaseModel):
    """One single of the baseline run on the compared cases (a point of the quality-cost plane)."""

    model_config = _FROZEN
    target_id: str
    """The target."""
    model: str
    """Its model."""
    quality: float
    """Its weighted quality."""
    cost_usd: float | None
    """Its principal cost; None when unknown."""


class Headroom(BaseModel):
    """Where the router stands between the best single and the oracle."""

    model_config = _FROZEN
    available: Difference
    """Oracle − best single (the headroom), interval at α/2."""
    gained: Difference
    """Router − best single, interval at α/2."""
    gap_to_oracle: Difference
    """Oracle − router, interval at α."""
    captured_pct: float | None
    """100 · gained / available (None: no headroom)."""
    captured_ci_pct: list[float] | None
    """Its interval from the two α/2 intervals (joint 1 − α by Bonferroni); None with `reason`."""
    reason: str | None
    """Why the share or its interval is not given."""


class Optimality(BaseModel):
    """RouterArena's optimality (arXiv 2510.00202) on the cases the router served with a measured single."""

    model_config = _FROZEN
    cases_in_pool: int
    """Cases served by a model that is one of the baseline run's singles."""
    cases_elsewhere: int
    """Cases served by another model or unattributed: counted here, left out of the three figures."""
    elsewhere_models: dict[str, int]
    """Each such model (or ``(unattributed)``) and its case count."""
    elsewhere_cases: list[str]
    """Those cases' ids."""
    cases_with_correct_single: int
    """In-pool cases some single answered correctly (where a cheapest correct choice exists)."""
    optimal_selections: int
    """Of those, cases the router sent to a cheapest correct single (ties count)."""
    selection_rate: float | None
    """Optimal selection rate = optimal_selections / cases_with_correct_single."""
    selection_ci95: list[float] | None
    """Its Wilson 95 % interval."""
    router_cost_usd: float | None
    """The router's principal cost on the cases with a correct single (the sum; the ratio of these two sums is not
    RouterArena's optimal cost, which averages per case)."""
    cheapest_correct_cost_usd: float | None
    """The cheapest correct singles' cost on the same cases."""
    cost_ratio_pct: float | None
    """Optimal cost, RouterArena's: 100 · the mean over those cases of cheapest correct cost / router cost (100: as
    cheap as the cheapest correct choice on every case; above 100 where the router spent less on a model that
    failed); None when a cost it needs is unknown."""
    cost_ratio_cases: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """The cases that mean is over: those with a correct single, less those where the router's cost is 0 and the
    cheapest correct one's is not (no finite ratio; a 0 against 0 counts as 1). Absent before diagnose v4."""
    router_accuracy: float | None
    """The router's accuracy on the in-pool cases."""
    oracle_accuracy: float | None
    """The oracle's accuracy on the same cases."""
    accuracy_ratio_pct: float | None
    """Optimal accuracy = 100 · router accuracy / oracle accuracy."""


class Regret(BaseModel):
    """What the router left on the table in one benchmark, or one subject of it."""

    model_config = _FROZEN
    benchmark: str
    """The benchmark."""
    stratum: str | None
    """The subject or category (None: the whole benchmark)."""
    n: int
    """Cases."""
    router_accuracy: float
    """The router's accuracy."""
    oracle_accuracy: float
    """The oracle ceiling's accuracy."""
    quality_points: float
    """100 · (oracle − router accuracy)."""
    router_cost_usd: float | None
    """The router's principal cost."""
    cheapest_correct_cost_usd: float | None
    """The cheapest-correct oracle's cost."""
    dollars: float | None
    """Router cost − cheapest-correct oracle cost."""


class ConfusionCell(BaseModel):
    """How often the router served `served` where `cheapest_correct` was the cheapest correct model."""

    model_config = _FROZEN
    served: str
    """The model served (``(unattributed)``: none named)."""
    cheapest_correct: str
    """The cheapest correct single's model (``(none correct)``: no single was)."""
    cases: int
    """Cases."""


class AnswerEvidence(BaseModel):
    """Where one answer is stored: `sr-bench show RUN --call-id CELL` prints it."""

    model_config = _FROZEN
    run_id: str | None
    """The run."""
    cell_id: str
    """The cell (its subject call)."""
    call: str | None
    """Digest of its call record."""
    target_id: str
    """The target."""
    model: str | None
    """The model that answered."""
    correct: bool
    """Its verdict."""
    cost_usd: float | None
    """Its principal cost."""


class Loss(BaseModel):
    """A case the served model failed where a cheaper or equally priced single succeeded."""

    model_config = _FROZEN
    case_id: str
    """The case."""
    benchmark: str
    """Its benchmark."""
    stratum: str | None
    """Its subject or category."""
    router: AnswerEvidence
    """The router's answer."""
    decision: str | None
    """The router's decision (x-vsr-selected-decision or its adapter's reading)."""
    headers: dict[str, str]
    """The routing headers of the router's response (x-…, as stored, credentials masked)."""
    single: AnswerEvidence
    """The cheapest single that answered correctly."""


class Overhead(BaseModel):
    """Router minus the same model called directly, paired on the same cases (seconds)."""

    model_config = _FROZEN
    pairs: int
    """Cases both answered (completed) with the figure known."""
    p50_s: float | None
    """Median of the paired differences."""
    p95_s: float | None
    """95th percentile of the paired differences."""
    router_p50_s: float | None
    """The router's median on those cases."""
    direct_p50_s: float | None
    """The direct calls' median on those cases."""


class RouterDiagnosis(BaseModel):
    """One router target of the candidate run against the baseline run's singles."""

    model_config = _FROZEN
    target_id: str
    """The router target."""
    quality: float
    """Its weighted quality."""
    cost_usd: float | None
    """Its principal cost."""
    headroom: Headroom
    """Its place between the best single and the oracle."""
    optimality: Optimality
    """RouterArena's optimality."""
    regret: list[Regret]
    """Per benchmark (stratum None), then per subject where the dataset names one."""
    confusion: list[ConfusionCell]
    """Model served × cheapest correct model."""
    losses: list[Loss]
    """Cases the served model failed and a cheaper or equally priced single succeeded."""
    losses_cost_unknown: int
    """Failed cases where some single succeeded but a cost needed to say which was cheaper is unknown."""
    ttft: Overhead
    """Time to first token overhead."""
    latency: Overhead
    """Total latency overhead."""
    cases: list[CaseOutcome]
    """The outcome matrix."""


class Diagnosis(BaseModel):
    """The routing diagnosis of a candidate run's routers against a baseline run's singles (issue 43)."""

    model_config = _FROZEN
    kind: Literal["diagnosis"] = "diagnosis"
    """Always ``diagnosis``."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """Its schema version."""
    version: str
    """The sr-bench that made it."""
    diagnose_version: str
    """The rule's version."""
    baseline_run: str | None
    """The run whose singles are the matrix's columns."""
    candidate_run: str | None
    """The run whose routers are diagnosed."""
    baseline_report: str | None = None
    """Digest of the baseline run's report."""
    candidate_report: str | None = None
    """Digest of the candidate run's report."""
    cases: int
    """Compared cases (both runs measured every target on them)."""
    benchmark_weights: dict[str, float]
    """The benchmarks' weights (weighted quality)."""
    singles: list[SingleFigures]
    """The baseline run's singles."""
    oracle: OracleFigures
    """The oracles."""
    routers: list[RouterDiagnosis]
    """Each router of the candidate run."""
    statistics: list[str]
    """Which rule gives each interval (docs/statistics.md)."""

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON."""
        return self.model_dump(mode="json", by_alias=True)
