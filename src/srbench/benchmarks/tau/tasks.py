"""τ³ native files → cases: one case per task of a domain's ``base`` split.

Native layout (tau2-bench ``data/tau2/``): ``domains/<domain>/tasks.json`` (a list of tasks),
``split_tasks.json`` (``{"base": [task ids], ...}``), the domain's policy (``policy.md``; telecom
``main_policy.md`` + ``tech_support_manual.md``), its databases (``db.json``; telecom ``db.toml`` +
``user_db.toml``) and the user-simulator guidelines ``user_simulator/simulation_guidelines.md`` (and
``simulation_guidelines_tools.md`` for domains whose user has tools: telecom).

A case carries everything a cell needs except the environment itself:
- ``messages``: the agent's system prompt (the fixed instruction, then the domain policy);
- ``answer``: the task's ``evaluation_criteria`` (``reward_basis`` filled with tau2's default
  ``["DB", "COMMUNICATE"]`` when the task has none, which τ²-era data never has);
- ``metadata``: ``domain``, ``task_id``, the user simulator's system prompt (guidelines + scenario),
  ``initial_state``, the sha256 of every environment file and of the policy (a cell checks that the
  environment it runs on was built from the same files) and ``source_task_sha256``.
Case id ``tau3/<domain>/<task id>``; stratum = domain.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from srbench.cas.digest import canonical_json, sha256_bytes
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.schemas.text import shorten
from srbench.schemas.wire import WireJSON

DATA = "data/tau2"
TEXT_DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")
# sr-bench's own toy domain (benchmarks/tau/mini.py), run in process: tests and the demo only
LOCAL_DOMAINS: tuple[str, ...] = ("mini",)
MAX_LOCAL_DB = 64 * 1024        # a local toy domain's database travels in its cases
USER_TOOL_DOMAINS: frozenset[str] = frozenset({"telecom"})
GUIDELINES = f"{DATA}/user_simulator/simulation_guidelines.md"
GUIDELINES_TOOLS = f"{DATA}/user_simulator/simulation_guidelines_tools.md"
DEFAULT_BASIS: tuple[str, ...] = ("DB", "COMMUNICATE")
REWARD_TYPES: frozenset[str] = frozenset({"DB", "ENV_ASSERTION", "COMMUNICATE", "NL_ASSERTION", "ACTION"})
SPLIT = "base"

AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n- Send a message to the user.\n- Make a tool call.\n"
    "You cannot do both at the same time.\n\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)


def policy_files(domain: str) -> tuple[str, ...]:
    if domain == "telecom":
        return ("main_policy.md", "tech_support_manual.md")
    return ("policy.md",)


def env_files(domain: str) -> tuple[str, ...]:
    """The files the domain's environment is built from (their hashes are checked at run time)."""
    if domain == "telecom":
        return ("db.toml", "user_db.toml")
    return ("db.json",)


def domain_files(domain: str) -> tuple[str, ...]:
    base = f"{DATA}/domains/{domain}"
    return tuple(f"{base}/{n}" for n in ("tasks.json", "split_tasks.json", *policy_files(domain), *env_files(domain)))


def pinned_files() -> tuple[str, ...]:
    """Every repository-relative file of the pinned source (the three text domains)."""
    return tuple(f for d in TEXT_DOMAINS for f in domain_files(d)) + (GUIDELINES, GUIDELINES_TOOLS)


def locate(root: Path) -> dict[str, Path]:
    """The native files under a checkout (or under a ``tau2`` package directory, whose ``data/``
    has the same layout): every text domain present, and sr-bench's local toy domain if present."""
    root = Path(root)
    if not root.is_dir():
        raise InvalidInput(f"τ³ source path {root} is not a directory (give a tau2-bench checkout)")
    found: dict[str, Path] = {}
    domains = [d for d in (*TEXT_DOMAINS, *LOCAL_DOMAINS) if (root / DATA / "domains" / d / "tasks.json").is_file()]
    if not domains:
        raise InvalidInput(f"no {DATA}/domains/<domain>/tasks.json under {root} "
                           f"(domains: {', '.join(TEXT_DOMAINS)})")
    for d in domains:
        for name in domain_files(d):
            if not (root / name).is_file():
                raise InvalidInput(f"τ³ domain {d}: {name} is missing under {root}")
            found[name] = root / name
    for name in (GUIDELINES, GUIDELINES_TOOLS):
        if (root / name).is_file():
            found[name] = root / name
    if GUIDELINES not in found:
        raise InvalidInput(f"{GUIDELINES} is missing under {root}")
    if any(d in USER_TOOL_DOMAINS for d in domains) and GUIDELINES_TOOLS not in found:
        raise InvalidInput(f"{GUIDELINES_TOOLS} is missing under {root} (the telecom user has tools)")
    return found


def _json(files: dict[str, bytes], name: str) -> Any:
    try:
        return json.loads(files[name])
    except KeyError:
        raise InvalidInput(f"τ³ source has no {name}") from None
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{name} is not valid JSON") from exc


def _text(files: dict[str, bytes], name: str) -> str:
    try:
        return files[name].decode("utf-8")
    except KeyError:
        raise InvalidInput(f"τ³ source has no {name}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text") from exc


def domain_policy(files: dict[str, bytes], domain: str) -> str:
    base = f"{DATA}/domains/{domain}"
    if domain == "telecom":
        main, manual = (_text(files, f"{base}/{n}") for n in policy_files(domain))
        return (f"<main_policy>\n{main}\n</main_policy>\n"
                f"<tech_support_policy>\n{manual}\n</tech_support_policy>")
    return _text(files, f"{base}/policy.md")


def agent_prompt(policy: str) -> str:
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def _indent(text: str) -> str:
    return textwrap.indent(text, "\t")


def scenario_text(scenario: Any, where: str) -> str:
    """The user scenario as tau2 renders it for its user simulator (persona, then instructions)."""
    if not isinstance(scenario, dict) or "instructions" not in scenario:
        raise InvalidInput(f"{where}: user_scenario must be an object with instructions")
    ins = scenario["instructions"]
    if isinstance(ins, dict):
        for key in ("domain", "reason_for_call", "task_instructions"):
            if not isinstance(ins.get(key), str):
                raise InvalidInput(f"{where}: user_scenario.instructions.{key} must be text")
        lines = [f"Domain: {ins['domain']}", f"Reason for call:\n{_indent(ins['reason_for_call'])}"]
        for key, label in (("known_info", "Known info"), ("unknown_info", "Unknown info")):
            if ins.get(key) is not None:
                lines.append(f"{label}:\n{_indent(str(ins[key]))}")
        lines.append(f"Task instructions:\n{_indent(ins['task_instructions'])}")
        rendered = "\n".join(lines)
    elif isinstance(ins, str):
        rendered = ins
    else:
        raise InvalidInput(f"{where}: user_scenario.instructions must be text or an object")
    out = []
    if scenario.get("persona") is not None:
        out += ["Persona:", _indent(str(scenario["persona"]))]
    out += ["Instructions:", _indent(rendered)]
    return "\n".join(out)


def user_prompt(guidelines: str, scenario: str) -> str:
    return f"{guidelines}\n\n<scenario>\n{scenario}\n</scenario>".strip()


def criteria(task: WireJSON, where: str) -> WireJSON:
    """The task's evaluation criteria with its reward basis checked (tau2's default when absent)."""
    ec = task.get("evaluation_criteria")
    if ec is None:
        ec = {}
    if not isinstance(ec, dict):
        raise InvalidInput(f"{where}: evaluation_criteria must be an object")
    out = dict(ec)
    basis = ec.get("reward_basis")
    if basis is None:
        out["reward_basis"] = list(DEFAULT_BASIS)
        out["reward_basis_default"] = True
    elif not isinstance(basis, list) or any(b not in REWARD_TYPES for b in basis):
        raise InvalidInput(f"{where}: reward_basis {basis!r} must list only {', '.join(sorted(REWARD_TYPES))}")
    for key in ("actions", "env_assertions", "communicate_info", "nl_assertions"):
        if out.get(key) is not None and not isinstance(out[key], list):
            raise InvalidInput(f"{where}: evaluation_criteria.{key} must be a list or null")
    for i, a in enumerate(out.get("actions") or []):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not isinstance(a.get("arguments"), dict):
            raise InvalidInput(f"{where}: actions[{i}] needs a name and an arguments object")
    if any(not isinstance(s, str) for s in out.get("communicate_info") or []):
        raise InvalidInput(f"{where}: communicate_info must list strings")
    if any(not isinstance(s, str) for s in out.get("nl_assertions") or []):
        raise InvalidInput(f"{where}: nl_assertions must list strings")
    return out


def _local_db(files: dict[str, bytes], domain: str) -> Any:
    name = f"{DATA}/domains/{domain}/db.json"
    if len(files.get(name, b"")) > MAX_LOCAL_DB:
        raise InvalidInput(f"{name}: a local toy domain's database must be under {MAX_LOCAL_DB} bytes")
    return _json(files, name)


def domain_cases(files: dict[str, bytes], domain: str, *, benchmark: str, revision: str,
                 release: str | None) -> list[Case]:
    """The cases of one domain's base split, in tasks.json order."""
    base = f"{DATA}/domains/{domain}"
    tasks = _json(files, f"{base}/tasks.json")
    if isinstance(tasks, dict) and isinstance(tasks.get("tasks"), list):
        tasks = tasks["tasks"]
    if not isinstance(tasks, list):
        raise InvalidInput(f"{base}/tasks.json must be a list of tasks")
    splits = _json(files, f"{base}/split_tasks.json")
    if not isinstance(splits, dict) or not isinstance(splits.get(SPLIT), list):
        raise InvalidInput(f"{base}/split_tasks.json has no '{SPLIT}' list")
    wanted = [str(t) for t in splits[SPLIT]]
    by_id: dict[str, WireJSON] = {}
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or not isinstance(task.get("id"), str | int):
            raise InvalidInput(f"{base}/tasks.json[{i}] is not a task with an id")
        if str(task["id"]) in by_id:
            raise InvalidInput(f"{base}/tasks.json[{i}]: duplicate task id {shorten(str(task['id']))!r}")
        by_id[str(task["id"])] = task
    missing = [t for t in wanted if t not in by_id]
    if missing:
        raise InvalidInput(f"{base}/split_tasks.json '{SPLIT}' names {len(missing)} task(s) not in tasks.json "
                           f"(first: {missing[0]})")
    guidelines = _text(files, GUIDELINES_TOOLS if domain in USER_TOOL_DOMAINS else GUIDELINES)
    policy = domain_policy(files, domain)
    system = agent_prompt(policy)
    env_sha = {n: sha256_bytes(files[f"{base}/{n}"]) for n in env_files(domain)}
    local_db = _local_db(files, domain) if domain in LOCAL_DOMAINS else None
    cases = []
    for tid in dict.fromkeys(wanted):
        task = by_id[tid]
        where = f"{domain} task {tid}"
        state = task.get("initial_state")
        if state is not None and not isinstance(state, dict):
            raise InvalidInput(f"{where}: initial_state must be an object or null")
        meta = CaseMetadata(
            stratum=domain, source_revision=revision, domain=domain, task_id=tid, release=release,
            source_task_sha256=sha256_bytes(canonical_json(task)), initial_state=state or None,
            user_system_prompt=user_prompt(guidelines, scenario_text(task.get("user_scenario"), where)),
            user_tools=domain in USER_TOOL_DOMAINS, env_sha256=env_sha, policy_sha256=sha256_bytes(policy.encode()),
            **({"local_db": local_db} if local_db is not None else {}),
        )
        cases.append(Case(id=f"{benchmark}/{domain}/{tid}", benchmark=benchmark,
                          messages=[Message(role="system", content=system)], answer=criteria(task, where),
                          metadata=meta))
    return cases


def load_cases(files: dict[str, bytes], *, benchmark: str, revision: str, release: str | None) -> list[Case]:
    domains = [d for d in (*TEXT_DOMAINS, *LOCAL_DOMAINS) if f"{DATA}/domains/{d}/tasks.json" in files]
    if not domains:
        raise InvalidInput(f"τ³ needs {DATA}/domains/<domain>/tasks.json for one of {', '.join(TEXT_DOMAINS)}")
    cases: list[Case] = []
    for d in domains:
        cases += domain_cases(files, d, benchmark=benchmark, revision=revision, release=release)
    return cases
