"""A real local Ray cluster for the Ray grading backend's test (issue 31, item 4).

Run inside a network namespace that has only loopback (tests/sandbox/test_ray_grading.py does
``unshare -n`` and ``ip link set lo up``), so that the nodes register as 127.0.0.1 and nothing leaves
the host. `Cluster` starts a head (no CPUs) and worker nodes (one CPU and a custom resource each),
each with ``ray start --block`` so that every process of a node descends from that command, and stops
them by their PIDs: never ``ray stop``, which ends every Ray process on the host.

``python -m sandbox.ray_cluster OUT.json`` (from tests/) runs the scenario and writes what it saw.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

PORT = 6379


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it (read from /proc; no psutil)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Cluster:
    def __init__(self, workers: int = 2, pids_file: str | None = None) -> None:
        self.tmp = tempfile.mkdtemp(prefix="srray", dir="/tmp")      # short: Ray's socket paths are long
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Any] = {}
        self.workers = workers
        self.pids_file = pids_file          # each node's `ray start` PID, written as it starts

    def start(self) -> None:
        """The head, then each worker node once the one before it is up."""
        workers = self.workers
        common = ["--block", "--node-ip-address=127.0.0.1", "--disable-usage-stats", f"--temp-dir={self.tmp}",
                  "--object-store-memory=78643200"]
        self._start("head", ["--head", f"--port={PORT}", "--num-cpus=0", "--include-dashboard=false", *common,
                             *self._ports(21000)])
        self._wait_port(PORT, 120)
        for i in range(workers):     # one after another: nodes starting at once can pick the same socket name
            name = f"grader_{chr(ord('a') + i)}"
            self._start(name, [f"--address=127.0.0.1:{PORT}", "--num-cpus=1", f"--resources={json.dumps({name: 1})}",
                               *common, *self._ports(22000 + 1000 * i)])
            self._wait_started(name, 180)

    def _wait_started(self, name: str, timeout_s: float) -> None:
        """Until `ray start --block` says the node is up; RuntimeError when it ended or took too long."""
        log = Path(self.tmp) / f"{name}.log"
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if "will now block forever" in log.read_text(errors="replace"):
                return
            if self.nodes[name].poll() is not None:
                raise RuntimeError(f"Ray node {name} did not start: {log.read_text(errors='replace')[-400:]}")
            time.sleep(0.3)
        raise RuntimeError(f"Ray node {name} did not start within {timeout_s:.0f} s")

    @staticmethod
    def _ports(base: int) -> list[str]:
        """Distinct ports per node: nodes on one address must not share any."""
        return [f"--node-manager-port={base + 1}", f"--object-manager-port={base + 2}",
                f"--metrics-export-port={base + 3}", f"--dashboard-agent-listen-port={base + 4}",
                f"--dashboard-agent-grpc-port={base + 5}", f"--runtime-env-agent-port={base + 6}",
                f"--min-worker-port={base + 100}", f"--max-worker-port={base + 199}"]

    def _start(self, name: str, args: list[str]) -> None:
        self.logs[name] = open(Path(self.tmp) / f"{name}.log", "wb")     # noqa: SIM115 - closed in stop()
        env = {**os.environ, "RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "5"}
        self.nodes[name] = subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", *args],
                                            stdout=self.logs[name], stderr=subprocess.STDOUT, env=env)
        if self.pids_file:
            Path(self.pids_file).write_text(json.dumps([p.pid for p in self.nodes.values()]))

    @staticmethod
    def _wait_port(port: int, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the Ray head did not listen on {port}")

    def wait_workers(self, timeout_s: float) -> int:
        """Connect the client and wait until every worker node has registered; their CPUs."""
        from srbench.sandbox.ray_backend import connect

        ray = connect(f"127.0.0.1:{PORT}")
        want = len(self.nodes) - 1
        end = time.monotonic() + timeout_s
        while True:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            if cpus >= want or time.monotonic() > end:
                return cpus
            time.sleep(0.5)

    def node_running(self, marker: str) -> str | None:
        """The worker node one of whose processes' command line holds `marker` (Ray names a worker
        process after the task it runs: ``ray::execute_job``)."""
        for name, proc in self.nodes.items():
            if name != "head" and any(marker in cmdline(p) for p in descendants(proc.pid)[1:]):
                return name
        return None

    def kill(self, name: str) -> int:
        """SIGKILL every process of one node, by PID; returns how many."""
        pids = descendants(self.nodes[name].pid)
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.nodes[name].wait(timeout=30)
        return len(pids)

    def stop(self) -> None:
        """Every process of every node, by PID (whatever fails for one node, the others are stopped)."""
        for name in list(self.nodes):
            try:
                if self.nodes[name].poll() is None:
                    self.kill(name)
                else:
                    stop_tree(self.nodes[name].pid)
            except Exception:  # noqa: BLE001 - the next node still goes
                stop_tree(self.nodes[name].pid)
        for f in self.logs.values():
            f.close()


def stop_tree(root: int) -> None:
    """SIGKILL `root` and everything under it, by PID."""
    for p in descendants(root):
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


SLOW = "import time\ntime.sleep(6)\na, b = map(int, input().split())\nprint(a + b)\n"


def scenario(out_path: str) -> None:
    from srbench.sandbox import open_sandbox
    from srbench.sandbox.base import Limits

    seen: dict[str, Any] = {}
    cluster = Cluster(pids_file=out_path + ".pids")
    try:
        cluster.start()
    except Exception as exc:  # noqa: BLE001 - a node that did not start: told to the test, all stopped
        seen["error"] = f"{type(exc).__name__}: {exc}"
    if "error" in seen:
        Path(out_path).write_text(json.dumps(seen))
        cluster.stop()
        shutil.rmtree(cluster.tmp, ignore_errors=True)
        os._exit(0)
    try:
        local = open_sandbox("bwrap")
        t0 = time.monotonic()
        seen["workers_up"] = cluster.wait_workers(180)
        sandbox = open_sandbox("ray")
        seen["open_s"] = round(time.monotonic() - t0, 2)
        seen["slots"] = sandbox.slots
        seen["receipt_backend"] = sandbox.receipt().backend
        seen["receipt_equal"] = sandbox.receipt(Limits()).digest() == local.receipt(Limits()).digest()
        t0 = time.monotonic()
        seen["lcb_run"] = lcb_run(sandbox, Path(cluster.tmp))
        seen["lcb_run_s"] = round(time.monotonic() - t0, 2)
        t0 = time.monotonic()
        seen["tb_run"] = tb_run(Path(cluster.tmp))
        seen["tb_run_s"] = round(time.monotonic() - t0, 2)
        if seen["workers_up"] < 2:
            raise RuntimeError(f"only {seen['workers_up']} of 2 worker nodes registered")
        lost_worker(sandbox, cluster, seen)
    except Exception as exc:  # noqa: BLE001 - told to the test
        seen["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        Path(out_path).write_text(json.dumps(seen))
        try:
            cluster.stop()
        finally:
            shutil.rmtree(cluster.tmp, ignore_errors=True)
            os._exit(0)          # the Ray client's threads may not outlive its cluster


def lost_worker(sandbox: Any, cluster: Cluster, seen: dict[str, Any]) -> None:
    """Right and wrong programs graded on the cluster; then a slow one whose node is killed mid-grade."""
    from srbench.sandbox.base import Limits
    from srbench.sandbox.verdicts import lcb_verdict

    limits = Limits(memory_mb=256, pids=48, wall_s=60, job_wall_s=20, cpu_s=20)

    def job(code: str) -> dict[str, Any]:
        return {"module": "lcb_child.py", "input": {"mode": "stdin", "code": code, "inputs": ["2 3\n"],
                                                    "outputs": ["5"], "fn_name": None, "timeout": 15}}
    seen["quick"] = [lcb_verdict(r)[0] for r in sandbox.run_jobs(
        [job("a, b = map(int, input().split())\nprint(a + b)"), job("print(4)")], limits)]
    result: dict[str, Any] = {}

    def slow() -> None:
        try:
            result["verdict"] = lcb_verdict(sandbox.run_jobs([job(SLOW)], limits)[0])[0]
        except Exception as exc:  # noqa: BLE001 - told to the test
            result["error"] = f"{type(exc).__name__}: {exc}"
    t = threading.Thread(target=slow)
    t.start()
    end = time.monotonic() + 60
    victim = None
    while victim is None and time.monotonic() < end and t.is_alive():
        victim = cluster.node_running("ray::execute_job")
        time.sleep(0.2)
    seen["killed"] = victim
    if victim is not None:
        time.sleep(1.0)                                   # mid-grade: the program is sleeping
        seen["killed_pids"] = cluster.kill(victim)
    t.join(timeout=240)
    seen["after_kill"] = result


def lcb_run(sandbox: Any, tmp: Path) -> dict[str, Any]:
    """A LiveCodeBench smoke run through the real service, graded on the cluster: its report's figures
    and receipts."""
    from service.helpers import Api, freeze, manifest, single
    from srbench.client.embedded import EmbeddedService
    from srbench.simulate import samples
    from srbench.simulate.behaviour import SimModel, load_answer_key
    from srbench.simulate.thread import SimulatorThread
    from srbench.stages.grading import code as code_grade

    for name in ("SR_BENCH_OBJECTS_URL", "SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_TOKEN_ENV"):
        os.environ.pop(name, None)
    os.environ["SR_BENCH_HOME"] = str(tmp / "home")
    code_grade.use_sandbox(sandbox)
    with EmbeddedService(tmp / "store") as svc:
        api = Api(svc.url, svc.token)
        src = samples.write_livecodebench(tmp / "lcb")
        ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "smoke",
                                                 "source_path": str(src), "revision": "synthetic"})
        models = [SimModel("good", skill=1.0), SimModel("bad", skill=0.0)]
        with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
            api.ok("POST", "/targets", {"targets": [single("good", sim.v1_url, "good"),
                                                    single("bad", sim.v1_url, "bad")]})
            run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "good"},
                                                                                          {"id": "bad"}]))})["id"],
                           timeout=240)
        rep = api.ok("GET", f"/runs/{run['id']}/report")
        api.close()
    return {"status": run["status"], "correct": {t["target_id"]: t["correct"] for t in rep["summary"]["targets"]},
            "receipts": rep["provenance"].get("sandbox_receipts")}



def tb_run(tmp: Path) -> dict[str, Any]:
    """A Terminal-Bench run (three fixture tasks, one agent that solves) through the service with
    SR_BENCH_SANDBOX=ray: every trial's container on a worker's engine (the service's own process
    cannot open one: `_open` raises here)."""
    import secrets

    from service.helpers import Api, freeze, manifest, single
    from srbench.benchmarks.terminal_bench import environment
    from srbench.client.embedded import EmbeddedService
    from srbench.sandbox import task_container as tc
    from srbench.sandbox.base import SandboxFault
    from srbench.service.store.task_resources import scope_for
    from srbench.simulate.behaviour import SimModel
    from srbench.simulate.terminal_tasks import agent_script, local_base_image, write_terminal_bench
    from srbench.simulate.thread import SimulatorThread

    try:
        api_docker = tc.engine(timeout_s=20)
    except SandboxFault as exc:
        return {"skipped": f"no Docker engine: {exc.message}"}
    src_image = local_base_image(api_docker)
    if src_image is None:
        return {"skipped": "no sr-bench-grader-base image on the Docker engine"}

    def no_local(*a: Any, **k: Any) -> Any:
        raise AssertionError("a trial's container was opened in the service's process")
    environment.DockerTaskEnvironment._open = no_local  # type: ignore[method-assign]
    os.environ["SR_BENCH_SANDBOX"] = "ray"
    repo = f"srb-tbench-ray-{secrets.token_hex(4)}"
    api_docker.tag(src_image, repo, "base")
    store = tmp / "tb-store"
    try:
        with EmbeddedService(store) as svc:
            api = Api(svc.url, svc.token)
            src = write_terminal_bench(tmp / "tb", f"{repo}:base")
            ds = api.ok("POST", "/datasets/prepare", {"benchmark": "terminal-bench-2.1", "profile": "quick",
                                                     "source_path": str(src), "revision": "fixture-1"})
            with SimulatorThread(models=[SimModel("agent-solver", skill=1.0)],
                                 script=agent_script({"agent-solver": "solve"})) as sim:
                api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url, "agent-solver")]})
                limits = {"concurrency": 2, "total_timeout_s": 20, "idle_timeout_s": 10, "case_timeout_s": 120,
                          "max_run_seconds": 600}
                plan = freeze(api, manifest(ds, [{"id": "solver"}], limits=limits))
                run = api.wait(api.ok("POST", "/runs", {"manifest": plan})["id"], timeout=400)
            rows = api.ok("GET", f"/runs/{run['id']}/results")["results"]
            out: dict[str, Any] = {"status": run["status"], "rewards": {}, "receipts": []}
            for r in rows:
                out["rewards"][r["case_id"].split("/", 1)[1]] = r.get("reward")
                if r.get("grade"):
                    out["receipts"].append(api.ok("GET", f"/objects/{r['grade']}")["details"].get("receipt"))
            api.close()
    finally:
        os.environ["SR_BENCH_SANDBOX"] = "bwrap"
        scope = scope_for(store)
        for c in tc.owned_containers(api_docker, scope):
            api_docker.remove_container(c["Id"], force=True, v=True)
        tc.remove_images(api_docker, scope)
        try:
            api_docker.remove_image(f"{repo}:base")
        except Exception:  # noqa: BLE001 - already gone
            pass
    return out


if __name__ == "__main__":
    scenario(sys.argv[1])
