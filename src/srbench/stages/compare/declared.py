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
from typing import Any

from srbench.cas.digest import stored_number
from srbench.errors import InvalidInput
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


def _primary(c: dict[str, Any], primary: list[str], weights: dict[str, Any], margin: float | None,
             formal: bool, alpha: float = 0.05) -> dict[str, Any]:
    rows = [b for b in c["benchmarks"] if b["benchmark"] in primary]
    missing = sorted(set(primary) - {b["benchmark"] for b in rows})
    if missing:
        return {"benchmarks": primary, "claim": None, "reason": f"not compared: {', '.join(missing)}"}
    total = sum(float(weights[b["benchmark"]]) for b in rows)
    w = {b["benchmark"]: float(weights[b["benchmark"]]) / total for b in rows}
    delta = sum(w[b["benchmark"]] * b["delta"] for b in rows)
    r = math.sqrt(2.0 * math.log(2.0 / alpha) * sum(w[b["benchmark"]] ** 2 / b["n"] for b in rows))
    ci = [max(-1.0, delta - r), min(1.0, delta + r)]
    hoeffding = {"method": "weighted-paired-hoeffding", "alpha": alpha, "radius": r, "ci": ci}
    out: dict[str, Any] = {"benchmarks": primary, "delta": delta, "interval": hoeffding, "claim": claim(ci),
                           "non_inferior": None, "claim_rule": "hoeffding"}
    bet = c.get("primary_betting")
    if c.get("claim_rule") == "betting" and bet:    # the plan's claim rule makes the primary claim too
        ci = bet["ci"]
        out.update(interval=bet, hoeffding_interval=hoeffding, claim=claim(ci), claim_rule="betting")
    adjusted = c.get("primary_adjusted")
    if adjusted:                                    # chosen among K singles: the adjusted interval claims
        ci = adjusted["ci"]
        out.update(unadjusted_interval=out["interval"], interval=adjusted, claim=claim(ci),
                   claim_rule=adjusted["rule"])
    if margin is not None and formal:
        out["non_inferior"] = non_inferiority(ci[0], margin)
    return out


def apply_declared(cmp: dict[str, Any], source: str | None, declared_block: Statistics | None) -> dict[str, Any]:
    """Label the margin's source, void a post-hoc verdict, add the primary-set claim (the candidate plan's
    statistics block declares them). Returns `cmp`."""
    cmp["margin_source"] = source
    notes: list[str] = []
    for c in cmp["candidates"]:
        ni = c.get("non_inferiority")
        if source == POST_HOC and isinstance(ni, dict):
            ni["label"] = "post hoc"
            ni["post_hoc_non_inferior"], ni["non_inferior"] = ni.get("non_inferior"), None
            ni["reason"] = ("margin given only at compare time, after the results existed: post hoc, never a "
                            "formal claim (REP-7)")
    if source == POST_HOC:
        notes.append(f"The non-inferiority margin {cmp.get('margin')} was given only at compare time: it is post hoc "
                     "and yields no non-inferiority claim; declare statistics.margin in the manifest (REP-7).")
    primary = declared_block.primary_benchmarks if declared_block is not None else None
    if primary:
        margin = cmp.get("margin") if source == DECLARED else None
        for c in cmp["candidates"]:
            c["primary"] = _primary(c, primary, cmp["benchmark_weights"], margin, bool(cmp["evidence"].get("formal")))
        secondary = sorted(set(cmp["benchmark_weights"]) - set(primary))
        notes.append(f"Declared primary benchmarks: {', '.join(primary)}; the primary claim is theirs"
                     + (f"; {', '.join(secondary)} are secondary (exploratory)." if secondary else "."))
    cmp["limitations"] = [*cmp["limitations"], *notes]
    return cmp
