"""In-sandbox supervisor: runs each job of a payload in its own child process and reports one JSON line.

This file is not imported by sr-bench: its text is sent to the sandbox on standard input (with the
child modules) and run there by a one-line bootstrap, so it uses the standard library only and must
run on the sandbox's Python (3.11 on Debian bookworm).

The supervisor marks itself non-dumpable before any solution runs, so a solution (same uid) cannot
open its ``/proc/<pid>/fd``, ``mem`` or ``environ``. Each child gets its job on stdin, its stdout and
stderr as pipes that are drained and capped here, and a pipe for result lines (JSON, one per line; its number is in the job). A
child is killed (its whole process group) at its wall limit; rlimits (CPU seconds, address space,
file size, open files) are set in the child before exec. The last line this process prints is
``<marker> {"jobs": [...]}``; the marker is chosen by the host for every execution.

A LiveCodeBench child (``lcb_child.py``, which reports only on its result pipe, never by its exit
code) is a fork of this process instead of a new interpreter (issue 42: a fresh Python and its
imports were about half of a problem's sandbox time): the fork starts its own session, takes the same
rlimits, environment and working directory, gets ``/dev/null`` as stdin and the pipes as stdout and
stderr, and closes every other descriptor, so the sandbox's stdout (where the marker counts) is out of
its reach.
"""

import ctypes
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import time

CHILD_BOOT = ("import sys,json;d=json.loads(sys.stdin.buffer.read());"
              "exec(compile(d['module'],d['module_name'],'exec'),{'__name__':'__srbench_child__','JOB':d})")


def _non_dumpable():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def _limiter(limits):
    def apply():
        os.setsid()
        for name, key, scale in (("cpu_s", resource.RLIMIT_CPU, 1), ("address_space_mb", resource.RLIMIT_AS, 1 << 20),
                                 ("file_size_mb", resource.RLIMIT_FSIZE, 1 << 20),
                                 ("open_files", resource.RLIMIT_NOFILE, 1)):
            value = limits.get(name)
            if value:
                try:
                    resource.setrlimit(key, (int(value * scale), int(value * scale)))
                except (ValueError, OSError):
                    pass
    return apply


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")


def oom_kills():
    """The memory group's OOM-kill count where the sandbox shows it (Docker does; bwrap has no /sys)."""
    for path in OOM_FILES:
        try:
            with open(path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


FORKED = ("lcb_child.py",)           # children forked from this process (see the module docstring)


class _Forked:
    """The parts of `subprocess.Popen` that `run_child` uses, for a forked child."""

    def __init__(self, pid, out_fd, err_fd):
        self.pid, self.returncode, self.stdin = pid, None, None
        self.stdout, self.stderr = os.fdopen(out_fd, "rb", 0), os.fdopen(err_fd, "rb", 0)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("forked child", timeout)
            time.sleep(0.001)
        return self.returncode

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _fork_child(module_name, module, data, limits, cwd, env, wfd):
    """A forked child running `module` with JOB = `data` (see the module docstring)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        for fd in (out_w, err_w, wfd):
            os.close(fd)
        return _Forked(pid, out_r, err_r)
    code = 1
    try:
        _limiter(limits)()
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, target in ((null, 0), (out_w, 1), (err_w, 2)):
            os.dup2(fd, target)
        os.closerange(3, wfd)
        os.closerange(wfd + 1, 1 << 16)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)          # as a fresh interpreter has it
        sys.argv = ["-c"]
        exec(compile(module, module_name, "exec"), {"__name__": "__srbench_child__", "JOB": data})
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the child's own failure, shown on its stderr as an interpreter would
        import traceback
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)


def run_child(module_name, module, job, limits, cwd):
    """Run one job; returns what happened (exit, signal, timed_out, results, output sizes)."""
    cap = int(limits.get("output_bytes") or 65536)
    wall = float(limits.get("wall_s") or 10)
    rfd, wfd = os.pipe()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
    started = time.monotonic()
    oom_before = oom_kills()
    data = dict(job, module=module, module_name=module_name, result_fd=wfd)
    try:
        if module_name in FORKED:
            proc = _fork_child(module_name, module, data, limits, cwd, env, wfd)
            data = b""
        else:
            proc = subprocess.Popen([sys.executable, "-I", "-c", CHILD_BOOT], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(wfd,), cwd=cwd,
                                    env=env, preexec_fn=_limiter(limits), close_fds=True)
            os.close(wfd)
            data = json.dumps(data).encode()
    except OSError as exc:
        os.close(rfd)
        for fd in (wfd,):
            try:
                os.close(fd)
            except OSError:
                pass
        return {"spawn_error": f"{type(exc).__name__}: {exc}"}
    sel = selectors.DefaultSelector()
    bufs = {"stdout": bytearray(), "stderr": bytearray(), "result": bytearray()}
    sizes = dict.fromkeys(bufs, 0)
    streams = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr", rfd: "result"}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    stdin_fd = proc.stdin.fileno() if proc.stdin is not None else -1
    pending = memoryview(data)
    if proc.stdin is not None:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    timed_out = False
    open_fds = set(streams) | ({stdin_fd} if proc.stdin is not None else set())
    drain_until = None
    while open_fds:
        left = wall - (time.monotonic() - started)
        if drain_until is None and proc.poll() is not None:
            drain_until = time.monotonic() + 0.5     # the child is gone: collect what its pipes still hold
        if drain_until is not None and time.monotonic() >= drain_until:
            break
        if left <= 0:
            timed_out = True
            _kill_group(proc)
            break
        for key, _ in sel.select(timeout=min(left, 0.5)):
            fd = key.fd
            if fd == stdin_fd:
                try:
                    n = os.write(fd, pending[:65536])
                    pending = pending[n:]
                except (BrokenPipeError, OSError):
                    pending = pending[:0]
                if not pending:
                    sel.unregister(fd)
                    proc.stdin.close()
                    open_fds.discard(fd)
                continue
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(fd)
                open_fds.discard(fd)
                continue
            name = streams[fd]
            sizes[name] += len(chunk)
            limit = cap * 16 if name == "result" else cap
            room = limit - len(bufs[name])
            if room > 0:
                bufs[name] += chunk[:room]
    left = max(0.1, wall - (time.monotonic() - started))
    try:
        proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    _kill_group(proc)                     # anything the child left behind in its group
    sel.close()
    for f in (proc.stdout, proc.stderr):
        f.close()
    os.close(rfd)
    results = []
    for line in bytes(bufs["result"]).decode("utf-8", "replace").splitlines():
        try:
            results.append(json.loads(line))
        except ValueError:
            results.append({"garbled": True})
    code = proc.returncode
    oom_after = oom_kills()
    return {"oom_killed": None if oom_after is None else oom_after > (oom_before or 0),
            "exit": code if code is not None and code >= 0 else None,
            "signal": -code if code is not None and code < 0 else None, "timed_out": timed_out,
            "wall_s": round(time.monotonic() - started, 4), "results": results,
            "stdout_tail": bytes(bufs["stdout"][-2000:]).decode("utf-8", "replace"),
            "stderr_tail": bytes(bufs["stderr"][-4000:]).decode("utf-8", "replace"),
            "stdout_bytes": sizes["stdout"], "stderr_bytes": sizes["stderr"],
            "output_truncated": sizes["stdout"] > cap or sizes["stderr"] > cap}


def main(payload):
    _non_dumpable()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    cwd = payload.get("scratch") or "/tmp"
    os.makedirs(cwd, exist_ok=True)
    modules = payload["modules"]
    out = []
    for job in payload["jobs"]:
        name = job["module"]
        work = os.path.join(cwd, f"job{len(out)}")
        os.makedirs(work, exist_ok=True)
        res = run_child(name, modules[name], job.get("input", {}), job.get("limits") or payload["limits"], work)
        out.append(res)
        if payload.get("stop_on_failure") and not _all_passed(res):
            break
    sys.stdout.write("\n" + payload["marker"] + " " + json.dumps({"jobs": out}) + "\n")
    sys.stdout.flush()


def _all_passed(res):
    final = [r for r in res.get("results", []) if r.get("final")]
    return bool(final) and final[-1].get("passed") is True


main(PAYLOAD)  # noqa: F821 - PAYLOAD is defined by the bootstrap that executes this text
