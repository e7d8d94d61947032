"""docs/layout.md shows the tree as it is (issue 26, item 7): every folder of src/srbench and every
subfolder of `service/` and `stages/` is in its tree, and every folder the tree names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "srbench"
SPLIT = ("service", "stages")            # the folders whose subfolders the tree lists one by one


def _tree() -> set[str]:
    """The folders the layout's tree names, as paths relative to src/srbench."""
    text = (ROOT / "docs" / "layout.md").read_text("utf-8")
    block = text.split("```", 2)[1]
    found: set[str] = set()
    parents: dict[int, str] = {}
    for line in block.splitlines():
        m = re.match(r"^( *)([a-z_]+)/ ", line + " ")
        if not m or m.group(2) == "srbench" and not m.group(1):
            continue
        depth = len(m.group(1)) // 2
        parent = parents.get(depth - 1, "")
        path = f"{parent}/{m.group(2)}".strip("/") if depth > 1 else m.group(2)
        parents[depth] = path
        found.add(path)
    return found


def _folders() -> set[str]:
    """The code folders of src/srbench: top level, and one level down in the split folders."""
    top = {p.name for p in SRC.iterdir() if p.is_dir() and any(p.glob("*.py")) or p.name in SPLIT}
    top.discard("__pycache__")
    nested = {f"{s}/{p.name}" for s in SPLIT for p in (SRC / s).iterdir() if p.is_dir() and any(p.glob("*.py"))}
    return top | nested


def test_the_layout_tree_lists_every_folder_and_only_real_ones() -> None:
    tree, real = _tree(), _folders()
    assert real - tree == set(), f"folders missing from docs/layout.md: {sorted(real - tree)}"
    named = {p for p in tree if "/" not in p or p.split("/")[0] in SPLIT}
    assert named - real == set(), f"docs/layout.md names folders that do not exist: {sorted(named - real)}"
