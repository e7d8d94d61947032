"""Terminal-Bench trial overhead on the Docker engine DOCKER_HOST names: what the harness adds per trial
and per command, against a baseline measured in the same run.

Run by hand (needs an engine with the grading base image: `sr-bench setup --build-sandbox`):
    python benchmarks/terminal_bench.py [COMMANDS]

Measures, on a task image built from a local tag on ``sr-bench-grader-base``:
- image: the first build, then the cached lookup (the key is the content; no rebuild);
- trial: container start + remove;
- command: one `terminal` command (`true`) in the trial's persistent container, against the baseline
  of a fresh one-shot container per command (create, start, wait, remove) — the ratio is what keeping
  one container per trial saves;
- a whole toy trial (hello-file, 3 commands + verifier) through the agent loop with a scripted session.
Prints the medians and the ratio; everything it creates is removed.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from srbench.benchmarks import get
from srbench.benchmarks.conversation import Reply
from srbench.benchmarks.sources import read_files
from srbench.benchmarks.terminal_bench.tasks import executable
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.sandbox import task_container as tc
from srbench.simulate.terminal_tasks import SCRIPTS, tool_call, write_terminal_bench


class Session:
    def __init__(self, commands: list[str]) -> None:
        self.replies = [Reply(i, "subject", "b", "completed", None, [tool_call(f"c{i}", c)]) for i, c in
                        enumerate(commands)] + [Reply(len(commands), "subject", "b", "completed", "done")]
        self.cell_id, self.target_id, self.seed = "bench", "b", 1

    async def call(self, messages, **kw):  # type: ignore[no-untyped-def]
        return self.replies.pop(0)

    def store(self, value):  # type: ignore[no-untyped-def]
        return digest_bytes(value if isinstance(value, bytes) else canonical_json(value))

    def remaining_s(self) -> float:
        return 1e6


def timed(fn, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    api = tc.engine()
    src = next((t for img in api.images(name="sr-bench-grader-base") for t in img.get("RepoTags") or []), None)
    if src is None:
        sys.exit("no sr-bench-grader-base image on the engine: run `sr-bench setup --build-sandbox` first")
    scope = "srb-bench-" + secrets.token_hex(4)
    tc.set_scope(scope)
    repo = f"srb-tbench-bench-{secrets.token_hex(4)}"
    api.tag(src, repo, "base")
    base = f"{repo}:base"
    try:
        env = {"Dockerfile": f"FROM {base}\nWORKDIR /app\n".encode()}
        t0 = time.perf_counter()
        image = tc.ensure_image(api, env, where="bench", executable=executable)
        build_s = time.perf_counter() - t0
        cached = timed(lambda: tc.ensure_image(api, env, where="bench", executable=executable), 5)
        limits = tc.ContainerLimits(cpus=1, memory_mb=256)
        trial = timed(lambda: tc.TaskContainer(api, image, limits, cell="bench").remove(), max(3, n // 4))
        box = tc.TaskContainer(api, image, limits, cell="bench")
        try:
            box.exec("true", 10)
            persistent = timed(lambda: box.exec("true", 10), n)
        finally:
            box.remove()

        def one_shot() -> None:
            cid = api.create_container(image.image_id, command=["true"], network_disabled=True,
                                       labels={tc.OWNED: "task-container", tc.SCOPE: scope},
                                       host_config=api.create_host_config(network_mode="none"))["Id"]
            try:
                api.start(cid)
                api.wait(cid, timeout=30)
            finally:
                api.remove_container(cid, force=True)
        fresh = timed(one_shot, n)
        root = write_terminal_bench(Path(tempfile.mkdtemp(prefix="sr-bench-tb-")) / "tb", base)
        bench = get("terminal-bench-2.1")
        case = next(c for c in bench.load(read_files(bench.locate(root)), seed=1, revision="bench")
                    if c.metadata.task == "hello-file")
        whole = timed(lambda: asyncio.run(bench.converse(case, Session(SCRIPTS["hello-file"]["solve"]))), 3)
        med = statistics.median
        print(f"image build (first)        {build_s * 1000:8.1f} ms")
        print(f"image lookup (cached)      {med(cached) * 1000:8.1f} ms")
        print(f"trial container start+rm   {med(trial) * 1000:8.1f} ms")
        print(f"command in trial container {med(persistent) * 1000:8.1f} ms  (n={n})")
        print(f"command, fresh container   {med(fresh) * 1000:8.1f} ms  (baseline, n={n})")
        print(f"ratio fresh / persistent   {med(fresh) / med(persistent):8.2f}x")
        print(f"whole toy trial (3 cmds + verifier, scripted agent) {med(whole) * 1000:8.1f} ms")
    finally:
        for c in tc.owned_containers(api, scope):
            api.remove_container(c["Id"], force=True)
        tc.remove_images(api, scope)
        api.remove_image(base)


if __name__ == "__main__":
    main()
