"""The simulated router's preview endpoint: which decision and model a request would get, with no
inference (IT-3). Deterministic, read-only: it never changes any state."""

from __future__ import annotations

from aiohttp import web

from srbench.schemas.wire import WireJSON
from srbench.simulate.behaviour import RouterRule


def preview_payload(router: RouterRule, body: WireJSON) -> WireJSON:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    model, decision = router.route(messages)
    ctx = body.get("preview_context") or {}
    shown = router.config_hash if router.reports_config_hash else None
    return {"selected_model": model, "decision": decision, "selection_status": "selected",
            "selection_reason": "static rule: prompt length and keywords", "selection_method": "static",
            "plugins": [], "state_dependent": False, "config_hash": shown,
            "selection_provenance": {"config_hash": shown, "state_hash": None,
                                     "captured_at": "simulated", "local_sampling": False,
                                     "seed": ctx.get("sampling_seed")}}


async def handle_preview(router: RouterRule, request: web.Request) -> web.Response:
    try:
        body = await request.json()
        payload = preview_payload(router, body)
    except (ValueError, TypeError, AttributeError) as exc:
        return web.json_response({"error": {"message": str(exc), "code": "invalid_body"}}, status=400)
    headers = {"x-vsr-selected-model": payload["selected_model"], "x-vsr-selected-decision": payload["decision"]}
    if router.reports_config_hash:
        headers["x-vsr-config-hash"] = router.config_hash
    return web.json_response(payload, headers=headers)
