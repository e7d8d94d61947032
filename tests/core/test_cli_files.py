"""The CLI's manifest/target file reader: every bad file is one line naming the file and the problem."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from srbench.cli.common import load_structured
from srbench.errors import InvalidInput


@pytest.mark.parametrize(("content", "expected"), [
    (b"\xff\xfe\x00binary", "not UTF-8 JSON or YAML text"),
    (b'{"a": [', "not valid JSON"),
    (b"[" * 100_000, "JSON nested too deeply"),
    (b'{"limits": {"max_cost_usd": NaN}}', "holds a value JSON cannot represent (NaN"),    # was a traceback
    (b'{"seed": -Infinity}', "holds a value JSON cannot represent (-Infinity"),
])
def test_a_bad_file_is_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as err:
        load_structured(str(path))
    assert err.value.message.startswith(f"{path}: {expected}") and "\n" not in err.value.message


def test_a_good_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"a": [1, 2]}')
    assert load_structured(str(tmp_path / "m.json")) == {"a": [1, 2]}


def test_a_path_that_is_not_a_file_says_so(tmp_path: Path) -> None:
    """A FIFO (or a socket) given as --manifest was "no such file"; a missing path still is."""
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInput) as err:
        load_structured(str(fifo))
    assert err.value.message == f"{fifo}: not a regular file (give the path of a JSON or YAML file)"
    with pytest.raises(InvalidInput) as err:
        load_structured(str(tmp_path / "absent.yaml"))
    assert err.value.message.endswith("absent.yaml: no such file")


def test_an_output_that_cannot_be_written_is_one_line_naming_it(tmp_path: Path) -> None:
    """`plan --output /nonexistent/dir/x.json` said "No such file or directory: …x.json.tmp" (the temporary
    file's name); it names the output and the fix, and leaves no temporary file."""
    from srbench.cli.runs import write_json

    target = tmp_path / "missing" / "x.json"
    with pytest.raises(InvalidInput) as err:
        write_json(str(target), {"a": 1})
    assert err.value.message == f"cannot write {target}: No such file or directory (give --output a path in a " \
        "writable directory)"
    write_json(str(tmp_path / "ok.json"), {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["ok.json"]


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    """Nine levels of nine aliases each (9**9 values once expanded) were expanded by json.dumps before the
    service's body limit could refuse them: seconds of CPU and, one level more, the host's memory."""
    lines = ['a0: &a0 ["x"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append("targets: *a9")
    path = tmp_path / "m.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInput) as err:
        load_structured(str(path))
    assert "expands to more than 1,000,000 values" in err.value.message and "\n" not in err.value.message
    (tmp_path / "ok.yaml").write_text("base: &b {model: m}\ntargets: [*b, *b]\n")      # aliases as such are fine
    assert load_structured(str(tmp_path / "ok.yaml")) == {"base": {"model": "m"}, "targets": [{"model": "m"}] * 2}
