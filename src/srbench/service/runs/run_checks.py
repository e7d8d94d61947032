"""A run's config-hash evidence (IT-2) and the run view: what service/runs/manager.py shows of a run
beside its lifecycle, and the helpers its ends share."""

from __future__ import annotations

import json
import os

import aiohttp

from srbench.schemas.cell import IN_FLIGHT
from srbench.schemas.event_data import ConfigHashChecked
from srbench.schemas.plan import Plan
from srbench.schemas.report_params import ConfigProbes, ProbeEvidence
from srbench.service.journal import runs as jruns
from srbench.service.journal.cells import RunJournalAdapter
from srbench.service.journal.runs import RunRow
from srbench.service.journal.writer import Journal
from srbench.service.runs.state import Progress, RunState, TargetInfo
from srbench.stages.dispatch.calls import RunControl, stop_scope
from srbench.targets.preview import preview_body, preview_call


async def config_check(client: aiohttp.ClientSession, plan: Plan, jr: RunJournalAdapter,
                        control: RunControl, phase: str) -> bool:
    """IT-2: a live MoM target's pinned config_hash is probed before and after the run through
    preview_url (no inference; each response's header is checked during it). Each probe is an
    event with its evidence: confirmed, mismatch (stops the run), missing (failed probe or no hash
    reported) or unavailable (no preview_url). Only confirmed counts as evidence in the report."""
    if plan.mode != "live":
        return True
    for pt in plan.targets:
        target = pt.target
        if target.kind != "mom" or not target.config_hash:
            continue
        if not target.preview_url:
            await jr.event("config_hash_checked", ConfigHashChecked(
                phase=phase, target_id=target.id, expected=target.config_hash, seen=None, ok=True,
                probe="no preview_url", evidence="unavailable"))
            continue
        body = preview_body(target, [{"role": "user", "content": "sr-bench config-hash probe"}], 1, None)
        out = await preview_call(client, target, body, min(10.0, plan.limits.total_timeout_s))
        seen = (out.routing or {}).get("config_hash")
        ok = out.status == "completed" or out.error_class != "config_hash_mismatch"
        evidence = ("mismatch" if not ok else "confirmed" if seen == target.config_hash else "missing")
        await jr.event("config_hash_checked", ConfigHashChecked(
            phase=phase, target_id=target.id, expected=target.config_hash, seen=seen, ok=ok,
            probe=out.error_class or "answered", evidence=evidence))
        reason = (f"config_hash check {phase} the run: router {target.id} reports {seen}, "
                  f"the target pins {target.config_hash}")
        if not ok and control.stop_target(target.id, reason, stop_scope(plan)) and control.stop_reason:
            return False
    return True


def config_probes(journal: Journal, run_id: str) -> ConfigProbes:
    """The latest probe evidence per MoM target and phase (before / after), from the run's events."""
    out: ConfigProbes = {}
    for d in jruns.events_data(journal, run_id, "config_hash_checked"):
        if isinstance(d, ConfigHashChecked):
            out.setdefault(d.target_id, {})[d.phase] = ProbeEvidence(
                evidence=d.evidence or ("confirmed" if d.seen == d.expected else "missing"), seen=d.seen,
                probe=d.probe)
    return out


def release_memory() -> None:
    """Give the heap a big run and its report freed back to the system (glibc's malloc_trim), so
    that the service's footprint between runs does not keep the high-water mark of the last one. The
    runs' cyclic garbage was collected when their dispatch ended (runs/heap.py); the rest was freed as it
    died."""
    try:        # deferred: ctypes loads only when a run ends
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


MALLOC_ARENAS = 2          # glibc malloc arenas for the service's threads (M_ARENA_MAX)


def limit_malloc_arenas() -> None:
    """At most MALLOC_ARENAS glibc malloc arenas in this process, unless MALLOC_ARENA_MAX says otherwise.
    glibc gives each thread that allocates at once an arena of its own (up to 8 per core): the event loop,
    the journal writer, the report-rows thread and the executor's threads each kept their high-water
    mark of a big run in its own arena, where malloc_trim can return only whole free pages. Two arenas
    held 26 MiB less after a 10k-cell run (benchmarks/memory.py, issue 42); Python's small objects do not
    use them (pymalloc), so the threads contend for them only on larger blocks, under the GIL mostly."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:        # deferred: ctypes loads only in the service
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, MALLOC_ARENAS)     # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def arrow_on_system_malloc() -> None:
    """pyarrow (a dataset preparation reading parquet) allocates through glibc malloc in the service, not its
    default mimalloc pool, unless ARROW_DEFAULT_MEMORY_POOL says otherwise: mimalloc kept ~22 MiB of a
    preparation's buffers resident for the service's lifetime (its reserved region is not returned);
    through malloc, a freed large buffer is unmapped at once and the rest goes back at the next trim.
    Reading the MMLU-Pro parquet in a process of its own: +22 MiB of RSS with mimalloc, +11 with the
    system pool (issue 42, item 3)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def exc_line(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def run_view(row: RunRow, counts: dict[str, int], target_info: list[TargetInfo], last_change: float = 0.0
             ) -> RunState:
    """A run's row as the service reads it back: progress from its cells' counts by state."""
    progress = Progress(total=row.total, completed=counts.get("completed", 0), failed=counts.get("failed", 0),
                        cancelled=counts.get("cancelled", 0), ambiguous=counts.get("ambiguous", 0),
                        running=sum(counts.get(state, 0) for state in IN_FLIGHT),
                        pending=counts.get("pending", 0))
    return RunState(id=row.id, name=row.name, mode=row.mode, profile=row.profile, status=row.status, plan=row.plan,
                    plan_sha256=row.plan_sha256, idempotency_key=row.idem_key, parent=row.parent,
                    targets=json.loads(row.targets), created_at=row.created_at, started_at=row.started_at,
                    finished_at=row.finished_at, updated_at=max(row.updated_at, last_change), error=row.error,
                    cancel_requested=bool(row.cancel_requested), progress=progress, end_recorded=True,
                    target_info=target_info)
