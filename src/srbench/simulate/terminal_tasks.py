"""Three toy Terminal-Bench tasks in the native layout, and scripted agents that play them.

`write_terminal_bench(root, base_image)` writes ``root/tasks/<task>/`` (task.toml, instruction.md,
environment/Dockerfile + assets, tests/test.sh + a test file, solution/solve.sh):

- ``hello-file`` (easy, 2.1 form): write one line to ``/app/hello.txt``; reward.txt;
- ``fix-greeting`` (medium, 2.0 form with ``memory = "1G"``): repair a shell script copied in from
  the build context; reward.json;
- ``never-rewards`` (hard, 2.1 form): its test.sh checks but never writes a reward file (a trial error).

Every Dockerfile starts ``FROM base_image``, which must already be on the Docker engine; the tests
need no network (bash and python3 from the base image). `local_base_image` finds one: the grading
base image that ``sr-bench setup --build-sandbox`` imports (never pulled). `SCRIPTS` are the tool-call
scripts a fake agent plays per task: ``solve`` solves it, ``fail`` does something useless and stops,
``slow`` runs one long command (to be interrupted). `agent_script` makes the simulated OpenAI
endpoint play them.

`write_demo_tasks(root, base_image)` writes the demo's two tasks (``toy-hello-file``,
``toy-fix-greeting``, named ``sr-bench-toy/...``): sr-bench's toy tasks, not Terminal-Bench data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srbench.schemas.wire import WireJSON
from srbench.simulate.scripted import Scripted, ScriptHook
from srbench.simulate.scripted import tool_call as scripted_call

TASK_21 = """schema_version = "1.1"

[task]
name = "{org}/{name}"
description = "{description}"
keywords = ["fixture"]

[metadata]
author_name = "sr-bench"
difficulty = "{difficulty}"
category = "{category}"
tags = ["fixture", "bash"]
expert_time_estimate_min = 1
junior_time_estimate_min = 2

[verifier]
timeout_sec = 60

[verifier.env]
EXPECTED_GREETING = "Hello, sr-bench!"

[agent]
timeout_sec = 300

[environment]
build_timeout_sec = 120
docker_image = "{org}/{name}:20260101"
cpus = 1
memory_mb = 512
storage_mb = 1024
gpus = 0
allow_internet = false
"""

TASK_20 = """version = "1.0"

[metadata]
author_name = "sr-bench"
author_email = "fixtures@example.invalid"
difficulty = "{difficulty}"
category = "{category}"
tags = ["fixture", "debugging"]

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 300.0

[environment]
build_timeout_sec = 120.0
cpus = 1
memory = "1G"
storage = "2G"
"""

HELLO_TEST = """#!/bin/bash
mkdir -p /logs/verifier
if python3 /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
HELLO_CHECK = """import os
import sys

want = os.environ.get("EXPECTED_GREETING", "") + "\\n"
try:
    got = open("/app/hello.txt", encoding="utf-8").read()
except OSError as exc:
    print("no /app/hello.txt:", exc)
    sys.exit(1)
print("found", repr(got))
sys.exit(0 if got == want else 1)
"""
GREET_BROKEN = """#!/bin/bash
# prints a greeting for its first argument
echo "Helo, $2"
"""
GREET_TEST = """#!/bin/bash
mkdir -p /logs/verifier
out="$(bash /app/greet.sh Ada 2>&1)"
echo "greet.sh Ada -> $out"
if [ "$out" = "Hello, Ada!" ] && [ "$(bash /app/greet.sh Bob)" = "Hello, Bob!" ]; then
  echo '{"reward": 1.0}' > /logs/verifier/reward.json
else
  echo '{"reward": 0.0}' > /logs/verifier/reward.json
fi
"""
NEVER_TEST = """#!/bin/bash
# a broken verifier: it checks, but writes its verdict to the wrong file
mkdir -p /logs/verifier
if [ -f /app/done.txt ]; then echo passed > /logs/verifier/result.txt; else echo failed > /logs/verifier/result.txt; fi
echo "verifier finished without a reward file"
"""

TASKS: dict[str, WireJSON] = {
    "hello-file": {
        "toml": TASK_21, "difficulty": "easy", "category": "file-operations",
        "description": "Write a greeting to a file",
        "instruction": "Create the file /app/hello.txt containing exactly one line: Hello, sr-bench!\n",
        "dockerfile": "FROM {base}\nWORKDIR /app\n", "assets": {},
        "tests": {"test.sh": HELLO_TEST, "test_outputs.py": HELLO_CHECK},
        "solution": "#!/bin/bash\necho 'Hello, sr-bench!' > /app/hello.txt\n",
    },
    "fix-greeting": {
        "toml": TASK_20, "difficulty": "medium", "category": "debugging",
        "description": "Repair a shell script",
        "instruction": ("The script /app/greet.sh should print `Hello, NAME!` where NAME is its first argument, "
                        "e.g. `bash /app/greet.sh Ada` prints `Hello, Ada!`. It is broken: fix it.\n"),
        "dockerfile": "FROM {base}\nWORKDIR /app\nCOPY greet.sh /app/greet.sh\n", "assets": {"greet.sh": GREET_BROKEN},
        "tests": {"test.sh": GREET_TEST},
        "solution": "#!/bin/bash\nprintf '#!/bin/bash\\necho \"Hello, $1!\"\\n' > /app/greet.sh\n",
    },
    "never-rewards": {
        "toml": TASK_21, "difficulty": "hard", "category": "system-administration",
        "description": "A task whose verifier never writes a reward",
        "instruction": "Create the file /app/done.txt (any content).\n",
        "dockerfile": "FROM {base}\nWORKDIR /app\n", "assets": {},
        "tests": {"test.sh": NEVER_TEST},
        "solution": "#!/bin/bash\ntouch /app/done.txt\n",
    },
}

# per task: the commands a scripted agent sends (one tool call per turn), then its final words
SCRIPTS: dict[str, dict[str, list[str]]] = {
    "hello-file": {"solve": ["ls -la /app", "echo 'Hello, sr-bench!' > /app/hello.txt", "cat /app/hello.txt"],
                   "fail": ["echo 'Hello, world' > /app/hello.txt"]},
    "fix-greeting": {"solve": ["cat /app/greet.sh",
                               "printf '#!/bin/bash\\necho \"Hello, $1!\"\\n' > /app/greet.sh && bash /app/greet.sh Ada"],
                     "fail": ["cat /app/greet.sh", "sed -i 's/Helo/Hello/' /app/greet.sh && bash /app/greet.sh Ada"]},
    "never-rewards": {"solve": ["touch /app/done.txt"], "fail": ["true"]},
}


BASE_REPOS = ("sr-bench-grader-base", "sr-bench-grader")   # imported by `sr-bench setup --build-sandbox`
DEMO_TASKS = ("hello-file", "fix-greeting")                 # the demo's toy tasks (every trial gets a reward)
DEMO_REVISION = "sr-bench-toy-tasks-v1"


def write_task(root: Path, name: str, base_image: str, *, org: str = "sr-bench-fixtures",
               dirname: str | None = None) -> Path:
    spec = TASKS[name]
    d = Path(root) / (dirname or name)
    for sub in ("environment", "tests", "solution"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "task.toml").write_text(spec["toml"].format(name=name, org=org, difficulty=spec["difficulty"],
                                                      category=spec["category"], description=spec["description"]))
    (d / "instruction.md").write_text(spec["instruction"])
    (d / "environment" / "Dockerfile").write_text(spec["dockerfile"].format(base=base_image))
    for rel, text in spec["assets"].items():
        (d / "environment" / rel).write_text(text)
    for rel, text in spec["tests"].items():
        (d / "tests" / rel).write_text(text)
    (d / "solution" / "solve.sh").write_text(spec["solution"])
    return d


def write_terminal_bench(root: Path, base_image: str) -> Path:
    """A checkout-like folder ``root`` with ``tasks/<task>/`` for the three toy tasks; returns root."""
    for name in TASKS:
        write_task(Path(root) / "tasks", name, base_image)
    return Path(root)


def write_demo_tasks(root: Path, base_image: str) -> Path:
    """The demo's source: ``root/tasks/toy-<task>/`` for `DEMO_TASKS` (sr-bench's toy tasks); returns root."""
    for name in DEMO_TASKS:
        write_task(Path(root) / "tasks", name, base_image, org="sr-bench-toy", dirname=f"toy-{name}")
    return Path(root)


def local_base_image(api: Any) -> str | None:
    """A tag of the grading base image (else the grading image) on the engine `api`, or None."""
    for repo in BASE_REPOS:
        for img in api.images(name=repo):
            tags = sorted(t for t in img.get("RepoTags") or [] if t.startswith(repo + ":"))
            if tags:
                return tags[0]
    return None


def agent_script(plays: dict[str, str], slow_command: str = "sleep 25", router: Any = None) -> ScriptHook:
    """A script hook for the simulated endpoint: a request to model M with tools gets the next
    command of `SCRIPTS[task][plays[M]]` (the task found from the instruction, the position from the
    tool results so far) as a ``terminal`` tool call, then a final answer without tool calls. For
    the simulated router (`router`, a RouterRule) M is the model its rule picks for this turn."""
    by_instruction = {spec["instruction"]: name for name, spec in TASKS.items()}

    def hook(body: WireJSON) -> Scripted | None:
        model = str(body.get("model"))
        if router is not None and model == router.name and isinstance(body.get("messages"), list):
            model = router.route(body["messages"])[0]
        play = plays.get(model)
        if play is None or not body.get("tools"):
            return None
        messages = body.get("messages") or []
        task = next((by_instruction.get(m.get("content")) for m in messages if m.get("role") == "user"), None)
        if task is None:
            return Scripted(content="I do not know this task.")
        commands = [slow_command] if play == "slow" else SCRIPTS[task][play]
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < len(commands):
            return Scripted(content="", tool_calls=(scripted_call("terminal", {"command": commands[done]},
                                                                  f"call_{done}"),))
        return Scripted(content=f"Done with {task}.")

    return hook


def tool_call(call_id: str, command: str) -> dict[str, object]:
    return {"id": call_id, "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": command})}}
