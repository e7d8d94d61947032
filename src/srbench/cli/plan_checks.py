"""What `plan` warns about before any money is spent (stderr, one line each; the plan is frozen anyway).

- a MoM whose claim will be blocked: its pinned config_hash cannot be confirmed (no `preview_url`:
  no probe before or after the run — stages/compare/evidence.py), so compare never calls it an improvement;
- an upper cost estimate above `limits.max_cost_usd`: the run stops when its spend reaches the cap;
- a model of a MoM's pool without a price (or no declared pool to check): its calls cost "unknown"
  (the savings then too);
- a judge or user simulator that is not pinned to one model: a router (MoM) in that role, a floating
  `…-latest` alias, or a model without a price (its cost is unknown).

Three of them are about money (`money_warnings`): the cap, a pool model without a price, a judge or user
simulator without one. `run` on a manifest that `plan` has not frozen prints the others and goes on, but
refuses on these, pointing at `plan` (docs/commands.md).
"""

from __future__ import annotations

from srbench.schemas.wire import WireJSON

ROLES = {"judge": "judge", "user_simulator": "user simulator", "scaffolding": "scaffolding model"}


Warning = tuple[str, bool]      # (the sentence, whether it is about money)


def _router_warnings(t: WireJSON) -> list[Warning]:
    out: list[Warning] = []
    if t.get("kind") != "mom":
        return out
    if not t.get("preview_url"):
        out.append((f"target {t['id']}: its claim will be blocked — no preview_url, so its pinned config_hash "
                    f"{t.get('config_hash')} cannot be confirmed by a probe before and after the run; add the "
                    "router's preview_url to the target (sr-bench target register) and plan again", False))
    prices = t.get("prices") or {}
    unpriced = [m for m in t.get("models") or [] if m not in prices]
    if not t.get("models"):
        out.append((f"target {t['id']}: declares no model pool (models), so no check that every model it may serve "
                    f"has a price (priced: {', '.join(sorted(prices)) or 'none'}); a model without one costs "
                    "'unknown'; list the pool in the target's models", True))
    elif unpriced:
        out.append((f"target {t['id']}: pool model(s) {', '.join(unpriced)} have no price: their calls cost "
                    "'unknown' and so do the router's savings; add them to the target's prices", True))
    return out


def _aux_warnings(plan: WireJSON) -> list[Warning]:
    aux = plan.get("auxiliary_targets") or {}
    uses: dict[str, set[str]] = {}
    for b, opt in sorted((plan.get("benchmark_options") or {}).items()):
        for role, word in ROLES.items():
            if isinstance(opt, dict) and opt.get(role):
                uses.setdefault(opt[role], set()).add(f"{b} {word}")
    out: list[Warning] = []
    for tid, used in sorted(uses.items()):
        entry = aux.get(tid) or {}
        t = entry.get("target", entry)
        what = f"{', '.join(sorted(used))} {tid!r}"
        model = str(t.get("model") or "")
        if t.get("kind") == "mom":
            out.append((f"{what} is a router (MoM): not pinned to one model, so its verdicts can change between "
                        "runs; pin a single-model target instead", False))
        elif model.endswith("latest"):
            out.append((f"{what} uses the floating alias {model}: not pinned to one model version; use a dated "
                        "model id", False))
        elif t and model not in (t.get("prices") or {}):
            out.append((f"{what} has no price for {model}: its calls cost 'unknown' (the total-cost saving too); "
                        "add a price to the target", True))
    return out


def checked(plan: WireJSON, estimate: WireJSON | None) -> list[Warning]:
    """Every warning for a frozen plan and its cost estimate, each with whether it is about money."""
    out = [w for t in plan.get("targets") or [] for w in _router_warnings(t)]
    cap = (plan.get("limits") or {}).get("max_cost_usd")
    upper = ((estimate or {}).get("upper_cost_usd") or {}).get("total")
    if cap is not None and upper is not None and upper > cap:
        out.append((f"the upper cost estimate {upper:.2f} USD is above limits.max_cost_usd {cap:g} USD: the run "
                    "stops when its spend reaches the cap; raise limits.max_cost_usd in the manifest to let it finish",
                    True))
    return out + _aux_warnings(plan)


def plan_warnings(plan: WireJSON, estimate: WireJSON | None) -> list[str]:
    """The warnings for a frozen plan and its cost estimate, one sentence each."""
    return [w for w, _ in checked(plan, estimate)]


def money_warnings(plan: WireJSON, estimate: WireJSON | None) -> list[str]:
    """The warnings about money: a spend cap the estimate exceeds, a cost that will be 'unknown'."""
    return [w for w, money in checked(plan, estimate) if money]
