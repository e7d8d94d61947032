"""Issue 39, item 9: walking a submitted manifest (`service/routes/core.py` `_submitted_plan`) crosses between the
service and the stages at most twice — one call into planning and its return: the service gathers what only it
holds (targets, datasets, options, links) first, and planning never calls back (it asked for each target and the
dataset through callbacks before). Counted with a profiler over every Python call of the walk."""

from __future__ import annotations

import sys
import threading
from typing import Any

from srbench.service.api.actors import LOCAL_ACTOR
from srbench.service.routes import core

from .helpers import Api, freeze, manifest, single


def _layer(frame: Any) -> str | None:
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return "service" if name.startswith("srbench.service.") else "stages" if name.startswith("srbench.stages.") \
        else None


def _crossings(fn: Any, *args: Any) -> tuple[Any, list[str]]:
    """`fn(*args)` and each call it made from one layer into the other ("service -> stages qualname")."""
    seen: list[str] = []

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event != "call":
            return
        callee, caller = _layer(frame), _layer(frame.f_back)
        if callee and caller and callee != caller:
            seen.append(f"{caller} -> {callee} {frame.f_globals['__name__']}.{frame.f_code.co_qualname}")

    assert threading.current_thread() is threading.main_thread()
    sys.setprofile(profile)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return out, seen


def test_a_submitted_manifest_crosses_into_planning_once(api: Api, service, prepare, sim) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("judge", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "strong"}, single("inline", sim.v1_url, "sim-weak")])
    plan, seen = _crossings(core._submitted_plan, service.service, m, LOCAL_ACTOR)
    assert plan.plan_sha256 == freeze(api, m)["plan_sha256"]
    assert seen == ["service -> stages srbench.stages.plan.submitted.freeze_manifest"], seen
    frozen = freeze(api, m)
    _, seen = _crossings(core._submitted_plan, service.service, frozen, LOCAL_ACTOR)
    assert seen == ["service -> stages srbench.stages.plan.freeze.check_frozen"], seen
