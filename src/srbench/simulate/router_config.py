"""The simulated router's own configuration API (the routes vLLM Semantic Router's API server offers):

    GET /config/hash             {hash, runtime_hash, active_hash, status: active|pending|unknown}
    GET /config/router           the JSON config, secrets redacted; ETag = sha256 of the config source
    GET /config/router/recipes   {etag, recipes: [{name, description, routing, entrypoints, source, deletable}]}

The config is derived from the simulator's `RouterRule`, so what it says is what the router does.
Tests steer it through `RouterConfigState`: a `pending` status, a hash that changes after the config
was read (`change_after_config`), a changed source (`bump`) or a route that answers an error.
Read-only: a GET never changes the router's routing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from aiohttp import web

from srbench.schemas.wire import WireJSON
from srbench.simulate.behaviour import RouterRule

REDACTED = "***"


@dataclass
class RouterConfigState:
    rule: RouterRule
    status: str = "active"
    runtime_hash: str | None = None        # None: the rule's config_hash
    change_after_config: bool = False      # the next /config/hash after a /config/router read differs
    failing: dict[str, int] = field(default_factory=dict)   # path → HTTP status to answer instead
    revision: int = 0
    reads: list[str] = field(default_factory=list)

    def source(self) -> WireJSON:
        """The router's config source as the operator wrote it (with a secret the API never shows)."""
        r = self.rule
        return {"version": f"sim-{self.revision}", "default_model": r.weak,
                "vllm_endpoints": [{"name": m, "address": "127.0.0.1", "port": 8000, "api_key": "sk-sim-secret-key"}
                                   for m in (r.strong, r.weak)],
                "decisions": [{"name": r.strong_decision, "model": r.strong,
                               "rules": {"keywords": list(r.keywords), "prompt_chars_over": r.long_prompt_chars}},
                              {"name": r.weak_decision, "model": r.weak, "rules": {"otherwise": True}}]}

    def etag(self) -> str:
        return '"' + hashlib.sha256(json.dumps(self.source(), sort_keys=True).encode()).hexdigest() + '"'

    def hashes(self) -> WireJSON:
        h = self.rule.config_hash if self.revision == 0 else f"{self.rule.config_hash}+{self.revision}"
        return {"hash": h, "runtime_hash": self.runtime_hash or h, "active_hash": h, "status": self.status}

    def recipes(self) -> list[WireJSON]:
        r = self.rule
        return [{"name": "escalate-hard-prompts", "description": "long or keyword prompts go to the strong model",
                 "routing": {"decision": r.strong_decision, "model": r.strong, "keywords": list(r.keywords),
                             "prompt_chars_over": r.long_prompt_chars},
                 "entrypoints": ["/v1/chat/completions"], "source": "config", "deletable": False},
                {"name": "default-cheap", "description": "everything else goes to the small model",
                 "routing": {"decision": r.weak_decision, "model": r.weak},
                 "entrypoints": ["/v1/chat/completions"], "source": "config", "deletable": True}]

    def bump(self) -> None:
        """The operator changed the config source (new ETag and hash)."""
        self.revision += 1


def _redacted(config: WireJSON) -> WireJSON:
    out = json.loads(json.dumps(config))
    for ep in out.get("vllm_endpoints", []):
        if "api_key" in ep:
            ep["api_key"] = REDACTED
    return out


def add_config_routes(app: web.Application, state: RouterConfigState) -> None:
    def failing(path: str) -> web.Response | None:
        state.reads.append(path)
        status = state.failing.get(path)
        if status is None:
            return None
        return web.json_response({"error": {"message": f"simulated HTTP {status}"}}, status=status)

    async def config_hash(request: web.Request) -> web.Response:
        return failing("/config/hash") or web.json_response(state.hashes())

    async def config_router(request: web.Request) -> web.Response:
        bad = failing("/config/router")
        if bad:
            return bad
        out = web.json_response(_redacted(state.source()), headers={"ETag": state.etag()})
        if state.change_after_config:
            state.change_after_config = False
            state.bump()
        return out

    async def recipes(request: web.Request) -> web.Response:
        return failing("/config/router/recipes") or web.json_response(
            {"etag": state.etag(), "recipes": state.recipes()})

    app.router.add_get("/config/hash", config_hash)
    app.router.add_get("/config/router", config_router)
    app.router.add_get("/config/router/recipes", recipes)
