"""Seeded Monte-Carlo of paired comparisons: the real interval code on simulated paired differences.

Used by the simulation suite (tests/stages/test_simulation.py) and benchmarks/stats_power.py.
Model: every case of benchmark b is independently a win (d = +1) with p₊ = (1 − τ + δ_b)/2, a loss
with p₋ = (1 − τ − δ_b)/2 and a tie otherwise, so the true difference is Δ = Σ_b w_b δ_b. A run
looks at the betting interval at `looks` evenly spaced prefixes (the first once every benchmark has
a case) and stops at the first look where the sign is settled or unreachable (`stopping.decide`'s
rule, vectorised); with the running intersection a claim at any look is also the final claim, so
the false-claim rate below already includes optional stopping ("peeking").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from srbench.benchmarks import all_benchmarks
from srbench.schemas.wire import WireJSON
from srbench.stages.stats.betting import Design, bounds, interleave, make_design, reach_bounds

__all__ = ["profile_design", "draw", "simulate", "draw_singles", "simulate_selection"]


def profile_design(profile: str = "standard", alpha: float = 0.05) -> Design:
    """The nine catalog benchmarks at `profile` sizes with their REP-4 weights, interleaved."""
    names: list[str] = []
    for b in all_benchmarks():
        names += [b.id] * b.profiles[profile]
    order = [names[i] for i in interleave(names)]
    return make_design(order, {b.id: b.weight for b in all_benchmarks()}, alpha)


def draw(rng: np.random.Generator, reps: int, design: Design, tie_rate: float,
         delta: float | Sequence[float]) -> np.ndarray:
    """(reps, N) paired differences; `delta` one value for every benchmark or one per benchmark."""
    per = np.broadcast_to(np.asarray(delta, dtype=float), (len(design.names),))
    if np.any(np.abs(per) > 1 - tie_rate + 1e-12):
        raise ValueError("|δ| > 1 − tie rate is impossible")
    win = ((1 - tie_rate + per) / 2)[design.strata]
    loss = ((1 - tie_rate - per) / 2)[design.strata]
    u = rng.random((reps, design.size))
    return np.where(u < win, 1.0, np.where(u < win + loss, -1.0, 0.0))


def simulate(design: Design, *, tie_rate: float, delta: float | Sequence[float], reps: int, seed: int,
             looks: int = 50) -> WireJSON:
    """Coverage, claims and cases used for Hoeffding (at the planned size) and betting (with stops)."""
    rng = np.random.default_rng(seed)
    d = draw(rng, reps, design, tie_rate, delta)
    per = np.broadcast_to(np.asarray(delta, dtype=float), (len(design.names),))
    truth = float(np.dot(design.weights, per))
    estimate = d @ design.c
    radius = math.sqrt(2 * math.log(2 / design.alpha) * design.s)
    at = np.unique(np.linspace(len(design.names), design.size, looks).astype(np.int64))
    lo, hi, best, worst = reach_bounds(d, design, at)
    lo_run, hi_run = np.maximum.accumulate(lo, axis=1), np.minimum.accumulate(hi, axis=1)
    settled = (lo_run > 0) | (hi_run < 0)
    unreachable = (np.maximum(lo_run, best) <= 0) & (np.minimum(hi_run, worst) >= 0)
    stop = settled | unreachable
    first = np.where(stop.any(axis=1), stop.argmax(axis=1), at.size - 1)
    rows = np.arange(reps)
    s_lo, s_hi = lo_run[rows, first], hi_run[rows, first]
    f_lo, f_hi = lo_run[:, -1], hi_run[:, -1]
    return {
        "tie_rate": tie_rate, "delta": truth, "reps": reps, "cases": design.size, "looks": int(at.size),
        "hoeffding": {"coverage": float(np.mean(np.abs(estimate - truth) <= radius)),
                      "improvement": float(np.mean(estimate - radius > 0)),
                      "regression": float(np.mean(estimate + radius < 0)), "half_width": radius},
        "betting": {"coverage": float(np.mean((f_lo <= truth) & (truth <= f_hi))),
                    "improvement": float(np.mean(f_lo > 0)), "regression": float(np.mean(f_hi < 0)),
                    "half_width": float(np.mean(f_hi - f_lo) / 2)},
        "stopping": {"coverage": float(np.mean((s_lo <= truth) & (truth <= s_hi))),
                     "improvement": float(np.mean(s_lo > 0)), "regression": float(np.mean(s_hi < 0)),
                     "cases_used": float(np.mean(at[first]) / design.size),
                     "calls_saved": float(1 - np.mean(at[first]) / design.size),
                     "stopped_unreachable": float(np.mean(unreachable[rows, first] & ~settled[rows, first]))},
    }


def draw_singles(rng: np.random.Generator, reps: int, design: Design, singles: int, tie_rate: float,
                 delta: float) -> np.ndarray:
    """(singles, reps, N) paired differences of a router against K equally strong singles, exchangeable:
    a share f = min(1, 2(1 − τ)) of the cases is contested — there every single is right with
    probability ½ and the router with ½ + δ/f, all independently — and on the others all agree. Each
    pair then has tie rate τ and difference δ (τ ≥ ½ up to δ²/2); two pairs correlate about ½."""
    share = min(1.0, 2.0 * (1.0 - tie_rate))
    if not 0 <= delta / share <= 0.5 or tie_rate < (1 - (delta / share) ** 2) / 2 - 1e-12:
        raise ValueError("draw_singles models 0 ≤ δ ≤ 1 − τ with a tie rate of at least one half")
    contested = rng.random((reps, design.size)) < share
    router = rng.random((reps, design.size)) < 0.5 + delta / share
    out = np.empty((singles, reps, design.size), dtype=np.int8)
    for k in range(singles):
        single = rng.random((reps, design.size)) < 0.5
        out[k] = np.where(contested, router.astype(np.int8) - single.astype(np.int8), 0)
    return out


def simulate_selection(design: Design, *, singles: int, tie_rate: float, delta: float, reps: int, seed: int,
                       looks: int | None = 50) -> WireJSON:
    """Claims against the strongest of K singles (`draw_singles`): the unadjusted rule (the betting
    interval against the single that measured best) and the selection-adjusted one (`stages/selection`),
    each with its running intersection over `looks` evenly spaced prefixes (None: every prefix)."""
    rng = np.random.default_rng(seed)
    d = draw_singles(rng, reps, design, singles, tie_rate, delta)
    at = None if looks is None else np.unique(np.linspace(len(design.names), design.size, looks).astype(np.int64))
    upper_design = make_design([design.names[k] for k in design.strata],
                               dict(zip(design.names, design.weights, strict=True)), design.alpha / singles)
    lo, hi, hi_k = (np.empty((singles, reps)) for _ in range(3))
    for k in range(singles):
        x = d[k].astype(float)
        low, high = bounds(x, design, at)
        lo[k], hi[k] = low.max(axis=1), high.min(axis=1)
        hi_k[k] = bounds(x, upper_design, at)[1].min(axis=1) if singles > 1 else hi[k]
    chosen = (d.astype(float) @ design.c).argmin(axis=0)       # the single that measured strongest
    rows = np.arange(reps)
    return {"singles": singles, "tie_rate": tie_rate, "delta": delta, "reps": reps, "cases": design.size,
            "looks": "every prefix" if at is None else int(at.size),
            "unadjusted": {"improvement": float(np.mean(lo[chosen, rows] > 0)),
                           "regression": float(np.mean(hi[chosen, rows] < 0))},
            "adjusted": {"improvement": float(np.mean(lo.min(axis=0) > 0)),
                         "regression": float(np.mean(hi_k.min(axis=0) < 0))}}
