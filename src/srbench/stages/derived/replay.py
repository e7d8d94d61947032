"""Replay (IT-4): reuse saved single-model answers along previewed routes — a diagnostic estimate.

Pure: from the baseline run (plan + cells) and the preview run (plan + cells + routing records) it
either refuses with explicit reason codes or returns the cells of a replay run, each pointing at a
replay record that copies the baseline answer (`replayed_from`). No model is ever called; anything
that would need one — plugins, state-dependent (learning) selection, an unresolved route, a model
the baseline did not run, a missing or incomplete saved answer — refuses the replay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks import multi_call_benchmarks
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.cell import CellState
from srbench.schemas.plan import Plan
from srbench.schemas.replay import Replay, ReplayCell, ReplayReceipt
from srbench.stages.derived.facts import CellFacts, RunFacts

REPLAYABLE_METHODS = ("static", "single", "route_action")
RECEIPT_VERSION = "sr-bench-replay-compatibility-v1"


_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class CellView(BaseModel):
    """A run's cell as the replay rule reads it from its inputs (`_cell_view`)."""

    model_config = _FROZEN
    cell_id: str
    """The cell."""
    seq: int
    """Its position in the run."""
    case_id: str
    """The case."""
    target_id: str
    """The target."""
    state: CellState
    """The cell's state."""
    request: str | None
    """Digest of its request object."""
    call: str | None
    """Digest of its call record."""
    judge_call: str | None
    """Digest of its judge call record."""


class ReplayChoice(BaseModel):
    """A preview cell and the baseline cell whose saved answer it reuses (`replay_cells`)."""

    model_config = _FROZEN
    cell: CellView
    """The preview cell."""
    baseline_cell: CellView
    """The baseline cell whose answer is reused."""
    model: str
    """The model the previewed route selected."""
    routing: dict[str, JsonValue]
    """The preview record's routing (the router's own payload, as its call record holds it)."""


CellTuple = tuple[int, str, str, CellState, str | None, str | None, str | None]
"""A cell as the rule's inputs hold it: (seq, case, target, state, request, call, judge call)."""


class ReplayInputs(BaseModel):
    """The ``replay`` rule's inputs: both runs' plans and cells."""

    model_config = _FROZEN
    baseline_plan: str
    """Digest of the baseline run's frozen plan."""
    preview_plan: str
    """Digest of the preview run's frozen plan."""
    baseline_cells: dict[str, CellTuple]
    """The baseline run's cells by id."""
    preview_cells: dict[str, CellTuple]
    """The preview run's cells by id."""


class ReplayParams(BaseModel):
    """The ``replay`` rule's params."""

    model_config = _FROZEN
    baseline_run: str
    """The baseline run."""
    preview_run: str
    """The preview run."""


class ReplayRefused(InvalidInput):
    code = "replay_ineligible"


def _refuse(reason: str, detail: str) -> ReplayRefused:
    return ReplayRefused(f"replay refused ({reason}): {detail}",
                         details={"reasons": [reason], "model_requests": 0, "dispatch_started": False})


def check_runs(baseline: RunFacts, bplan: Plan, preview: RunFacts, pplan: Plan) -> None:
    if baseline.status != "completed" or bplan.mode != "live":
        raise _refuse("baseline_not_completed", f"{baseline.id} must be a completed live run")
    if preview.status != "completed" or pplan.mode != "preview":
        raise _refuse("preview_not_completed", f"{preview.id} must be a completed preview run")
    if pplan.perturbation is not None:
        raise _refuse("perturbed_preview", f"{preview.id} previewed {pplan.perturbation}-perturbed prompts (a "
                      "robustness preview); the saved answers are to the prompts as they are: replay an unperturbed one")
    if bplan.case_sha256 != pplan.case_sha256:
        raise _refuse("case_set_mismatch", "the baseline and the preview ran different datasets")
    if bplan.adapter_versions != pplan.adapter_versions:
        raise _refuse("protocol_mismatch", "adapter_versions differ between the runs")
    if bplan.benchmark_weights != pplan.benchmark_weights:
        raise _refuse("protocol_mismatch", "benchmark_weights differ between the runs")

    multi = sorted(multi_call_benchmarks(bplan)) if bplan.mode == "live" else []
    if multi:   # a router picks a model per turn of a conversation: a saved single answer cannot stand in
        raise _refuse("multi_call", f"{', '.join(multi)} cells are conversations of several calls; replay reuses "
                                    "single-call answers only")
    models = Counter(pt.target.model for pt in bplan.targets if pt.target.kind == "single")
    dupes = sorted(m for m, n in models.items() if n > 1)
    if dupes:
        raise _refuse("ambiguous_baseline_model", f"model(s) {', '.join(dupes)} appear in several baseline targets")


def route_blocker(routing: Mapping[str, JsonValue]) -> str | None:
    """Why a previewed route cannot be replayed from saved answers whatever the baseline (it needs a
    real run), or None: an unresolved selection, learning-dependent state, plugins, a method that is
    not deterministic."""
    if routing.get("selection_status") != "selected" or not routing.get("selected_model"):
        return "selection_not_resolved"
    if routing.get("state_dependent"):
        return "learning_dependent"
    if routing.get("plugins"):
        return "decision_plugins"
    if routing.get("selection_method") not in REPLAYABLE_METHODS:
        return "route_not_deterministic"
    return None


def replay_cells(bplan: Plan, bcells: list[CellView], pplan: Plan,
                 pcells: list[CellView], routing: dict[str, dict[str, JsonValue]]) -> list[ReplayChoice]:
    """Per preview cell: the baseline cell whose answer is reused. `routing[cell_id]` is the
    preview record's routing. Raises ReplayRefused listing every rejected cell's reason."""
    singles = {pt.target.model: pt for pt in bplan.targets if pt.target.kind == "single"}
    by_case_target = {(c.case_id, c.target_id): c for c in bcells}
    moms = {pt.target.id: pt for pt in pplan.targets}
    out, rejected = [], []
    for cell in sorted(pcells, key=lambda c: c.seq):
        reason, r = None, routing.get(cell.cell_id) or {}
        model = r.get("selected_model")
        if cell.state != "completed":
            reason = "preview_incomplete"
        elif route_blocker(r):
            reason = route_blocker(r)
        elif not isinstance(model, str) or model not in singles:
            reason = "model_not_in_baseline"
        else:
            base = singles[model]
            if not moms[cell.target_id].effective_params.same(base.effective_params):
                reason = "params_mismatch"
            else:
                saved = by_case_target.get((cell.case_id, base.target.id))
                if saved is None or saved.state != "completed" or not saved.call:
                    reason = "saved_generation_incomplete"
                else:
                    out.append(ReplayChoice(cell=cell, baseline_cell=saved, model=model, routing=r))
        if reason:
            rejected.append((reason, cell.case_id))
    if rejected:
        counts = Counter(reason for reason, _ in rejected)
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        raise _refuse(rejected[0][0], f"{len(rejected)} cell(s) cannot be replayed ({summary}); "
                      f"first: {rejected[0][1]}")
    return out


def replay_record(base_record: dict[str, JsonValue], base_digest: str,
                  routing: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """The replayed call: the saved answer (its stored JSON, copied as it is), attributed to the previewed
    route, marked as reused."""
    rec = dict(base_record)
    saved = rec.get("headers")
    headers: dict[str, JsonValue] = dict(saved) if isinstance(saved, dict) else {}
    headers.update({"x-vsr-selected-model": routing["selected_model"], "x-vsr-inference-call-count": "1"})
    if routing.get("decision"):
        headers["x-vsr-selected-decision"] = str(routing["decision"])
    rec.update(headers=headers, replayed_from=base_digest)
    return rec


def receipt(baseline_id: str, preview_id: str, bplan: Plan, pplan: Plan, n: int) -> ReplayReceipt:
    return ReplayReceipt(version=RECEIPT_VERSION, baseline_run=baseline_id, preview_run=preview_id,
                         baseline_plan_sha256=bplan.plan_sha256, preview_plan_sha256=pplan.plan_sha256,
                         case_sha256=bplan.case_sha256, cells=n)


def _cell_view(c: CellFacts) -> CellTuple:
    """The cell as the rule's inputs hold it (a list in JSON, so the action-cache key is the one of before)."""
    return (c.seq, c.case_id, c.target_id, c.state, c.request, c.call, c.judge_call)


def _from_view(cell_id: str, v: CellTuple) -> CellView:
    return CellView(cell_id=cell_id, seq=v[0], case_id=v[1], target_id=v[2], state=v[3], request=v[4], call=v[5],
                    judge_call=v[6])


def _replay_rule(store: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
    inputs, params = ReplayInputs.model_validate(raw_inputs), ReplayParams.model_validate(raw_params)
    bplan = Plan.model_validate(store.get_json(inputs.baseline_plan))
    pplan = Plan.model_validate(store.get_json(inputs.preview_plan))
    bcells = [_from_view(k, v) for k, v in inputs.baseline_cells.items()]
    pcells = [_from_view(k, v) for k, v in inputs.preview_cells.items()]
    routing = {c.cell_id: (store.get_json(c.call).get("routing") or {}) for c in pcells if c.call}
    cells = []
    for item in replay_cells(bplan, bcells, pplan, pcells, routing):
        saved = item.baseline_cell
        assert saved.call is not None         # replay_cells chose a completed cell with a call
        record = replay_record(store.get_json(saved.call), saved.call, item.routing)
        cells.append(ReplayCell(case_id=item.cell.case_id, target_id=item.cell.target_id, request=saved.request,
                                call=store.put_json(record), judge_call=saved.judge_call))
    replay = Replay(receipt=receipt(params.baseline_run, params.preview_run, bplan, pplan, len(cells)),
                    cells=cells)
    return replay.model_dump(mode="json", by_alias=True)


REPLAY = Rule("replay", RECEIPT_VERSION, _replay_rule)


def build_replay(engine: Engine, baseline: RunFacts, bcells: Sequence[CellFacts], preview: RunFacts,
                 pcells: Sequence[CellFacts]) -> tuple[str, bool, str]:
    """The replay as a memoised rule over both runs' plans and cells: (digest, cache hit, explain)."""
    inputs = ReplayInputs(baseline_plan=baseline.plan, preview_plan=preview.plan,
                          baseline_cells={c.cell_id: _cell_view(c) for c in bcells},
                          preview_cells={c.cell_id: _cell_view(c) for c in pcells})
    params = ReplayParams(baseline_run=baseline.id, preview_run=preview.id)
    r = engine.build(REPLAY, inputs.model_dump(mode="json"), params.model_dump(), subject=f"{baseline.id}..{preview.id}")
    return r.output, r.hit, r.explanation
