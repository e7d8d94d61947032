"""In-sandbox child: LiveCodeBench's test execution rules, for one program and one problem's tests.

Sent as text and run by the supervisor's child bootstrap with ``JOB`` = {mode: stdin|functional, code,
inputs, outputs, fn_name, timeout, result_fd}. Standard library only.

The rules follow ``lcb_runner/evaluation/testing_util.py`` (release_v6 era), re-expressed here:
- the upstream star-import prelude is put before the program (functional mode) or before the
  wrapped program (stdin mode), and the recursion limit is 50000;
- the same process-wide guard as upstream's ``reliability_guard`` is applied first (it is *not* the
  sandbox: the sandbox around this process is);
- stdin mode: a trailing ``if __name__ == '__main__':`` block is unwrapped, top-level imports are
  hoisted and every other statement goes into ``wrapped_function``; per test, ``sys.stdin`` becomes the
  input text, ``open`` returns it, ``sys.stdout`` is captured; outputs match when their stripped
  lines are equal, or equal as ``Decimal`` tokens; a different number of lines is a wrong answer;
- functional mode: ``Solution()`` when the text contains ``class Solution``, the method ``fn_name``
  is called with each input line JSON-decoded as one argument, a returned tuple becomes a list, and
  the result must ``==`` the JSON-decoded output;
- each test runs under ``signal.alarm(timeout)``; the first failure stops: -2 wrong answer, -3 time
  limit, -4 runtime error (a failure while loading the program is -4 too, as upstream).
Result lines go to ``result_fd``: one per test, then ``{"final": true, ...}``.
"""

import ast
import builtins
import io
import json
import os
import signal
import sys
from decimal import Decimal

STAR_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
                "statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
PLAIN_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
                 "statistics", "itertools", "functools", "operator", "io", "sys", "json")
PRELUDE = ("".join(f"from {m} import *\n" for m in STAR_MODULES) + "".join(f"import {m}\n" for m in PLAIN_MODULES)
           + "sys.setrecursionlimit(50000)\n")
OS_DISABLED = ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
               "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
               "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir")
MODULES_BLOCKED = ("ipdb", "joblib", "resource", "psutil", "tkinter")


class TestTimeout(Exception):
    """Raised by the alarm; an Exception (not BaseException), as upstream, so code may swallow it."""


def _on_alarm(signum, frame):
    raise TestTimeout()


def _short(value, length=300):
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= length else text[: length // 2] + "...(truncated) ..." + text[-length // 2:]


def unwrap_main(code):
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return code


def wrap_program(code):
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fn = ast.FunctionDef(name="wrapped_function", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                         kw_defaults=[], defaults=[]),
                             body=rest, decorator_list=[], lineno=-1)
        return PRELUDE + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)
    except Exception:
        return code


def load(code, timeout):
    """Execute the program text in a fresh module namespace under the alarm (upstream's compile step)."""
    signal.alarm(timeout)
    try:
        namespace = {"__name__": "tmp_sol", "__builtins__": builtins}
        exec(code, namespace)
        target = namespace["Solution"]() if "class Solution" in code else namespace
        return target
    finally:
        signal.alarm(0)


def lookup(target, name):
    if isinstance(target, dict):
        return target.get(name)
    return getattr(target, name, None)


def stripped_lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def as_decimals(line):
    try:
        return True, [Decimal(tok) for tok in line.split()]
    except Exception:
        return False, []


def outputs_match(got, want):
    a, b = stripped_lines(got), stripped_lines(want)
    if len(a) != len(b):
        return False, "Wrong answer: mismatched output length"
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x == y:
            continue
        ok_x, dx = as_decimals(x)
        ok_y, dy = as_decimals(y)
        if not (ok_x and ok_y) or dx != dy:
            return False, f"Wrong answer at output_line_idx={i}: {_short(x)} != {_short(y)}"
    return True, None


def guard():
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in OS_DISABLED:
        setattr(os, name, None)
    # imported here only to disable their functions, as upstream's reliability_guard does
    import shutil
    import subprocess
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in MODULES_BLOCKED:
        sys.modules[name] = None


def run_stdin(job, emit):
    method = lookup(load(wrap_program(unwrap_main(job["code"])), job["timeout"]), "wrapped_function")
    if method is None:
        raise RuntimeError("the program defines no wrapped_function")
    results = []
    real_open, real_stdin, real_stdout = builtins.open, sys.stdin, sys.stdout
    for i, (given, want) in enumerate(zip(job["inputs"], job["outputs"], strict=False)):
        text = "\n".join(given) if isinstance(given, list) else given
        captured = io.StringIO()
        signal.alarm(job["timeout"])
        try:
            sys.stdout = captured
            sys.stdin = io.StringIO(text)
            builtins.open = lambda *a, _text=text, **k: io.StringIO(_text)
            try:
                method()
            except SystemExit:
                pass
            signal.alarm(0)
        except Exception as exc:
            signal.alarm(0)
            code = -3 if isinstance(exc, TestTimeout) else -4
            results.append(code)
            return results, {"error_code": code, "error": repr(exc)[:500], "test": i}
        finally:
            signal.alarm(0)
            builtins.open, sys.stdin, sys.stdout = real_open, real_stdin, real_stdout
        ok, why = outputs_match(captured.getvalue(), want)
        if not ok:
            results.append(-2)
            return results, {"error_code": -2, "error_message": why, "test": i,
                             "output": _short(captured.getvalue())}
        results.append(True)
        emit({"test": i, "result": True})
    return results, {}


def run_functional(job, emit):
    method = lookup(load(PRELUDE + "\n\n" + job["code"], job["timeout"]), job["fn_name"])
    if method is None:
        raise RuntimeError(f"the program has no function {job['fn_name']!r}")
    args_list = [[json.loads(line) for line in given.split("\n")] for given in job["inputs"]]
    wants = [json.loads(out) for out in job["outputs"]]
    results = []
    for i, (args, want) in enumerate(zip(args_list, wants, strict=False)):
        signal.alarm(job["timeout"])
        try:
            got = method(*args)
            signal.alarm(0)
            if isinstance(got, tuple):
                got = list(got)
            ok = got == want
            results.append(ok)
            if not ok:
                return results, {"error_code": -2, "error_message": "Wrong Answer", "test": i, "output": _short(got)}
        except Exception as exc:
            signal.alarm(0)
            code = -3 if isinstance(exc, TestTimeout) else -4
            results.append(code)
            return results, {"error_code": code, "error": repr(exc)[:500], "test": i}
        finally:
            signal.alarm(0)
        emit({"test": i, "result": True})
    return results, {}


def main(job):
    sink = os.fdopen(job["result_fd"], "w", buffering=1)

    def emit(obj):
        try:
            sink.write(json.dumps(obj) + "\n")
            sink.flush()
        except Exception:
            pass
    signal.signal(signal.SIGALRM, _on_alarm)
    guard()
    n = len(job["inputs"])
    try:
        run = run_functional if job["mode"] == "functional" else run_stdin
        results, meta = run(job, emit)
    except Exception as exc:          # loading the program failed: upstream's "Error during testing"
        results, meta = [-4], {"error_code": -4, "error": repr(exc)[:500], "during": "load"}
    passed = len(results) == n and all(r is True for r in results)
    emit({"final": True, "passed": passed, "results": results, **meta})


main(JOB)  # noqa: F821 - JOB is defined by the child bootstrap
