"""Readers shared by adapters whose pinned source is one native file (CSV, JSONL or parquet)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from srbench.errors import InvalidInput


def pyarrow_modules(what: str) -> tuple[Any, Any]:
    """(pyarrow, pyarrow.parquet), or the DS-6 message naming `what` needs the bench extra."""
    try:        # deferred: pyarrow is the [bench] extra's; without it, a one-line error
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise InvalidInput(f"reading the {what} parquet needs pyarrow: install sr-bench[bench] on the "
                           "preparing host (DS-6)") from exc
    return pa, pq


def locate_single(root: Path, name: str, *, also: Sequence[str] = ()) -> dict[str, Path]:
    """`name` (a repository-relative path) given directly as the file, or found under `root` at
    `name`, at its base name, or at one of `also` (other relative places it is known to live)."""
    root = Path(root)
    suffix = Path(name).suffix.lower()
    if root.is_file():
        if root.suffix.lower() != suffix:
            kind = {'.csv': 'CSV', '.parquet': 'parquet'}.get(suffix, suffix.lstrip('.'))
            raise InvalidInput(f"{root} is not a {kind} file; give {name} or a directory holding it")
        return {name: root}
    for rel in (name, Path(name).name, *also):
        candidate = root / rel
        if candidate.is_file():
            return {name: candidate}
    raise InvalidInput(f"{name} not found under {root}")


def read_csv_rows(data: bytes, name: str, required: Sequence[str]) -> list[dict[str, str]]:
    """Rows of a UTF-8 CSV (BOM tolerated, multi-line cells); the header must hold `required`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)   # strict: a cell cut short is an error
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in required if c not in header]
        if missing:
            raise InvalidInput(f"{name} is missing columns: {', '.join(missing)}")
        reader.fieldnames = header
        rows = []
        for row in reader:
            if None in row.values():        # fewer cells than the header: a row cut short
                raise InvalidInput(f"{name} line {reader.line_num}: {sum(v is not None for v in row.values())} of "
                                   f"the header's {len(header)} columns (is the file cut short?); use a complete copy")
            rows.append({k: v for k, v in row.items() if isinstance(k, str)})
        return rows
    except csv.Error as exc:
        raise InvalidInput(f"{name} is not valid CSV (line {reader.line_num}: {exc}; is the file cut short?); "
                           "use a complete copy") from exc


def read_jsonl_cases(data: bytes, name: str, to_case: Callable[[Any, str], Any], id_field: str,
                     seen: set[str] | None = None) -> list[Any]:
    """The cases of a JSONL file, one a non-blank line (`to_case(row, "NAME line N")`), in file order; a line
    that is not JSON, or a case id seen before (in this file or in `seen`, the ids of files read before; named
    by its `id_field`), is a one-line error naming the line."""
    cases: list[Any] = []
    seen = set() if seen is None else seen
    try:
        text = data.decode("utf-8-sig")       # a BOM before the first line is tolerated
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"{name} line {n} is not JSON (is the file cut short?)") from exc
        if not isinstance(row, dict):
            raise InvalidInput(f"{name} line {n} is not a JSON object; each line must be one row {{...}}")
        case = to_case(row, f"{name} line {n}")
        if case.id in seen:
            raise InvalidInput(f"{name} line {n}: duplicate {id_field} {case.metadata.task_id}")
        seen.add(case.id)
        cases.append(case)
    return cases
