"""Plan-time checks of a target against the plan's limits and cost policy (TG-2, TG-4, IT-2, SVC-6): one
line per problem, naming the target by its place in the manifest."""

from __future__ import annotations

import os

from srbench.schemas.plan import Limits
from srbench.schemas.target import Target
from srbench.targets import routers


def target_problems(target: Target, limits: Limits, cost_policy: str, i: int) -> list[str]:
    """What is wrong with manifest target `i` under the plan's limits and cost policy, one line each."""
    where = f"targets[{i}] ({target.id})"
    out: list[str] = []
    pinned = target.request_params.get("max_tokens")
    if isinstance(pinned, int) and pinned > limits.max_output_tokens:     # an int: check_generation_params
        out.append(f"{where}: pinned max_tokens {pinned} exceeds limits.max_output_tokens "
                   f"{limits.max_output_tokens}; raise the cap (the model profile is never rewritten)")
    bad_router = routers.router_problem(target)
    if bad_router:
        out.append(f"{where}: {bad_router}")
    elif target.kind == "mom" and not target.config_hash and routers.for_target(target).reports_config_hash:
        out.append(f"{where}: a live MoM target must pin config_hash")
    token_env = os.environ.get("SR_BENCH_TOKEN_ENV") or "SR_BENCH_TOKEN"
    for name in ("api_key_env", "preview_api_key_env"):
        if getattr(target, name) == token_env:
            out.append(f"{where}: {name} names the service token variable {token_env}; the service token is "
                       "never sent to a model endpoint (SVC-6)")
    if cost_policy == "require_priced":
        if not target.prices:
            out.append(f"{where}: cost_policy require_priced needs prices (or choose capability_only)")
        elif target.kind == "single" and target.model not in target.prices:
            out.append(f"{where}: prices must include the target's own model {target.model!r}")
        if target.kind == "mom" and target.max_inference_calls is None:
            out.append(f"{where}: a priced MoM target must declare max_inference_calls")
        if target.kind == "mom" and target.models:
            missing = [m for m in target.models if m not in target.prices]
            if missing:
                out.append(f"{where}: no prices for pool model(s) {', '.join(missing)}")
    return out


