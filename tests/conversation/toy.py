"""A toy multi-call benchmark for the tests: an agent with one `lookup` tool and a user simulator.

Native source: ``tasks.jsonl`` (one ``{"id", "question", "answer"}`` a line). A cell is a
conversation: the agent (the target under test, role subject) is called with the `lookup` tool; a
tool call is answered locally with ``fact: <answer>``; a text reply goes to the user simulator
(role user_simulator) as ``AGENT SAID (turn N): …``; the simulator's ``###STOP###`` ends the
conversation, anything else is the user's next message. The final text is the agent's last reply;
the cell is correct when it contains the answer. The trajectory is stored with ``session.store``.

`agent_script` is the fake server's script for both roles (see srbench.simulate.server): the agent
calls the tool until the conversation holds a tool result, then answers with the fact it read; the
simulator asks once "Are you sure?" and then stops. `register()` adds the benchmark to the registry
(in-process services; `toy_serve.py` does it for a service subprocess).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srbench.benchmarks import REGISTRY
from srbench.benchmarks.base import Benchmark, Grade, SourcePin
from srbench.benchmarks.conversation import CellSession, ConversationOutcome
from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.simulate.scripted import Scripted, tool_call

LOOKUP = {"type": "function", "function": {"name": "lookup", "description": "look up the fact asked for",
                                           "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
MAX_TURNS = 4
STOP = "###STOP###"


class ToyAgent(Benchmark):
    id = "toy-agent"
    title = "Toy agent (tests)"
    capability = "tool use with a simulated user"
    kind = "agent"
    weight = 10
    profiles = {"smoke": 2, "quick": 3, "standard": 3}
    source = SourcePin(url="https://example.invalid/toy-agent", revision="toy-1", files=("tasks.jsonl",))
    grader_version = "toy-agent-contains-v1"
    multi_call = True
    conversation_roles = ("user_simulator",)

    def locate(self, root: Path) -> dict[str, Path]:
        root = Path(root)
        return {"tasks.jsonl": root if root.is_file() else root / "tasks.jsonl"}

    def load(self, files: dict[str, bytes], *, seed: int, revision: str) -> list[Case]:
        cases = []
        for line in files["tasks.jsonl"].splitlines():
            t = json.loads(line)
            cases.append(Case(id=f"toy-agent/{t['id']}", benchmark=self.id,
                              messages=[Message(role="user", content=t["question"])], answer=t["answer"],
                              metadata=CaseMetadata(stratum="all", source_revision=revision)))
        return cases

    def grade(self, case: Case, text: str | None) -> Grade:
        ok = bool(text) and str(case.answer) in str(text)
        return Grade(correct=ok, status="correct" if ok else "incorrect", extracted=text)

    async def converse(self, case: Case, session: CellSession) -> ConversationOutcome:
        msgs: list[dict[str, Any]] = [m.model_dump() for m in case.messages]
        final = None
        turn = 0
        for turn in range(1, MAX_TURNS + 1):
            reply = await session.call(msgs, tools=[LOOKUP], tool_choice="auto")
            if reply.status != "completed":
                return ConversationOutcome(final_text=final, error_class="agent_call_failed", error=reply.error)
            if reply.tool_calls:
                msgs.append({"role": "assistant", "content": reply.text or None, "tool_calls": reply.tool_calls})
                msgs += [{"role": "tool", "tool_call_id": tc["id"], "content": f"fact: {case.answer}"}
                         for tc in reply.tool_calls]
                continue
            final = reply.text
            msgs.append({"role": "assistant", "content": final})
            user = await session.call([{"role": "system", "content": "You are the user."},
                                       {"role": "user", "content": f"AGENT SAID (turn {turn}): {final}"}],
                                      role="user_simulator")
            if user.status != "completed":
                return ConversationOutcome(final_text=final, error_class="simulator_failed", error=user.error)
            if STOP in (user.text or ""):
                break
            msgs.append({"role": "user", "content": user.text})
        trajectory = session.store({"kind": "toy-trajectory", "messages": msgs})
        return ConversationOutcome(final_text=final, outputs={"turns": turn}, trajectory=trajectory)


def agent_script(body: dict[str, Any]) -> Scripted | None:
    """The fake server's behaviour for the toy (agent and user simulator); None for anything else."""
    msgs = body.get("messages") or []
    if body.get("tools"):
        facts = [m["content"] for m in msgs if m.get("role") == "tool"]
        if not facts:
            return Scripted(content="", tool_calls=(tool_call("lookup", {"q": msgs[0]["content"]}),))
        return Scripted(content=f"The answer is {facts[-1].removeprefix('fact: ')}.")
    last = str(msgs[-1].get("content") if msgs else "")
    if last.startswith("AGENT SAID"):
        return Scripted(content="Are you sure?" if "(turn 2)" in last else STOP)
    return None


def write_tasks(path: Path, n: int = 8) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"t{i}", "question": f"What is the code word number {i}?", "answer": f"word-{i}"}
            for i in range(n)]
    (path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def register() -> None:
    REGISTRY.setdefault(ToyAgent.id, ToyAgent())
