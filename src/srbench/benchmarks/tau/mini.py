"""``mini``: sr-bench's own toy shop domain, run in process (tests and the demo).

This is NOT a tau2-bench domain and not tau2's code: it is a four-tool shop written for sr-bench so
that the τ³ loop, the environment protocol and every reward component can be exercised without the
tau2 interpreter. Its data live in the native layout (``data/tau2/domains/mini/``) like the real
domains'; a dataset holding it is a fixture, never a τ³ result.

Database (``db.json``): ``{"users": {id: {"name", "email", "orders": [ids]}},
"orders": {id: {"user_id", "status", "items": [{"name", "price"}], "total"}}}``.
Assistant tools: ``find_user_by_email``, ``get_order_details``, ``cancel_pending_order`` (only a
``pending`` order; it becomes ``cancelled`` with ``refund`` = total; the reason is not kept), ``transfer_to_human_agents``.
Assertion functions (``env_assertions``): ``order_has_status(order_id, status)``. No user tools.
The database hash is the SHA-256 of its canonical JSON.

This environment grades only its own data: a domain called ``mini`` whose policy or database is not the
toy's (``TOY_POLICY_SHA256``, ``TOY_DB_SHA256``; `toy_mismatch`) is refused at prepare and plan, so a
foreign domain of the same name is never graded on this code.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from srbench.cas.digest import canonical_json, sha256_bytes
from srbench.schemas.wire import WireJSON

TOY_POLICY_SHA256 = "8c3916cf110a41bab66acf51d28827a84156f2d34f61fe3e5d354af49b7e5836"   # the policy text
TOY_DB_SHA256 = "a4ec30748598cd15bff708897639f4f93ed3070d2446896c87d89baa65726b41"       # canonical JSON of db.json


def toy_mismatch(policy_sha256: str | None, db: Any) -> str | None:
    """Why a ``mini`` domain's data is not the toy environment's own (None: it is)."""
    got = sha256_bytes(canonical_json(db)) if isinstance(db, dict) else None
    wrong = [what for what, ok in (("policy", policy_sha256 == TOY_POLICY_SHA256), ("db.json", got == TOY_DB_SHA256))
             if not ok]
    if not wrong:
        return None
    return (f"τ³ domain mini: its {' and '.join(wrong)} differ from sr-bench's toy environment (policy sha256 "
            f"{TOY_POLICY_SHA256[:12]}…, db {TOY_DB_SHA256[:12]}…): a domain is graded only on environment code of "
            "its own, and sr-bench has none for this one")


class ToolError(Exception):
    """A tool refused the call; the agent sees ``Error: <message>``."""


def _fn(name: str, description: str, params: dict[str, str]) -> WireJSON:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {k: {"type": "string", "description": v}
                                                        for k, v in params.items()},
                       "required": list(params)}}}


TOOLS: tuple[WireJSON, ...] = (
    _fn("find_user_by_email", "Find a customer's user id by their email address.",
        {"email": "The customer's email address."}),
    _fn("get_order_details", "Get the status, items and total of an order.", {"order_id": "The order id, e.g. o1."}),
    _fn("cancel_pending_order", "Cancel a pending order and refund its total. Only pending orders can be cancelled.",
        {"order_id": "The order id.", "reason": "Why the customer cancels."}),
    _fn("transfer_to_human_agents", "Transfer the customer to a human agent.",
        {"summary": "A summary of the customer's issue."}),
)


class MiniShop:
    """One environment instance of the toy shop over its own copy of the database."""

    def __init__(self, db: WireJSON) -> None:
        if not isinstance(db, dict) or not isinstance(db.get("users"), dict) or not isinstance(db.get("orders"), dict):
            raise ToolError("the mini database needs 'users' and 'orders' objects")
        self.db = copy.deepcopy(db)

    def tool_schemas(self) -> list[WireJSON]:
        return [copy.deepcopy(t) for t in TOOLS]

    def db_hash(self) -> str:
        return sha256_bytes(canonical_json(self.db))

    def _order(self, order_id: Any) -> WireJSON:
        order = self.db["orders"].get(order_id) if isinstance(order_id, str) else None
        if not isinstance(order, dict):
            raise ToolError(f"order {order_id} not found")
        return order

    # -- tools ---------------------------------------------------------------------------------
    def find_user_by_email(self, email: str) -> str:
        for uid, user in sorted(self.db["users"].items()):
            if isinstance(email, str) and user.get("email", "").lower() == email.strip().lower():
                return str(uid)
        raise ToolError(f"no user with email {email}")

    def get_order_details(self, order_id: str) -> WireJSON:
        return {"order_id": order_id, **self._order(order_id)}

    def cancel_pending_order(self, order_id: str, reason: str) -> WireJSON:
        order = self._order(order_id)
        if order.get("status") != "pending":
            raise ToolError(f"order {order_id} is {order.get('status')} and cannot be cancelled")
        order["status"] = "cancelled"
        order["refund"] = order.get("total")
        return {"order_id": order_id, **order}

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- assertion functions -------------------------------------------------------------------
    def order_has_status(self, order_id: str, status: str) -> bool:
        return self._order(order_id).get("status") == status

    # -- dispatch ------------------------------------------------------------------------------
    def call(self, name: str | None, arguments: WireJSON) -> tuple[str, bool]:
        """(content, error) of one tool call, as the agent sees it."""
        if name is None or name not in {t["function"]["name"] for t in TOOLS}:
            return f"Error: Tool '{name}' not found.", True
        try:
            result = getattr(self, name)(**arguments)
        except ToolError as exc:
            return f"Error: {exc}", True
        except TypeError as exc:           # wrong or missing arguments
            return f"Error: {exc}", True
        return (result if isinstance(result, str) else json.dumps(result, sort_keys=True)), False

    def run_function(self, name: str, arguments: WireJSON) -> Any:
        """An initialization action or an assertion function (never a model-visible tool call)."""
        if name not in ("order_has_status", *(t["function"]["name"] for t in TOOLS)):
            raise ToolError(f"mini has no function {name}")
        return getattr(self, name)(**arguments)
