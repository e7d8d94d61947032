"""sr-bench's toy τ domain ``mini`` in tau2-bench's native layout (tests and the demo; not τ³ data).

`write_mini_domain(root)` writes ``data/tau2/domains/mini/{tasks.json, split_tasks.json, policy.md,
db.json}`` and ``data/tau2/user_simulator/simulation_guidelines.md`` under `root`, for
``dataset prepare --benchmark tau3 --source-path ROOT --revision mini-fixture-v1``. Its three tasks:
- ``cancel_pending``: the customer cancels pending order o1 (DB changes; the agent must say the refund
  "30.00"; reward basis DB, ENV_ASSERTION, COMMUNICATE, ACTION);
- ``refuse_delivered``: the customer wants delivered order o2 cancelled, which the policy forbids; the
  gold actions only read (DB must stay as it was; basis DB);
- ``status_question``: the customer asks where o2 is; an NL assertion for the judge (basis DB,
  NL_ASSERTION).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srbench.schemas.wire import WireJSON

REVISION = "mini-fixture-v1"
POLICY = """# Mini shop agent policy (sr-bench toy domain, not a tau2-bench domain)
- Identify the customer by email with find_user_by_email before touching an order.
- Look an order up with get_order_details before acting on it.
- Only a pending order can be cancelled (cancel_pending_order); tell the customer the refund amount.
- A delivered order can never be cancelled: explain that politely and do not call cancel_pending_order.
- Transfer to a human agent only when the customer asks for one.
"""
GUIDELINES = """# User simulation guidelines (sr-bench toy domain)
You play a customer of a small shop. Follow the scenario; reveal information only when asked.
When your goal is reached or cannot be reached, end the conversation with the token ###STOP###.
"""
DB: WireJSON = {
    "users": {"u1": {"name": "Ada Park", "email": "ada@example.com", "orders": ["o1", "o2"]}},
    "orders": {
        "o1": {"user_id": "u1", "status": "pending", "items": [{"name": "desk lamp", "price": 30.0}], "total": 30.0},
        "o2": {"user_id": "u1", "status": "delivered", "items": [{"name": "mug", "price": 12.5}], "total": 12.5},
    },
}


def _scenario(reason: str, task: str) -> WireJSON:
    return {"persona": "A polite, brief customer.",
            "instructions": {"domain": "mini", "reason_for_call": reason,
                             "known_info": "Your email is ada@example.com.", "unknown_info": None,
                             "task_instructions": task}}


def _action(aid: str, name: str, compare: list[str] | None = None, **arguments: Any) -> WireJSON:
    return {"action_id": aid, "requestor": "assistant", "name": name, "arguments": arguments,
            "info": None, "compare_args": compare}


TASKS: list[WireJSON] = [
    {"id": "cancel_pending", "description": {"purpose": "DB change and communicated refund", "relevant_policies": None,
                                             "notes": None},
     "user_scenario": _scenario("You want to cancel order o1.", "Ask to cancel order o1; once done, say thanks."),
     "initial_state": None,
     "evaluation_criteria": {
         "actions": [_action("find", "find_user_by_email", email="ada@example.com"),
                     _action("cancel", "cancel_pending_order", ["order_id"], order_id="o1", reason="no longer needed")],
         "env_assertions": [{"env_type": "assistant", "func_name": "order_has_status",
                             "arguments": {"order_id": "o1", "status": "cancelled"}, "assert_value": True,
                             "message": None}],
         "communicate_info": ["30.00"], "nl_assertions": None,
         "reward_basis": ["DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION"]}},
    {"id": "refuse_delivered", "description": {"purpose": "refusal: read-only gold actions", "relevant_policies": None,
                                               "notes": None},
     "user_scenario": _scenario("You want to cancel order o2.", "Insist once; accept a refusal."),
     "initial_state": None,
     "evaluation_criteria": {
         "actions": [_action("find", "find_user_by_email", email="ada@example.com"),
                     _action("look", "get_order_details", order_id="o2")],
         "env_assertions": None, "communicate_info": [], "nl_assertions": None, "reward_basis": ["DB"]}},
    {"id": "status_question", "description": {"purpose": "NL assertion", "relevant_policies": None, "notes": None},
     "user_scenario": _scenario("You wonder where order o2 is.", "Ask for the status of order o2."),
     "initial_state": None,
     "evaluation_criteria": {
         "actions": [_action("look", "get_order_details", order_id="o2")], "env_assertions": None,
         "communicate_info": None, "nl_assertions": ["The agent tells the customer that order o2 was delivered."],
         "reward_basis": ["DB", "NL_ASSERTION"]}},
]


def write_mini_domain(root: Path) -> Path:
    """The toy domain in the native layout under `root`; returns `root`."""
    base = root / "data" / "tau2"
    domain = base / "domains" / "mini"
    domain.mkdir(parents=True, exist_ok=True)
    (base / "user_simulator").mkdir(parents=True, exist_ok=True)
    (domain / "tasks.json").write_text(json.dumps(TASKS, indent=2), "utf-8")
    ids = [t["id"] for t in TASKS]
    (domain / "split_tasks.json").write_text(json.dumps({"base": ids, "train": ids[:2], "test": ids[2:]}), "utf-8")
    (domain / "policy.md").write_text(POLICY, "utf-8")
    (domain / "db.json").write_text(json.dumps(DB, indent=2), "utf-8")
    (base / "user_simulator" / "simulation_guidelines.md").write_text(GUIDELINES, "utf-8")
    return root
