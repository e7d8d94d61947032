"""Native local copies with small damage (a file cut short, a BOM, a wrong type, a line that is not a row):
each is one InvalidInput naming the file and the problem, never a TypeError or a silently wrong case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srbench.benchmarks import get
from srbench.errors import InvalidInput
from srbench.simulate import samples

REV = "local-r1"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def lcb(tmp_path: Path) -> dict[str, bytes]:
    return _files(samples.write_livecodebench(tmp_path / "lcb"))


def _lcb_rows(files: dict[str, bytes], **change: object) -> dict[str, bytes]:
    rows = [json.loads(line) for line in files["test.jsonl"].decode().splitlines()]
    return {**files, "test.jsonl": "".join(json.dumps({**r, **change}) + "\n" for r in rows).encode()}


def _refused(bench: str, files: dict[str, bytes], *words: str) -> str:
    with pytest.raises(InvalidInput) as err:
        get(bench).load(files, seed=1, revision=REV)
    text = str(err.value)
    assert "\n" not in text and all(w in text for w in words), text
    return text


def test_a_jsonl_with_a_bom_reads_as_without(lcb) -> None:
    plain = get("livecodebench").load(lcb, seed=1, revision=REV)
    bom = get("livecodebench").load({**lcb, "test.jsonl": b"\xef\xbb\xbf" + lcb["test.jsonl"]}, seed=1, revision=REV)
    assert [c.model_dump() for c in bom] == [c.model_dump() for c in plain]


@pytest.mark.parametrize(("data", "words"), [
    (b"5\n", ("test.jsonl line 1", "not a JSON object")),
    (b"null\n", ("test.jsonl line 1", "not a JSON object")),
    (b'{"question_id": "x", "question_content": "caf\xe9"}\n', ("test.jsonl", "not UTF-8")),
])
def test_a_jsonl_line_that_is_not_a_row_is_named(lcb, data, words) -> None:
    _refused("livecodebench", {**lcb, "test.jsonl": data + lcb["test.jsonl"]}, *words)


@pytest.mark.parametrize(("change", "field"), [
    ({"public_test_cases": [{"input": "1", "output": "1", "testtype": "stdin"}]}, "public_test_cases"),
    ({"public_test_cases": None}, "public_test_cases"),
    ({"private_test_cases": []}, "private_test_cases"),
    ({"metadata": {"func_name": "f"}}, "metadata"),
    ({"metadata": '{"func_name": 5}'}, "func_name"),
    ({"question_content": None}, "question_content"),
    ({"question_id": None}, "question_id"),
    ({"starter_code": ["def f():"]}, "starter_code"),
])
def test_a_livecodebench_field_of_the_wrong_type_is_named(lcb, change, field) -> None:
    _refused("livecodebench", _lcb_rows(lcb, **change), "test.jsonl line 1", field)


@pytest.mark.parametrize(("bench", "writer", "name"), [
    ("simpleqa-verified", samples.write_simpleqa, "simpleqa_verified.csv"),
    ("gpqa-diamond", samples.write_gpqa, "gpqa_diamond.csv"),
])
@pytest.mark.parametrize("keep", [0.5, 0.77, 0.9])
def test_a_csv_cut_short_is_refused(tmp_path, bench, writer, name, keep) -> None:
    data = (writer(tmp_path / "src") / name).read_bytes()
    _refused(bench, {name: data[:int(len(data) * keep)]}, name, "cut short")


def test_a_csv_row_with_fewer_cells_than_the_header_is_refused(tmp_path) -> None:
    data = (samples.write_simpleqa(tmp_path / "src") / "simpleqa_verified.csv").read_bytes()
    _refused("simpleqa-verified", {"simpleqa_verified.csv": data + b"3001,What?,42\n"}, "line 14", "3 of the header's 8")


def test_mmlu_pro_options_held_as_a_string_are_refused(tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = samples.write_mmlu_pro(tmp_path / "src") / "data" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    joined = pa.array([", ".join(o) for o in table.column("options").to_pylist()])
    pq.write_table(table.set_column(table.schema.get_field_index("options"), "options", joined), path)
    _refused("mmlu-pro", _files(tmp_path / "src"), "question 0", "options", "not a list")


# -- rows that read well but contradict themselves (issue 38's probe round: accepted silently) ------------------
def test_a_gpqa_row_whose_correct_answer_is_also_a_distractor_is_refused(tmp_path) -> None:
    """The case would have had two right letters, the grade marking one of them wrong."""
    data = (samples.write_gpqa(tmp_path / "src") / "gpqa_diamond.csv").read_bytes()
    bad = data.replace(b"distractor 2b", b"designated answer 2", 1)
    text = _refused("gpqa-diamond", {"gpqa_diamond.csv": bad}, "gpqa_diamond.csv row ")
    assert text.endswith(": the Correct Answer is also Incorrect Answer 2 (the same text), so two letters would be "
                         "right; correct the row, or use the dataset's own file"), text
    # rows count records, the header being row 1 (the third record is row 4)
    assert text.startswith("gpqa_diamond.csv row 4:"), text


def test_an_mmlu_pro_option_that_is_null_is_refused(tmp_path) -> None:
    """A null in the options list was shown as an empty option ("C. ") and could be the answer."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = samples.write_mmlu_pro(tmp_path / "src") / "data" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    options = table.column("options").to_pylist()
    options[3][2] = None
    table = table.set_column(table.schema.get_field_index("options"), "options",
                             pa.array(options, type=pa.list_(pa.string())))
    pq.write_table(table, path)
    text = _refused("mmlu-pro", _files(tmp_path / "src"))
    assert text == ("data/test-00000-of-00001.parquet: question 3's option C is None, not a string (MMLU-Pro's "
                    "options are list<string>); use the dataset's own parquet file"), text


@pytest.mark.parametrize(("rows", "cols", "where"), [(31, 3, "test[0].output"), (2, 31, "train[1].input")])
def test_an_arc_grid_larger_than_30_by_30_is_refused(rows, cols, where) -> None:
    """ARC grids are 1×1 to 30×30; a 31-row output was a case no reply could match by the format's rules."""
    grid = [[1] * cols for _ in range(rows)]
    small = [[0, 1], [1, 0]]
    task = {"train": [{"input": small, "output": small}, {"input": small, "output": small}],
            "test": [{"input": small, "output": small}]}
    key, rest = where.split("[", 1)
    task[key][int(rest[0])][rest.split(".")[1]] = grid
    ok = {"data/evaluation/ok0001.json": json.dumps({**task, key: [
        {"input": small, "output": small}] * len(task[key])}).encode()}
    assert len(get("arc-agi-2").load(ok, seed=1, revision=REV)) == 1
    text = _refused("arc-agi-2", {"data/evaluation/big0001.json": json.dumps(task).encode()})
    assert text == (f"ARC task big0001: {where}: the grid is {rows}×{cols} (rows×columns), larger than ARC's "
                    "30×30; correct the task file, or use the pinned source"), text
