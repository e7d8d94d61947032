"""The Docker backend: one fresh container per execution on the engine ``DOCKER_HOST`` names.

The engine may be local (a unix socket) or remote (tcp/ssh), so grading can move off the service
host; the payload travels on the container's stdin, so nothing needs a host path. Every container:
``network_mode=none``, read-only root, ``/tmp`` a size-capped tmpfs, uid 10001, ``--cap-drop ALL``,
``no-new-privileges``, memory = memory+swap, a pids limit, a CPU quota, nofile/fsize ulimits and a
capped json-file log. The image is the one the build receipt names, checked by id; a missing image
is a clear error and is never pulled from a registry. Host files (``mounts``) are bind-mounted
read-only when the engine is local; a remote engine must have them in the image.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
from pathlib import Path
from typing import Any

from srbench.sandbox.base import (
    BOOT,
    SANDBOX_UID,
    Execution,
    Limits,
    Receipt,
    Sandbox,
    SandboxUnavailable,
    harness_digest,
    read_build_receipt,
)

LABEL = "sr-bench.sandbox"


def _docker() -> Any:
    try:
        # deferred: docker is optional and heavy: imported only when a container is used
        import docker
    except ImportError as exc:
        raise SandboxUnavailable("the Docker backend needs the docker package: pip install 'sr-bench[sandbox]'") from exc
    return docker


def engine_is_local() -> bool:
    host = os.environ.get("DOCKER_HOST", "")
    return not host or host.startswith("unix://")


class _Remover:
    """Removes finished containers on one background thread, off the grading threads' path (issue 31:
    a removal is ~80 ms of engine time per problem that no verdict waits for). Best effort: a container
    left behind by a process that ended first is labelled for a later sweep."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Any, str]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def remove(self, api: Any, cid: str) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="sr-bench-docker-remove", daemon=True)
                self._thread.start()
        self._queue.put((api, cid))

    def _work(self) -> None:
        while True:
            api, cid = self._queue.get()
            try:
                api.remove_container(cid, force=True)
            except Exception:  # noqa: BLE001 - best effort; labelled for a later sweep
                pass
            finally:
                self._queue.task_done()

    def join(self) -> None:
        """Wait until every container handed over so far is removed (tests, benchmarks)."""
        self._queue.join()


_REMOVER = _Remover()


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self, sandbox_dir: Path, timeout_s: float = 30.0) -> None:
        docker = _docker()
        self._build = read_build_receipt(Path(sandbox_dir))
        image = self._build.docker
        if image is None:
            raise SandboxUnavailable("the sandbox build has no Docker image: run `sr-bench setup --build-sandbox` "
                                     "with a reachable Docker engine (DOCKER_HOST)")
        self.image_tag, self.image_id = image.image, image.image_id
        self.base_image_id = image.base_image_id
        try:
            self.api = docker.from_env(timeout=int(timeout_s)).api
            if engine_is_local():
                self.api.trust_env = False      # a unix socket has no proxy: no environment scan per request
            self.api.ping()
        except Exception as exc:  # noqa: BLE001 - any connection problem is one message
            where = os.environ.get("DOCKER_HOST") or "the default socket"
            raise SandboxUnavailable(f"no Docker engine reachable at {where}: {type(exc).__name__}") from exc
        self.check_image()

    def check_image(self) -> None:
        docker = _docker()
        try:
            info = self.api.inspect_image(self.image_id)
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"the grading image {self.image_tag} ({self.image_id[:19]}) is not on the Docker engine; build it "
                "with `sr-bench setup --build-sandbox` (sr-bench never pulls images from a registry)") from None
        except docker.errors.APIError as exc:
            raise SandboxUnavailable(f"the Docker engine refused to inspect the grading image: {exc.explanation}") from exc
        if info.get("Id") != self.image_id:
            raise SandboxUnavailable(f"the image {self.image_tag} on the engine is {info.get('Id')}, the receipt pins "
                                     f"{self.image_id}: rebuild with `sr-bench setup --build-sandbox`")

    def receipt(self, limits: Limits | None = None) -> Receipt:
        b = self._build
        return Receipt(backend="docker", rootfs_digest=b.rootfs_digest, base_digest=b.base_digest,
                       image=self.image_tag, image_id=self.image_id, base_image_id=self.base_image_id,
                       debian=b.debian, packages=b.packages,
                       python_packages=b.python_packages, harness_digest=harness_digest(),
                       limits=(limits or Limits()).model_dump(),
                       scicode_test_data_sha256=b.scicode_test_data_sha256)

    def host_config(self, limits: Limits, mounts: dict[str, str]) -> Any:
        docker = _docker()
        binds = {host: {"bind": inside, "mode": "ro"} for inside, host in mounts.items()} if engine_is_local() else None
        ulimits = [docker.types.Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                   docker.types.Ulimit(name="fsize", soft=limits.file_size_mb << 20, hard=limits.file_size_mb << 20)]
        return self.api.create_host_config(
            network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            tmpfs={"/tmp": f"size={limits.scratch_mb}m,mode=1777,nosuid,nodev"},
            mem_limit=limits.memory_mb << 20, memswap_limit=limits.memory_mb << 20, pids_limit=limits.pids,
            nano_cpus=int(limits.cpus * 1e9), ulimits=ulimits, binds=binds, ipc_mode="none",
            log_config=docker.types.LogConfig(type="json-file", config={"max-size": "4m", "max-file": "1"}))

    def execute(self, stdin: bytes, limits: Limits, *, mounts: dict[str, str] | None = None) -> Execution:
        docker = _docker()
        mounts = dict(mounts or {})
        started = time.monotonic()
        try:
            cid = self.api.create_container(
                self.image_id, command=["python3", "-I", "-c", BOOT], user=f"{SANDBOX_UID}:{SANDBOX_UID}",
                stdin_open=True, network_disabled=True, working_dir="/tmp",
                environment={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"},
                labels={LABEL: "grader"}, host_config=self.host_config(limits, mounts))["Id"]
        except docker.errors.ImageNotFound:
            return Execution(None, b"", b"", 0.0, fault=f"the grading image {self.image_tag} is gone from the engine")
        except Exception as exc:  # noqa: BLE001 - the engine failing is a sandbox fault, whatever it is
            return Execution(None, b"", b"", 0.0, fault=f"the Docker engine could not create the container: {exc}")
        timed_out = False
        try:
            try:
                sock = self.api.attach_socket(cid, params={"stdin": 1, "stream": 1})
                raw = getattr(sock, "_sock", sock)
                self.api.start(cid)
                raw.sendall(stdin)
                try:
                    raw.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                sock.close()
            except Exception as exc:  # noqa: BLE001
                return Execution(None, b"", b"", round(time.monotonic() - started, 4),
                                 fault=f"the Docker engine could not start the container: {exc}")
            remaining = max(0.5, limits.wall_s - (time.monotonic() - started))
            try:
                code = self.api.wait(cid, timeout=remaining).get("StatusCode")
            except Exception:  # noqa: BLE001 - requests' read timeout: the wall limit fired
                timed_out, code = True, None
                try:
                    self.api.kill(cid)
                except Exception:  # noqa: BLE001 - it may have ended meanwhile
                    pass
            state = self.api.inspect_container(cid).get("State", {})
            out = self.api.logs(cid, stdout=True, stderr=False) or b""
            err = self.api.logs(cid, stdout=False, stderr=True) or b""
            return Execution(code, out, err, round(time.monotonic() - started, 4), timed_out=timed_out,
                             oom_killed=bool(state.get("OOMKilled")), facts={"container": cid[:12], "uid": SANDBOX_UID})
        except Exception as exc:  # noqa: BLE001
            return Execution(None, b"", b"", round(time.monotonic() - started, 4),
                             fault=f"the Docker engine failed during the run: {exc}")
        finally:
            _REMOVER.remove(self.api, cid)
