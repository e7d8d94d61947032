"""A function-local import only where it defers a heavy dependency, with a comment saying so (issue 26, item 5).

Every ``import`` inside a function in src/srbench has a comment on its line or on the line above it (the
``# deferred: …`` comment names what is deferred and why: an optional or heavy package, the service stack the
CLI loads only for the commands that use it, a sandbox backend's module). An import that costs nothing
belongs at module level; an import that only hid a cycle is a cycle (tests/core/test_import_cycles.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import srbench

SRC = Path(srbench.__file__).parent


def _blocks() -> list[tuple[Path, list[str], list[ast.stmt]]]:
    """Each run of function-local imports (only blank lines between them), per file."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        lines = path.read_text().splitlines()
        nodes = sorted({n.lineno: n for fn in ast.walk(ast.parse("\n".join(lines)))
                        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                        for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}.items())
        run: list[ast.stmt] = []
        for _, node in nodes:
            gap = lines[run[-1].end_lineno or run[-1].lineno: node.lineno - 1] if run else None
            if run and gap is not None and all(not g.strip() for g in gap):
                run.append(node)
                continue
            if run:
                out.append((path, lines, run))
            run = [node]
        if run:
            out.append((path, lines, run))
    return out


def _explained(lines: list[str], run: list[ast.stmt]) -> bool:
    """A comment on the line just above the run (e.g. `try:  # deferred: …`), or on one of its lines."""
    first = run[0].lineno
    above = lines[first - 2].strip() if first >= 2 else ""
    own = [lines[i - 1] for n in run for i in range(n.lineno, (n.end_lineno or n.lineno) + 1)]
    return "#" in above or any("#" in line for line in own)


def test_every_function_local_import_says_why_it_is_deferred() -> None:
    found = _blocks()
    bare = [f"{p.relative_to(SRC)}:{run[0].lineno}: {lines[run[0].lineno - 1].strip()}"
            for p, lines, run in found if not _explained(lines, run)]
    assert bare == [], ("function-local imports without a comment saying what they defer (move them to the "
                        "top of the module, or add `# deferred: <why>` above them):\n" + "\n".join(bare))
    assert found, "the scan finds the deferred imports that exist (docker, ray, the CLI's service stack)"
