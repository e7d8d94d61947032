"""A plan frozen by upstream's CLI (`vllm-sr benchmark plan --output F`), translated once at the wire edge.

Upstream's frozen plan is its manifest with everything spelled out: the cases inline, all twelve limits,
`output_policy`, `sampling`, and its receipts `case_sha256`, `benchmark_weights`, `adapter_versions` and
`plan_sha256`. sr-bench freezes it into its own plan (the cases must be the dataset's, as for any inline
cases); before that:

- `plan_sha256` is checked by upstream's rule (SHA-256 of the canonical JSON without it, integral numbers
  as integers): an edited plan is upstream's `reviewed_plan_changed`, nothing dispatched;
- every protocol field sr-bench also defines must agree with sr-bench's, or the plan is refused naming the
  field: `case_sha256` (the digest of the plan's cases), `benchmark_weights` (REP-4's fixed weights, as
  fractions), `adapter_versions` (upstream's version of each benchmark is sr-bench's adapter or grader
  version for it), `output_policy` (sr-bench bounds every answer: `bounded`); `execution_cells` (a subset
  of the cells) is refused: sr-bench runs every planned cell of a new plan;
- the fields sr-bench does not use (`limits.max_log_bytes`, anything else upstream froze) are kept with the
  plan (`Plan.upstream`), with the receipts, so the same file always freezes to the same plan.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import JsonValue

from srbench.benchmarks import all_benchmarks
from srbench.errors import InvalidInput
from srbench.schemas.plan import Limits, Manifest, UpstreamPlan
from srbench.schemas.wire import WireJSON
from srbench.stages.plan.problems import fail

# the fields only upstream's `plan` writes: a manifest without `kind` holding one of them is its frozen plan
MARKERS = ("case_sha256", "benchmark_weights", "adapter_versions", "output_policy")
# upstream manifest fields `service.wire.upstream` translates (with sr-bench's own manifest fields)
TRANSLATED = ("cases", "auxiliary_targets", "benchmark_options", "experiment", "baseline_run_id")
UNUSED_LIMITS = ("max_log_bytes",)       # upstream's limit on a call's saved stream; sr-bench has no such cap


def is_upstream_frozen(manifest: Any) -> bool:
    """Whether `manifest` is a plan frozen by upstream's CLI (not sr-bench's, which says `kind: plan`)."""
    return isinstance(manifest, dict) and "kind" not in manifest and any(k in manifest for k in MARKERS)


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def _integral(value: Any) -> Any:
    """JSON's one number type, as upstream hashes a plan: 1.0 is 1 (booleans and fractions unchanged)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def upstream_plan_sha256(manifest: WireJSON) -> str:
    """Upstream's plan hash: the canonical JSON of the plan without `plan_sha256`, integral numbers as integers."""
    return hashlib.sha256(_canonical(_integral({k: v for k, v in manifest.items() if k != "plan_sha256"}))).hexdigest()


def translate(manifest: WireJSON) -> tuple[WireJSON, UpstreamPlan]:
    """(sr-bench's manifest, what is kept with the plan) of upstream's frozen plan; refused in one error naming
    every field that disagrees with sr-bench's, or as `reviewed_plan_changed` when it was edited after review."""
    reviewed = manifest.get("plan_sha256")
    if reviewed is not None and reviewed != upstream_plan_sha256(manifest):
        raise InvalidInput(f"the reviewed plan changed: its plan_sha256 {reviewed} is not the hash of the plan "
                           "as submitted (upstream's rule); review the plan again with `vllm-sr benchmark plan` "
                           "(nothing was dispatched)", code="reviewed_plan_changed",
                           details={"dispatch_started": False, "model_requests": 0})
    problems = _disagreements(manifest)
    if problems:
        raise fail(problems, "upstream-frozen plan")
    ours = set(Manifest.model_fields) | set(TRANSLATED)
    out = {k: v for k, v in manifest.items() if k in ours}
    kept: dict[str, JsonValue] = {k: v for k, v in manifest.items() if k not in ours and k != "plan_sha256"}
    limits = manifest.get("limits")
    if isinstance(limits, dict):
        out["limits"] = {k: v for k, v in limits.items() if k not in UNUSED_LIMITS}
        kept.update({f"limits.{k}": limits[k] for k in UNUSED_LIMITS if k in limits})
    dataset = manifest.get("dataset")
    if isinstance(dataset, dict):           # upstream merges its prepared manifest into the reference
        out["dataset"] = {k: dataset[k] for k in ("path", "sha256") if k in dataset}
        kept.update({f"dataset.{k}": v for k, v in dataset.items() if k not in ("path", "sha256")})
    return out, UpstreamPlan(plan_sha256=reviewed if isinstance(reviewed, str) else None, fields=kept)


def _disagreements(m: WireJSON) -> list[str]:
    """Each protocol field sr-bench also defines that does not agree with sr-bench's, one line each."""
    problems: list[str] = []
    cases = m.get("cases")
    given = m.get("case_sha256")
    if given is not None and (not isinstance(cases, list)
                              or given != hashlib.sha256(_canonical(cases)).hexdigest()):
        problems.append("case_sha256: not the digest of the plan's cases (the cases were changed after "
                        "review); plan again")
    problems += _weight_problems(m.get("benchmark_weights"))
    problems += _version_problems(m.get("adapter_versions"))
    policy = m.get("output_policy", "bounded")
    if policy != "bounded":
        problems.append(f"output_policy {policy!r}: sr-bench bounds every answer by limits.max_output_tokens "
                        "(the native policy is not supported); plan with output_policy bounded")
    if "execution_cells" in m:
        problems.append("execution_cells: sr-bench runs every planned cell of a new plan; choose the cases with "
                        "the dataset, or continue a parent's cells with `recover`")
    limits = m.get("limits")
    if isinstance(limits, dict):
        unknown = sorted(set(limits) - set(Limits.model_fields) - set(UNUSED_LIMITS))
        problems += [f"limits.{k}: unknown field" for k in unknown]
    return problems


def _weight_problems(weights: Any) -> list[str]:
    if weights is None:
        return []
    if not isinstance(weights, dict):
        return ["benchmark_weights must be an object {benchmark: weight}"]
    ours = {b.id: b.weight / 100 for b in all_benchmarks()}
    problems = [f"benchmark_weights.{b}: {w!r} is not sr-bench's fixed weight {ours[b]} (REP-4)"
                for b, w in weights.items() if b in ours and w != ours[b]]
    problems += [f"benchmark_weights.{b}: not a benchmark of sr-bench" for b in weights if b not in ours]
    problems += [f"benchmark_weights: {b} is missing" for b in ours if b not in weights]
    return problems


def _version_problems(versions: Any) -> list[str]:
    if versions is None:
        return []
    if not isinstance(versions, dict):
        return ["adapter_versions must be an object {benchmark: version}"]
    known = {b.id: (b.adapter_version, b.grader_version) for b in all_benchmarks()}
    problems = []
    for b, v in versions.items():
        if b not in known:
            problems.append(f"adapter_versions.{b}: not a benchmark of sr-bench")
        elif v not in known[b]:
            problems.append(f"adapter_versions.{b}: {v!r} is neither sr-bench's adapter ({known[b][0]}) nor its "
                            f"grader ({known[b][1]}); the plan was frozen by another release of the benchmark")
    return problems
