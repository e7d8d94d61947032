"""A submitted manifest frozen from what the service gathered for it, in one call (issue 39, item 9).

The service reads what only it holds — the registered targets, the registered datasets with the bytes the
manifest names, the benchmark options to plan with, the experiment and baseline links — into `PlanInputs`,
then calls `freeze_manifest` once: planning never calls back into the service (it used to ask for each
target and for the dataset through callbacks, crossing between service and stages five times a manifest).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from srbench.cas import ObjectStore
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.plan import Plan
from srbench.schemas.target import Target
from srbench.stages.plan.freeze import PlanLinks, build_plan
from srbench.stages.plan.problems import fail, pydantic_problems


class PlanInputs(BaseModel):
    """Everything planning needs beyond the manifest and the object store."""

    model_config = ConfigDict(frozen=True)
    targets: dict[str, Target] = Field(description="the registered targets, by id")
    auxiliary: dict[str, JsonValue] = Field(default_factory=dict,
                                            description="targets spelled out inline (upstream's auxiliary_targets), "
                                                        "by id, as submitted (validated here)")
    datasets: list[DatasetManifest] = Field(default_factory=list,
                                            description="the registered datasets holding the bytes the manifest names")
    options: dict[str, JsonValue] = Field(default_factory=dict, description="the benchmark options to plan with")
    links: PlanLinks | None = Field(default=None, description="the experiment, baseline run and upstream receipts")


def freeze_manifest(raw: object, store: ObjectStore, inputs: PlanInputs) -> Plan:
    """`build_plan` of `raw` with its targets and datasets taken from `inputs` (an inline target first)."""

    def resolve(tid: str) -> Target | None:
        given = inputs.auxiliary.get(tid)
        if isinstance(given, dict):
            try:
                return Target.model_validate({**given, "id": tid})
            except ValidationError as exc:
                raise fail(pydantic_problems(exc, f"auxiliary_targets.{tid}.")) from None
        return inputs.targets.get(tid)

    return build_plan(raw, store, resolve_target=resolve,
                      find_datasets=lambda sha: [d for d in inputs.datasets if d.sha256 == sha],
                      options=inputs.options, links=inputs.links)
