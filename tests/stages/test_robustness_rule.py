"""The robustness rule (issue 43, item 4) on hand-computed previews, and the perturbations themselves."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
from tests.stages.test_compare import CASES, plan, report, target

from srbench.errors import InvalidInput
from srbench.schemas.plan import Plan
from srbench.stages.derived.replay import ReplayRefused, check_runs
from srbench.stages.derived.robustness import measure
from srbench.stages.dispatch.perturb import PREAMBLE, perturb_messages, perturb_text
from srbench.stages.stats.basic import wilson

ORIGINAL = {"m1": "A", "m2": "A", "g1": "B", "g2": "B"}
PERTURBED = {"case": {"m1": "A", "m2": "B", "g1": "B", "g2": "B"},        # m2 flips
             "typo": {"m1": "B", "m2": "A", "g1": "B", "g2": None}}       # m1 flips; g2's preview failed


def _side(models: dict[str, str | None], kind: str | None) -> tuple[Any, ...]:
    p = plan([{**target("mom", "mom"), "preview_url": "http://127.0.0.1:9/preview"}])
    p.update(mode="preview", plan_sha256=f"plan-{kind}")
    if kind:
        p["perturbation"] = kind
    rows = [{"cell_id": f"{c}:mom", "case_id": c, "target_id": "mom", "benchmark": b,
             "state": "completed" if models[c] else "failed", "selected_model": models[c],
             "decision": models[c] and models[c] + "-d"} for c, b in CASES.items()]
    return report(p, run_id=f"run-{kind}"), rows, Plan.model_validate(p)


def test_flip_rates_by_hand() -> None:
    out = measure(_side(ORIGINAL, None), [_side(m, k) for k, m in PERTURBED.items()])
    (t,) = out.targets
    # per case: m1 ½, m2 ½, g1 0, g2 0 (its one answered pair) → 0.25 over 4 cases; 7 pairs, 2 flips, 1 unanswered
    o = t.overall
    assert (o.cases, o.pairs, o.flips, o.decision_flips, o.unanswered) == (4, 7, 2, 2, 1)
    r = math.sqrt(math.log(40) / 8)
    assert o.flip_rate == pytest.approx(0.25) and o.ci95 == pytest.approx([0.0, 0.25 + r])
    by = {b.scope: b for b in t.benchmarks}
    assert by["mmlu-pro"].flip_rate == pytest.approx(0.5) and by["gpqa-diamond"].flip_rate == 0.0
    assert by["gpqa-diamond"].ci95 == pytest.approx([0.0, math.sqrt(math.log(40) / 4)])
    kinds = {k.scope: k for k in t.perturbations}
    assert (kinds["case"].pairs, kinds["case"].flips, kinds["case"].ci95) == (4, 1, wilson(1, 4))
    assert (kinds["typo"].pairs, kinds["typo"].flips, kinds["typo"].unanswered) == (3, 1, 1)
    assert kinds["typo"].flip_rate == pytest.approx(1 / 3)
    assert [(f.case_id, f.perturbation, f.original_model, f.model) for f in t.flips] == \
        [("m1", "typo", "A", "B"), ("m2", "case", "A", "B")]
    assert out.perturbed_runs == {"case": "run-case", "typo": "run-typo"} and out.original_run == "run-None"


def test_previews_of_another_plan_or_kind_are_refused() -> None:
    with pytest.raises(InvalidInput, match="itself perturbed"):
        measure(_side(ORIGINAL, "case"), [_side(ORIGINAL, "typo")])
    with pytest.raises(InvalidInput, match="its own perturbation kind"):
        measure(_side(ORIGINAL, None), [_side(ORIGINAL, "case"), _side(ORIGINAL, "case")])
    other = _side(ORIGINAL, "typo")
    moved = Plan.model_validate({**other[2].model_dump(mode="json", by_alias=True), "seed": 2})
    with pytest.raises(InvalidInput, match="perturb the same plan"):
        measure(_side(ORIGINAL, None), [(other[0], other[1], moved)])


def test_each_perturbation_is_deterministic_and_documented() -> None:
    text = "What is the boiling point of water? Answer with one letter. Options follow."
    assert perturb_text(text, "case", 1, "c") == text.lower()
    assert perturb_text(text, "punctuation", 1, "c") == "What is the boiling point of water Answer with one letter Options follow"
    assert perturb_text(text, "preamble", 1, "c") == PREAMBLE + "\n\n" + text
    ws = perturb_text(text, "whitespace", 1, "c")
    assert ws.startswith("\n") and ws.endswith("\n") and ws.split() == text.split() and "  " in ws
    typo = perturb_text(text, "typo", 1, "c")
    diff = [i for i, (a, b) in enumerate(zip(text, typo, strict=True)) if a != b]
    assert len(diff) == 2 and diff[1] == diff[0] + 1 and sorted(text) == sorted(typo)
    for kind in ("whitespace", "typo"):
        assert perturb_text(text, kind, 1, "c") == perturb_text(text, kind, 1, "c")     # seeded: the same twice
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]
    out = perturb_messages(msgs, "case", 1, "c")
    assert out[0] == msgs[0] and out[1]["content"] == text.lower() and msgs[1]["content"] == text   # a copy
    assert perturb_messages(msgs, None, 1, "c") is msgs


def test_a_perturbed_preview_is_never_replayed() -> None:
    live = Plan.model_validate(plan([target("small")]))
    run = SimpleNamespace(id="r", status="completed", mode="preview")
    with pytest.raises(ReplayRefused, match="perturbed_preview") as exc:
        check_runs(SimpleNamespace(id="b", status="completed", mode="live"), live, run, _side(ORIGINAL, "typo")[2])
    assert exc.value.details["reasons"] == ["perturbed_preview"]
