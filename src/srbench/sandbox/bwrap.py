"""The bubblewrap backend: a fresh set of namespaces per execution over a read-only rootfs.

Form (checked on Debian bookworm, as root and unprivileged)::

    sh -c 'join cgroups; exec "$@"' setpriv --reuid U --regid U --clear-groups --
      prlimit --cpu=C --fsize=F --nofile=N [--as=A] --
      bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
            --ro-bind ROOTFS / --proc /proc --dev /dev --size S --tmpfs /tmp
            [--tmpfs DIR --ro-bind HOST DIR/FILE] --uid U --gid U --clearenv --setenv PATH …
            -- python3 -I -c BOOT

``--unshare-all`` includes the network namespace (only a loopback, down), so nothing can be reached.
When this process is root the sandbox still runs as the unprivileged host uid 10001 (``setpriv``),
so a namespace escape would not be root. Memory, pids and CPU quota come from a per-execution
cgroup where one is writable (`cgroups`); otherwise only the rlimits hold and `facts` says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from srbench.sandbox import cgroups
from srbench.sandbox.base import BOOT, SANDBOX_UID, Execution, Limits, Receipt, Sandbox, SandboxUnavailable, harness_digest

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
        receipt = self.dir / "receipt.json"
        if not receipt.is_file():
            raise SandboxUnavailable(f"{receipt} is missing: run `sr-bench setup --build-sandbox`")
        self._build = json.loads(receipt.read_text("utf-8"))
        self.root = os.geteuid() == 0

    def receipt(self, limits: Limits | None = None) -> Receipt:
        b = self._build
        return Receipt(backend="bwrap", rootfs_digest=b["rootfs_digest"], base_digest=b.get("base_digest"),
                       debian=b.get("debian", {}), packages=b.get("packages", {}),
                       python_packages=b.get("python_packages", {}), harness_digest=harness_digest(),
                       limits=(limits or Limits()).model_dump(),
                       scicode_test_data_sha256=b.get("scicode_test_data_sha256"))

    def argv(self, limits: Limits, mounts: dict[str, str]) -> list[str]:
        prl = ["prlimit", f"--cpu={int(limits.wall_s * limits.cpus) + 1}", f"--fsize={limits.file_size_mb << 20}",
               f"--nofile={limits.open_files}"]
        if limits.address_space_mb:
            prl.append(f"--as={(limits.address_space_mb + 256) << 20}")
        bw = [self.bwrap or "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
              "--ro-bind", str(self.rootfs), "/", "--proc", "/proc", "--dev", "/dev",
              "--size", str(limits.scratch_mb << 20), "--tmpfs", "/tmp"]
        dirs = sorted({str(Path(p).parent) for p in mounts})
        for d in dirs:
            bw += ["--size", str(1 << 20), "--tmpfs", d]
        for inside, host in sorted(mounts.items()):
            bw += ["--ro-bind", host, inside]
        bw += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--clearenv",
               "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
               "--setenv", "LANG", "C.UTF-8", "--chdir", "/tmp", "--", "python3", "-I", "-c", BOOT]
        user = (["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups", "--"]
                if self.root else [])
        return [*user, *prl, "--", *bw]

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
                proc.wait(timeout=limits.wall_s)
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


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
