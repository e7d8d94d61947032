"""MMLU-Pro adapter on native parquet fixtures through the production loader."""

from __future__ import annotations

import builtins

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.mmlu_pro import TEST_FILE
from srbench.benchmarks.selection import select
from srbench.benchmarks.sources import read_files, source_record
from srbench.errors import InvalidInput

from .fixtures import (
    MMLU_CATEGORIES,
    mmlu_row,
    mmlu_rows_big,
    mmlu_rows_small,
    write_mmlu_parquet,
    write_mmlu_repo,
)

B = get("mmlu-pro")
REV = B.source.revision


def load(tmp_path, rows):
    files = read_files(B.locate(write_mmlu_repo(tmp_path / "repo", rows)))
    return B.load(files, seed=1, revision=REV)


def test_locate_repo_dir_and_single_file(tmp_path):
    root = write_mmlu_repo(tmp_path / "repo", mmlu_rows_small())
    assert B.locate(root) == {TEST_FILE: root / TEST_FILE}
    assert B.locate(root / TEST_FILE) == {TEST_FILE: root / TEST_FILE}
    with pytest.raises(InvalidInput, match="not found"):
        B.locate(tmp_path)


def test_cases_prompt_answer_metadata(tmp_path):
    cases = load(tmp_path, mmlu_rows_small())
    assert len(cases) == 28                                      # the N/A-answer row is not a task
    by_id = {c.id: c for c in cases}
    c = by_id["mmlu-pro/71"]                                     # biology, j=1: 5 options + one N/A
    assert c.metadata.option_count == 5 and c.metadata.category == "biology" and c.metadata.question_id == 71
    assert c.metadata.stratum == "biology" and c.metadata.src == "ori_mmlu-biology"
    assert c.metadata.source_revision == REV
    assert c.answer == "D"
    text = c.messages[0].content
    assert len(c.messages) == 1 and c.messages[0].role == "user"
    assert "N/A" not in text and "E. option 4" in text and "F." not in text
    assert 'The answer is (X)' in text and "Question: Synthetic biology question number 71" in text


def test_answer_remapped_when_na_precedes_it(tmp_path):
    row = mmlu_row(5, "law", 4, 0)
    row["options"] = ["first", "N/A", "second", "third"]
    row["answer"], row["answer_index"] = "C", 2
    (case,) = load(tmp_path, [row])
    assert case.answer == "B" and case.metadata.option_count == 3


def test_smoke_covers_all_subjects_and_grades(tmp_path):
    cases = load(tmp_path, mmlu_rows_small())
    smoke = select(cases, "smoke", B.profiles, 20260918)
    assert len(smoke) == 14 and {c.metadata.category for c in smoke} == set(MMLU_CATEGORIES)
    c = smoke[0]
    assert B.grade(c, f"The answer is ({c.answer})").correct
    beyond = "ABCDEFGHIJ"[c.metadata.option_count]
    assert B.grade(c, f"The answer is ({beyond})").status == "unparsed"


def test_quick_and_standard_on_a_big_source(tmp_path):
    cases = load(tmp_path, mmlu_rows_big())
    quick = select(cases, "quick", B.profiles, 11)
    standard = select(cases, "standard", B.profiles, 11)
    smoke = select(cases, "smoke", B.profiles, 11)
    assert (len(quick), len(standard)) == (500, 2000)
    assert {c.id for c in smoke} <= {c.id for c in quick}
    assert not {c.id for c in quick} & {c.id for c in standard}
    assert {c.metadata.category for c in quick} == set(MMLU_CATEGORIES)
    with pytest.raises(InvalidInput, match="mmlu-pro: the standard profile needs"):
        select(cases[:2400], "standard", B.profiles, 11)


def test_source_record_hashes_file(tmp_path):
    files = read_files(B.locate(write_mmlu_repo(tmp_path / "repo", mmlu_rows_small())))
    rec = source_record(B.source, files, origin="local-import", revision="abc")
    assert rec.revision == "abc" and [f.name for f in rec.files] == [TEST_FILE] and len(rec.files[0].sha256) == 64


def test_bad_sources(tmp_path):
    with pytest.raises(InvalidInput, match="not a readable parquet"):
        B.load({TEST_FILE: b"not parquet"}, seed=1, revision=REV)
    with pytest.raises(InvalidInput, match="needs"):
        B.load({}, seed=1, revision=REV)
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"question_id": [1], "question": ["q"]}), path)
    with pytest.raises(InvalidInput, match="missing columns: options, answer, category, src"):
        B.load({TEST_FILE: path.read_bytes()}, seed=1, revision=REV)
    dup = [mmlu_row(1, "math", 4, 0), mmlu_row(1, "law", 4, 1)]
    with pytest.raises(InvalidInput, match="duplicate question_id 1"):
        load(tmp_path, dup)


def test_missing_pyarrow_says_install_extra(tmp_path, monkeypatch):
    data = write_mmlu_parquet(tmp_path / "t.parquet", mmlu_rows_small()).read_bytes()
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(InvalidInput, match=r"sr-bench\[bench\]"):
        B.load({TEST_FILE: data}, seed=1, revision=REV)
