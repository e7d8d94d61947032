"""The bubblewrap backend: a fresh set of namespaces per execution over a read-only rootfs.

Form (checked on Debian bookworm, as root and unprivileged)::

    sh -c 'join cgroups; exec "$@"' prlimit --cpu=C --fsize=F --nofile=N [--as=A] --
      bwrap --unshare-{ipc,pid,net,uts,cgroup} --die-with-parent --new-session
            --cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID
            --ro-bind ROOTFS / --proc /proc --dev /dev --perms 1777 --size S --tmpfs /tmp
            [--tmpfs DIR --ro-bind HOST DIR/FILE] --clearenv --setenv PATH … --chdir /tmp
            -- setpriv --reuid 10001 --regid 10001 --clear-groups -- python3 -I -c BOOT

The network namespace holds only a loopback that is down, so nothing can be reached. As root there
is no user namespace: bwrap mounts as root and the program runs as the real host uid 10001 with no
capabilities and ``no_new_privs`` (bwrap always sets it). Unprivileged, ``--unshare-all --uid 10001``
maps the sandbox uid onto the calling (unprivileged) user. Memory, pids and CPU quota come from a per-execution
cgroup where one is writable (`cgroups`); otherwise only the rlimits hold and `facts` says so.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from srbench.sandbox import cgroups
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

OUTPUT_CAP = 4 << 20
_JOIN = 'for f in "$@"; do case "$f" in --) break;; esac; echo $$ > "$f" || exit 97; shift; done; shift; exec "$@"'


def _drain(stream: IO[bytes], sink: bytearray, cap: int) -> None:
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        room = cap - len(sink)
        if room > 0:
            sink += chunk[:room]


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self, sandbox_dir: Path) -> None:
        self.dir = Path(sandbox_dir)
        self.rootfs = self.dir / "rootfs"
        self.bwrap = shutil.which("bwrap")
        if self.bwrap is None:
            raise SandboxUnavailable("bubblewrap is not installed (Debian: apt-get install bubblewrap)")
        if not (self.rootfs / "usr" / "bin" / "python3").exists():
            raise SandboxUnavailable(f"no grading rootfs at {self.rootfs}: run `sr-bench setup --build-sandbox`")
        self._build = read_build_receipt(self.dir)
        self.root = os.geteuid() == 0
        if self.root and shutil.which("setpriv", path=str(self.rootfs / "usr" / "bin")) is None:
            raise SandboxUnavailable(f"the rootfs at {self.rootfs} has no setpriv (util-linux): rebuild it")

    def receipt(self, limits: Limits | None = None) -> Receipt:
        b = self._build
        return Receipt(backend="bwrap", rootfs_digest=b.rootfs_digest, base_digest=b.base_digest,
                       debian=b.debian, packages=b.packages,
                       python_packages=b.python_packages, harness_digest=harness_digest(),
                       limits=(limits or Limits()).model_dump(),
                       scicode_test_data_sha256=b.scicode_test_data_sha256)

    def argv(self, limits: Limits, mounts: dict[str, str]) -> list[str]:
        prl = ["prlimit", f"--cpu={int(limits.wall_s * limits.cpus) + 1}", f"--fsize={limits.file_size_mb << 20}",
               f"--nofile={limits.open_files}"]
        if limits.address_space_mb:
            prl.append(f"--as={(limits.address_space_mb + 256) << 20}")
        if self.root:       # no user namespace: mounts made as root, the program runs as host uid 10001
            ns = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                  "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
            drop = ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups", "--"]
        else:               # unprivileged: a user namespace maps uid 10001 to this (unprivileged) user
            ns = ["--unshare-all", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
            drop = []
        bw = [self.bwrap or "bwrap", *ns, "--die-with-parent", "--new-session",
              "--ro-bind", str(self.rootfs), "/", "--proc", "/proc", "--dev", "/dev",
              "--perms", "1777", "--size", str(limits.scratch_mb << 20), "--tmpfs", "/tmp"]
        for d in sorted({str(Path(p).parent) for p in mounts}):
            bw += ["--size", str(1 << 20), "--tmpfs", d]
        for inside, host in sorted(mounts.items()):
            bw += ["--ro-bind", host, inside]
        bw += ["--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
               "--setenv", "LANG", "C.UTF-8", "--chdir", "/tmp", "--", *drop, "python3", "-I", "-c", BOOT]
        return [*prl, "--", *bw]

    def execute(self, stdin: bytes, limits: Limits, *, mounts: dict[str, str] | None = None) -> Execution:
        mounts = dict(mounts or {})
        for host in mounts.values():
            if not Path(host).is_file():
                return Execution(None, b"", b"", 0.0, fault=f"mount source {host} is not a file")
        group = cgroups.create(limits.memory_mb, limits.pids, limits.cpus) if self.root else None
        procs = [str(p) for p in group.procs] if group else []
        argv = ["sh", "-c", _JOIN, "sh", *procs, "--", *self.argv(limits, mounts)]
        started = time.monotonic()
        out, err = bytearray(), bytearray()
        timed_out = False
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as exc:
            if group:
                group.remove()
            return Execution(None, b"", b"", 0.0, fault=f"cannot start bubblewrap: {exc}")
        readers = [threading.Thread(target=_drain, args=(proc.stdout, out, OUTPUT_CAP), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, OUTPUT_CAP), daemon=True)]
        for t in readers:
            t.start()
        try:
            assert proc.stdin is not None
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                wait_exact(proc, limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc)
                proc.wait()
            for t in readers:
                t.join(timeout=5)
        finally:
            _kill(proc)
            oom = group.oom_killed() if group else False
            if group:
                group.remove()
        facts = {"cgroup": f"v{group.version}" if group else "none (rlimits only)", "uid": SANDBOX_UID}
        fault = None
        if proc.returncode == 97:
            fault = "could not join the sandbox cgroup"
        elif not timed_out and proc.returncode not in (0, None) and b"bwrap:" in bytes(err[:4096]):
            fault = "bubblewrap failed: " + bytes(err[:400]).decode("utf-8", "replace").strip()
        return Execution(proc.returncode, bytes(out), bytes(err), round(time.monotonic() - started, 4),
                         timed_out=timed_out, oom_killed=oom, fault=fault, facts=facts)


def wait_exact(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """`proc.wait(timeout)` that returns when the process ends: Popen's own timed wait polls with sleeps
    growing to 50 ms, which kept a grading slot idle ~40 ms past a 70 ms sandbox run (issue 42). A pidfd
    (Linux ≥ 5.3) is readable at the exit; without one, Popen's wait."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout=timeout)
    try:
        if proc.poll() is None and not select.select([fd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        return proc.wait()
    finally:
        os.close(fd)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
