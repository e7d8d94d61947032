"""The contract of named-history exclusions: the snapshot request and its answer model (the evaluation
options of a preparation are fields of `PrepareDataset` and `PrepareJob` in `service.api_requests`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from srbench.service.api.requests import Body
from srbench.stages.datasets.exclusions import MAX_NAMES, Snapshot

Name = Annotated[str, Field(min_length=1, max_length=200)]


class CompileExclusions(Body):
    dataset_ids: list[Name] = Field(default_factory=list, max_length=MAX_NAMES,
                                    description="prepared datasets of this store whose every case is reserved")
    run_ids: list[Name] = Field(default_factory=list, max_length=MAX_NAMES,
                                description="runs whose frozen plan's every case is reserved (answered or not)")


ExclusionSnapshot: type[BaseModel] = Snapshot
