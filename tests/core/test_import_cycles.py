"""No import circles in src/srbench (issue 26, item 5).

The graph is read from the source with `ast`: an edge for every ``import`` / ``from … import`` of a
srbench module (``from pkg import name`` is an edge to the submodule when `name` is one, else to the
package). Imports under ``if TYPE_CHECKING:`` carry types only and are left out.

- At module level (what runs on import) there must be no cycle at all.
- Counting function-local imports too, a cycle is only hidden, not gone: the ones left are listed in
  KNOWN_HIDDEN, which may only shrink (a new one fails, and so does a listed one that no longer
  exists, so that the list is kept exact).
"""

from __future__ import annotations

import ast
from pathlib import Path

import srbench

SRC = Path(srbench.__file__).parent

# Cycles closed only through a function-local import, still to be untangled (the five issue 26 named are gone).
KNOWN_HIDDEN = {
    # the Ray backend (issue 31) opens the worker's own sandbox through the package's open_sandbox
    frozenset({"srbench.sandbox", "srbench.sandbox.ray_backend"}),
    # … and Terminal-Bench's task environment opens its Ray counterpart the same way (efec647)
    frozenset({"srbench.benchmarks.terminal_bench.environment", "srbench.benchmarks.terminal_bench.ray_env"}),
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module, local: bool) -> list[ast.Import | ast.ImportFrom]:
    """The module's imports; with `local`, those inside functions and classes too."""
    out: list[ast.Import | ast.ImportFrom] = []

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                out.append(node)
            elif isinstance(node, ast.If):
                if not _type_checking(node.test):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for handler in node.handlers:
                    walk(handler.body)
                walk(node.orelse)
                walk(node.finalbody)
            elif isinstance(node, ast.With):
                walk(node.body)
            elif local and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                walk(node.body)

    walk(tree.body)
    return out


def graph(local: bool) -> dict[str, set[str]]:
    paths = {_module(p): p for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _imports(ast.parse(path.read_text("utf-8")), local):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in paths}
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                deps |= {sub} if sub in paths else ({base} if base in paths else set())
        out[name] = deps - {name}
    return out


def cycles(g: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(g[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(g) == {frozenset("abc")}
    assert "srbench.service.journal.schema" in graph(local=False)["srbench.service.journal.writer"]


def test_no_import_cycle_at_module_level():
    found = cycles(graph(local=False))
    assert not found, f"import cycles at module level: {[sorted(c) for c in found]}"


def test_cycles_hidden_by_function_local_imports_only_shrink():
    found = cycles(graph(local=True))
    new = [sorted(c) for c in found - KNOWN_HIDDEN]
    assert not new, f"a new import cycle (closed through a function-local import): {new}"
    gone = [sorted(c) for c in KNOWN_HIDDEN - found]
    assert not gone, f"these cycles are gone: remove them from KNOWN_HIDDEN: {gone}"
