"""What two stores doing the same work may disagree on — listed once — and the digest that leaves it out.

Everything sr-bench keeps is named by its content, never by where or when it was made: the same
sources, manifest and answers give the same dataset, plan, request and grade digests in any store,
working directory, host, time zone or locale. By nature a few fields differ between two runs of the
same work; they are listed here, with why, and `content_digest` hashes a value without them. A
report carries its `content_digest`, so two colleagues can check that they got the same result.
"""

from __future__ import annotations

from typing import Any

from srbench.cas import digest_json
from srbench.cas.digest import PREFIX

VOLATILE: dict[str, str] = {
    "run_id": "a run's id is random (two runs of the same plan are two runs)",
    "path": "a dataset's printed location on one host: a hint for reading, never its identity",
    "call": "a call record holds its measured timings, so its digest is per run",
    "judge_call": "as call, for the judge's call",
    "results": "the digest of the per-cell rows, which name call records",
    "report": "the digest of a report object, which names its run",
    "report_digest": "the same digest, as the API's report answer names it",
    "content_digest": "this digest itself",
    "wall_time_s": "measured",
    "latency_s": "measured",
    "ttft_s": "measured",
    "latency_p50_s": "measured",
    "latency_p95_s": "measured",
    "ttft_p50_s": "measured",
    "ttft_p95_s": "measured",
    "request_time_sum_s": "measured",
    "at": "the clock time a correction was appended",
    "correction_at": "as at",
    "decided_at": "the clock time an early stop was decided",
    "capture": "the digest of a router recipe capture, which holds its capture time",
    "captured_at": "the clock time a router's configuration was captured or previewed",
    "started_at": "the clock time a call started (upstream's call fields)",
    "finished_at": "the clock time a call finished (upstream's call fields)",
    "subject_latency_s": "measured (upstream's name for a result's latency)",
}


def scrub(value: Any) -> Any:
    """`value` without the VOLATILE fields, at any depth."""
    if isinstance(value, dict):
        return {k: scrub(v) if isinstance(v, dict | list) else v for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) if isinstance(v, dict | list) else v for v in value]
    return value


def content_digest(value: Any) -> str:
    """The BLAKE3 of the canonical JSON of `scrub(value)`, as 64 hex digits: a fingerprint, not the name
    of a stored object (so it is written without the ``b3:`` of object digests)."""
    return digest_json(scrub(value)).removeprefix(PREFIX)
