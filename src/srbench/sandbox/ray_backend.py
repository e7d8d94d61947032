"""The Ray grading backend: each sandbox execution is a Ray task on a worker host (issue 31, item 4).

``SR_BENCH_SANDBOX=ray`` with ``SR_BENCH_RAY_ADDRESS`` (a running cluster's GCS address, e.g.
``10.0.0.5:6379``; ``pip install 'sr-bench[ray]'``). The service stays the only writer of its journal
and store: a job's payload (the in-sandbox supervisor, the program and its tests, the limits) travels
as the task's argument and its `Execution` comes back as the task's result; the service turns it into
the grade as it does for a local backend. Each worker runs the job in its own host's sandbox
(`open_sandbox()` there: Docker or bubblewrap, by that host's ``SR_BENCH_SANDBOX``) and checks that
its receipt names the same environment as the cluster's (the receipt taken from a worker when the
backend opens, which the grade key holds): a host with another environment answers a sandbox fault,
never a grade. A worker or node lost mid-job makes Ray run the task again on another node (grading
is pure: safe to repeat); a task that fails for any other reason is a sandbox fault (not cached).

`slots` (the cluster's CPUs) sets how many cells the service's grading pool sends at once; the
service's own cores are not used for them. ``SR_BENCH_RAY_RESOURCES`` (JSON, e.g. ``{"grader": 1}``)
adds custom resources every job asks for, to keep grading on the hosts prepared for it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any

from srbench.sandbox import SandboxFault, open_sandbox
from srbench.sandbox.base import Execution, Limits, Receipt, Sandbox, SandboxUnavailable
from srbench.schemas.wire import WireJSON

RETRIES = 3                     # a lost worker or node: the job runs again elsewhere, this many times
_LOCAL: WireJSON = {}     # on a worker: its host's sandbox, opened once per worker process


def _ray() -> Any:
    try:
        # deferred: ray is an optional extra: imported only on the Ray backend
        import ray
    except ImportError as exc:
        raise SandboxUnavailable("the Ray backend needs ray: pip install 'sr-bench[ray]'") from exc
    return ray


def connect(address: str | None = None) -> Any:
    """The `ray` module, connected to the cluster at `address` (default ``SR_BENCH_RAY_ADDRESS``)."""
    ray = _ray()
    address = address or os.environ.get("SR_BENCH_RAY_ADDRESS")
    if not address:
        raise SandboxUnavailable("the Ray backend needs SR_BENCH_RAY_ADDRESS (the cluster's address, host:port)")
    if not ray.is_initialized():
        ray.init(address=address, namespace="sr-bench", log_to_driver=False, logging_level="WARNING",
                 configure_logging=False)
    return ray


def _environment(receipt: Receipt) -> str:
    """The digest of what graded, without the per-job limits: equal on every host of one build."""
    return receipt.model_copy(update={"limits": {}}).digest()


def worker_receipt() -> WireJSON:
    """On a worker: its host's sandbox receipt (opening the sandbox on first use)."""
    if "sandbox" not in _LOCAL:
        _LOCAL["sandbox"] = open_sandbox()
    return _LOCAL["sandbox"].receipt().model_dump(mode="json", by_alias=True)  # type: ignore[no-any-return]


def execute_job(stdin: bytes, limits: WireJSON, mounts: dict[str, str], environment: str) -> WireJSON:
    """On a worker: one execution in its host's sandbox, refused when that host's environment differs."""
    try:
        got = Receipt.model_validate(worker_receipt())
    except SandboxFault as exc:
        return asdict(Execution(None, b"", b"", 0.0, fault=f"the Ray worker has no sandbox: {exc.message}"))
    if _environment(got) != environment:
        return asdict(Execution(None, b"", b"", 0.0, fault=(
            "a Ray worker's sandbox is another build than the cluster's receipt names "
            f"(rootfs {got.rootfs_digest[:12]}): rebuild it with `sr-bench setup --build-sandbox`")))
    sandbox = _LOCAL["sandbox"]
    return asdict(sandbox.execute(stdin, Limits.model_validate(limits), mounts=mounts))


class RaySandbox(Sandbox):
    name = "ray"

    def __init__(self, address: str | None = None) -> None:
        address = address or os.environ.get("SR_BENCH_RAY_ADDRESS")
        try:
            self.resources = json.loads(os.environ.get("SR_BENCH_RAY_RESOURCES") or "{}")
        except ValueError:
            raise SandboxUnavailable("SR_BENCH_RAY_RESOURCES must be a JSON object, e.g. {\"grader\": 1}") from None
        try:
            ray = connect(address)
            self._receipt_task = ray.remote(num_cpus=1, resources=self.resources or None)(worker_receipt)
            self._execute = ray.remote(max_retries=RETRIES, retry_exceptions=False,
                                       resources=self.resources or None)(execute_job)
            self._cluster = Receipt.model_validate(ray.get(self._receipt_task.remote(), timeout=120))
            self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        except SandboxUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - no cluster, no worker, a worker without a sandbox
            raise SandboxUnavailable(f"the Ray cluster at {address} cannot grade: {type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
        self.environment = _environment(self._cluster)

    def receipt(self, limits: Limits | None = None) -> Receipt:
        """The cluster's receipt (a worker's; every worker checks it has the same) with these limits."""
        return self._cluster.model_copy(update={"limits": (limits or Limits()).model_dump()})

    def execute(self, stdin: bytes, limits: Limits, *, mounts: dict[str, str] | None = None) -> Execution:
        ray = _ray()
        try:
            ref = self._execute.options(num_cpus=limits.cpus).remote(stdin, limits.model_dump(), dict(mounts or {}),
                                                                     self.environment)
            got = ray.get(ref, timeout=limits.wall_s + 600)
        except Exception as exc:  # noqa: BLE001 - retries used up, or the cluster is gone: not a verdict
            return Execution(None, b"", b"", 0.0, fault=f"the Ray cluster could not run the job: {type(exc).__name__}")
        return Execution(**got)
