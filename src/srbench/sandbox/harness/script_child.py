"""In-sandbox child: run one Python test script as ``__main__``; it passes iff it exits with code 0.

``JOB`` = {script, modules: {dotted name: source}, env: {name: value}, result_fd}. The modules are
written under a private directory on ``sys.path`` first (SciCode's ``scicode.parse.parse`` this way),
so the script imports them exactly as upstream's generated test files do. An exception leaves the
traceback on stderr and exit code 1, as ``python file.py`` does.
"""

import os
import sys
import tempfile


def install(modules):
    root = tempfile.mkdtemp(prefix="srbench-mods-")
    for dotted, source in modules.items():
        parts = dotted.split(".")
        folder = os.path.join(root, *parts[:-1])
        os.makedirs(folder, exist_ok=True)
        for depth in range(1, len(parts)):
            init = os.path.join(root, *parts[:depth], "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()
        with open(os.path.join(folder, parts[-1] + ".py"), "w", encoding="utf-8") as fh:
            fh.write(source)
    sys.path.insert(0, root)


def main(job):
    os.close(job["result_fd"])
    os.environ.update(job.get("env") or {})
    install(job.get("modules") or {})
    path = os.path.join(os.getcwd(), "test_step.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(job["script"])
    code = compile(job["script"], path, "exec")
    sys.argv = [path]
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


main(JOB)  # noqa: F821 - JOB is defined by the child bootstrap
