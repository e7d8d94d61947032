"""A dataset preparation job as the journal keeps it (refs, kind ``preparation``), and its answer.

A job is stored with the keys it was given or updated with, no others (`stored`): reading and writing
it back keeps its row as it was, and the answer (`answer`) hands out the same keys, its dataset and its
items' sources named by their 64-hex ids (`service.datasets.ids`) where the job keeps ``ds-`` refs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.cas.digest import JSONValue
from srbench.schemas.dataset import DatasetManifest
from srbench.service.api import workflow as wf
from srbench.service.api.responses import WireDataset
from srbench.service.datasets.ids import on_wire, wire_ids

if TYPE_CHECKING:
    from srbench.service.app import Service
    from srbench.service.journal.writer import Journal

KIND = "preparation"
Status = Literal["queued", "running", "completed", "failed"]
ACTIVE: tuple[Status, ...] = ("queued", "running")


class PreparationJob(BaseModel):
    """A preparation job as stored: the request's fields, the stored request, its state and its result."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="prep- and 32 hex digits")
    benchmark: str | None = Field(default=None, description="the one benchmark prepared")
    benchmarks: list[str] | None = Field(default=None, description="several benchmarks, composed into one dataset")
    profile: str = Field(description="the profile")
    seed: int = Field(description="the selection seed")
    limit: int | None = Field(default=None, description="a custom subset's size")
    source: str | None = Field(default=None, description="how the source is acquired (auto, download, mirror)")
    source_partition: str | None = Field(default=None, description="the upstream partition (task identities)")
    evaluation_role: str | None = Field(default=None, description="the evaluation role recorded")
    exclusion_snapshot: str | None = Field(default=None, description="the sha256 of the exclusion snapshot")
    request: dict[str, JsonValue] = Field(description="the request as stored: what deduplicates the job")
    status: Status = Field(description="queued, running, completed or failed")
    phase: str = Field(description="what it is doing")
    created_at: str = Field(description="when it was submitted (ISO 8601)")
    updated_at: str = Field(description="when it last changed (ISO 8601)")
    owner: str = Field(description="who submitted it")
    items: list[wf.PreparationItem] | None = Field(default=None, description="several benchmarks: each one's part")
    dataset: DatasetManifest | WireDataset | None = Field(
        default=None, description="the dataset prepared, by its ds- ref (an older job's: as it was answered)")
    error: str | None = Field(default=None, description="why it failed")

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def stored(self) -> dict[str, JSONValue]:
        """The journal row's value: the keys the job was given or updated with (each value whole)."""
        return {k: v for k, v in self.model_dump(mode="json").items() if k in self.model_fields_set}

    def answer(self, service: Service) -> wf.Preparation:
        """The job as answers hand it out: its dataset and its items' sources by their 64-hex ids."""
        fields = {k: getattr(self, k) for k in self.model_fields_set}
        if self.dataset is not None and not isinstance(self.dataset, WireDataset):
            fields["dataset"] = on_wire(self.dataset)
        if self.items:
            fields["items"] = [i.model_copy(update={"source_ids": wire_ids(service, i.source_ids)})
                               for i in self.items]
        return wf.Preparation.model_validate(fields)


def read_job(journal: Journal, job_id: str) -> PreparationJob | None:
    value = journal.get_ref(KIND, job_id)
    return None if value is None else PreparationJob.model_validate(value)


def all_jobs(journal: Journal) -> list[PreparationJob]:
    """Every job, newest first."""
    return sorted((PreparationJob.model_validate(v) for _, v in journal.list_refs(KIND)),
                  key=lambda j: j.created_at, reverse=True)


def write_job(journal: Journal, job: PreparationJob) -> None:
    journal.set_ref_sync(KIND, job.id, job.stored())
