"""What was declared before the run decides what a comparison may claim (REP-7).

The manifest's ``statistics`` block (frozen into the plan) may declare the non-inferiority
``margin`` and the ``primary_benchmarks``:

- Margin. `resolve_margin`: compare uses the candidate plan's declared margin; a margin given to
  compare as well must equal it (else ``margin_conflict``). A margin given *only* at compare time
  was chosen after the results existed: `apply_declared` labels it ``post hoc`` and never lets it
  yield a non-inferiority verdict (the interval's answer is kept as ``post_hoc_non_inferior``).
- Primary benchmarks. The formal claim is about the declared primary set; the other benchmarks are
  secondary (exploratory). For each candidate, ``primary`` gives the weighted paired difference over
  the primary benchmarks only, with the weights renormalised over them, and its Hoeffding interval
  from the per-benchmark figures (Δ_P = Σ_{b∈P} w_b·Δ_b, r_P = √(2·ln(2/α)·Σ_{b∈P} w_b²/n_b),
  CI = [max(−1, Δ_P − r_P), min(1, Δ_P + r_P)]), its claim, and its non-inferiority verdict against
  the declared margin (formal holdout only). When the plan's claim rule is `betting`, the betting
  interval over the primary benchmarks' cases (`claims.assess`: `primary_betting`) makes that claim
  and verdict instead, the Hoeffding one kept beside it as `hoeffding_interval`. When the baseline was
  chosen among K > 1 singles and the plan adjusts for it, the claim rule's selection-adjusted interval
  over the primary benchmarks (`claims.assess`: `primary_adjusted`) makes them, the plain one kept as
  `unadjusted_interval`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from srbench.cas.digest import stored_number
from srbench.errors import InvalidInput
from srbench.schemas.comparison import Candidate, Comparison
from srbench.schemas.comparison_claims import (
    NonInferiority,
    PrimaryClaim,
    PrimaryHoeffding,
    PrimaryInterval,
    Rule,
)
from srbench.schemas.plan import Statistics
from srbench.stages.stats.paired import claim, non_inferiority

DECLARED, POST_HOC = "declared in the plan", "post hoc (given only at compare time)"


def resolve_margin(given: float | None, declared_block: Statistics | None) -> tuple[float | None, str | None]:
    """(margin compare uses, where it comes from), given the candidate plan's statistics block."""
    declared = declared_block.margin if declared_block is not None else None
    if declared is not None:
        if given is not None and float(given) != float(declared):
            raise InvalidInput(f"the candidate plan declared the non-inferiority margin {stored_number(declared)} in "
                               "advance; "
                               f"compare cannot use {given} (REP-7)", code="margin_conflict")
        return float(declared), DECLARED
    return (None, None) if given is None else (float(given), POST_HOC)


def _primary(c: Candidate, primary: list[str], weights: Mapping[str, float], margin: float | None,
             formal: bool, alpha: float = 0.05) -> PrimaryClaim:
    rows = [b for b in c.benchmarks if b.benchmark in primary]
    missing = sorted(set(primary) - {b.benchmark for b in rows})
    if missing:
        return PrimaryClaim(benchmarks=primary, claim=None, reason=f"not compared: {', '.join(missing)}")
    total = sum(float(weights[b.benchmark]) for b in rows)
    w = {b.benchmark: float(weights[b.benchmark]) / total for b in rows}
    delta = sum(w[b.benchmark] * b.delta for b in rows)
    r = math.sqrt(2.0 * math.log(2.0 / alpha) * sum(w[b.benchmark] ** 2 / b.n for b in rows))
    ci = [max(-1.0, delta - r), min(1.0, delta + r)]
    hoeffding = PrimaryHoeffding(method="weighted-paired-hoeffding", alpha=alpha, radius=r, ci=ci)
    interval: PrimaryInterval = hoeffding
    rule: Rule = "hoeffding"
    extra: dict[str, PrimaryInterval] = {}
    bet = c.primary_betting
    if c.claim_rule == "betting" and bet:           # the plan's claim rule makes the primary claim too
        interval, rule, ci = bet, "betting", bet.ci
        extra["hoeffding_interval"] = hoeffding
    adjusted = c.primary_adjusted
    if adjusted:                                    # chosen among K singles: the adjusted interval claims
        extra["unadjusted_interval"] = interval
        interval, rule, ci = adjusted, adjusted.rule, adjusted.ci
    verdict = non_inferiority(ci[0], margin) if margin is not None and formal else None
    out = PrimaryClaim(benchmarks=primary, delta=delta, interval=interval, claim=claim(ci), non_inferior=verdict,
                       claim_rule=rule)
    return out.model_copy(update=extra)             # the fields set are the fields stored


def _post_hoc(ni: NonInferiority) -> NonInferiority:
    """A margin given only at compare time: the verdict becomes `post_hoc_non_inferior`, never a claim."""
    return ni.model_copy(update={
        "label": "post hoc", "post_hoc_non_inferior": ni.non_inferior, "non_inferior": None,
        "reason": "margin given only at compare time, after the results existed: post hoc, never a formal claim "
                  "(REP-7)"})


def apply_declared(cmp: Comparison, source: str | None, declared_block: Statistics | None) -> Comparison:
    """Label the margin's source, void a post-hoc verdict, add the primary-set claim (the candidate plan's
    statistics block declares them). Returns a new comparison."""
    notes: list[str] = []
    candidates = cmp.candidates
    if source == POST_HOC:
        candidates = [c.model_copy(update={"non_inferiority": _post_hoc(c.non_inferiority)}) for c in candidates]
        notes.append(f"The non-inferiority margin {cmp.margin} was given only at compare time: it is post hoc "
                     "and yields no non-inferiority claim; declare statistics.margin in the manifest (REP-7).")
    primary = declared_block.primary_benchmarks if declared_block is not None else None
    if primary:
        margin = cmp.margin if source == DECLARED else None
        candidates = [c.model_copy(update={"primary": _primary(c, primary, cmp.benchmark_weights, margin,
                                                               cmp.evidence.formal)}) for c in candidates]
        secondary = sorted(set(cmp.benchmark_weights) - set(primary))
        notes.append(f"Declared primary benchmarks: {', '.join(primary)}; the primary claim is theirs"
                     + (f"; {', '.join(secondary)} are secondary (exploratory)." if secondary else "."))
    return cmp.model_copy(update={"margin_source": source, "candidates": candidates,
                                  "limitations": [*cmp.limitations, *notes]})
