"""Evidence for a pinned router configuration (IT-2): a pinned ``config_hash`` counts only when confirmed.

A live MoM target that pins ``config_hash`` has three sources of evidence: the probe through its
``preview_url`` before the run, the probe after it, and the config hash its router adapter reads
from every response (``x-vsr-config-hash`` for vLLM Semantic Router; adapters whose router reports
none give none). A reported mismatch stops dispatch (dispatch and the service do that). Here the report
decides whether the pin was *confirmed*:

    confirmed ⇔ probe before = confirmed ∧ probe after = confirmed
                ∧ (every answered response carries the pinned hash ∨ no response carries one)

— the header is required on every response where the router sends it at all. Anything else (no
preview_url, a failed probe, a probe that reports no hash, a run that stopped before the second
probe, some responses without the header) leaves the pin unconfirmed, with the reason. An
unconfirmed pin is a named limitation on every result of that target, and compare never calls such
a target an improvement or non-inferior.
"""

from __future__ import annotations

from collections.abc import Mapping

from srbench.schemas.report_params import ProbeEvidence
from srbench.schemas.report_sections import ConfigHashEvidence
from srbench.schemas.results import ResultRow
from srbench.schemas.target import Target


def config_hash_evidence(target: Target, rows: list[ResultRow], probes: Mapping[str, ProbeEvidence] | None,
                         mode: str) -> ConfigHashEvidence | None:
    """The evidence record of one target (None: not a live MoM target with a pinned config_hash)."""
    if mode != "live" or target.kind != "mom" or not target.config_hash:
        return None
    probes = probes or {}
    before = probes["before"].evidence if "before" in probes else "not run"
    after = probes["after"].evidence if "after" in probes else "not run"
    answered = [r for r in rows if r.has_call and r.state == "completed"]
    with_header = sum(1 for r in answered if r.config_hash_seen == target.config_hash)
    without = sum(1 for r in answered if r.config_hash_seen is None)
    reasons = [f"probe {phase}: {ev}" for phase, ev in (("before", before), ("after", after)) if ev != "confirmed"]
    if not target.preview_url:
        reasons = ["no preview_url: no probe before or after the run"]
    if with_header and without:
        reasons.append(f"{without} of {len(answered)} responses carry no config hash header")
    return ConfigHashEvidence(pinned=target.config_hash, probe_before=before, probe_after=after,
                              responses=len(answered), responses_with_header=with_header,
                              responses_without_header=without, confirmed=not reasons,
                              reason="; ".join(reasons) or None)


def evidence_limitation(target_id: str, evidence: ConfigHashEvidence | None) -> str | None:
    if evidence is None or evidence.confirmed:
        return None
    return (f"Target {target_id}: its pinned config_hash {evidence.pinned} is not confirmed by evidence "
            f"({evidence.reason}); every result of this target holds for an unconfirmed router "
            "configuration, and no improvement or non-inferiority is claimed for it (IT-2).")
