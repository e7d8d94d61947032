"""Plan problems: one readable line per manifest or frozen-plan problem, and one error listing them (capped)."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from srbench.errors import InvalidInput
from srbench.schemas.plan import UNION_TAGS

SECRET_FIELDS = frozenset({"api_key", "preview_api_key"})


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif p in UNION_TAGS or str(p).startswith("function-"):
            continue                      # union member / validator wrappers are not fields
        else:
            out += ("." if out else "") + str(p)
    return out


MAX_PROBLEMS = 50                 # problems listed in one error; the rest are counted


class Problems(list[str]):
    """Problem lines, of which `more` further ones were not listed (the list is capped)."""

    more: int = 0


def pydantic_problems(exc: ValidationError, prefix: str = "") -> list[str]:
    """One readable line per validation error: `where: what`, `where` naming the field. Linear in the
    errors and capped: the first `MAX_PROBLEMS` distinct lines, the rest counted in `Problems.more`."""
    out: dict[str, None] = {}
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    seen = 0
    for err in errors:
        if len(out) >= MAX_PROBLEMS:
            break
        seen += 1
        out.setdefault(_problem_line(err, prefix))
    problems = Problems(out)
    problems.more = len(errors) - seen
    return problems


def _problem_line(err: ErrorDetails, prefix: str) -> str:
    loc = _loc(tuple(err["loc"]))
    msg = err["msg"].removeprefix("Value error, ")
    last = err["loc"][-1] if err["loc"] else None
    if err["type"] == "extra_forbidden" and last in SECRET_FIELDS:
        msg = (f"not accepted: a secret is never stored; put the key in an environment variable and give "
               f"its NAME in {last}_env (TG-5)")
    elif err["type"] == "extra_forbidden" and "target-ref" in err["loc"]:
        msg = ("unknown field: a registered target is referenced by id alone (an inline target needs kind, "
               "base_url and model)")
    elif err["type"] == "extra_forbidden":
        msg = "unknown field"
    head, _, last_name = loc.rpartition(".")
    if loc and msg.startswith((last_name + ".", last_name + " ")):
        # the message already names the field ("limits.idle_timeout_s must ...")
        return f"{prefix}{head + '.' if head else ''}{msg}"
    return f"{prefix}{loc}: {msg}" if loc else f"{prefix}{msg}"


def fail(problems: list[str], what: str = "manifest") -> InvalidInput:
    """One error listing at most `MAX_PROBLEMS` problems and counting the rest."""
    more = getattr(problems, "more", 0) + max(0, len(problems) - MAX_PROBLEMS)
    shown = problems[:MAX_PROBLEMS]
    if len(shown) == 1 and not more:
        return InvalidInput(f"{what}: {shown[0]}")
    tail = f"; and {more} more (the first {len(shown)} are listed)" if more else ""
    return InvalidInput(f"{what} has {len(shown) + more} problems: " + "; ".join(shown) + tail)
