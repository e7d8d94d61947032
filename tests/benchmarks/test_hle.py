"""HLE adapter on a synthetic native parquet (12 columns, image rows dropped), confidence and calibration."""

from __future__ import annotations

import builtins
import json
import math

import httpx
import pytest

from srbench.benchmarks import get
from srbench.benchmarks.hle import SYSTEM_PROMPT, TEST_FILE, calibration_error, extract_confidence
from srbench.benchmarks.selection import select
from srbench.benchmarks.sources import fetch_pinned, read_files
from srbench.cas.digest import canonical_json
from srbench.errors import InvalidInput, SourceUnavailable

from .fixtures import HLE_CATEGORIES, hle_row, hle_rows, write_hle_parquet, write_hle_repo

B = get("hle")
REV = B.source.revision


def load(tmp_path, rows, seed: int = 1):
    files = read_files(B.locate(write_hle_repo(tmp_path / "repo", rows)))
    return B.load(files, seed=seed, revision=REV)


def parquet_bytes(tmp_path, rows) -> bytes:
    return write_hle_parquet(tmp_path / "t.parquet", rows).read_bytes()


def test_locate_repo_dir_and_single_file(tmp_path):
    root = write_hle_repo(tmp_path / "repo", hle_rows())
    assert B.locate(root) == {TEST_FILE: root / TEST_FILE}
    assert B.locate(root / TEST_FILE) == {TEST_FILE: root / TEST_FILE}
    with pytest.raises(InvalidInput, match="not found"):
        B.locate(tmp_path)
    (tmp_path / "x.csv").write_text("a")
    with pytest.raises(InvalidInput, match="not a parquet file"):
        B.locate(tmp_path / "x.csv")


def test_image_rows_dropped_and_cases_built(tmp_path):
    rows = hle_rows(12)                                  # rows 3 and 8 carry an image
    cases = load(tmp_path, rows)
    assert len(cases) == 10
    assert {c.metadata.hle_id for c in cases} == {r["id"] for r in rows if not r["image"]}
    by_id = {c.id: c for c in cases}
    assert f"hle/{rows[3]['id']}" not in by_id and f"hle/{rows[8]['id']}" not in by_id
    mc = by_id[f"hle/{rows[1]['id']}"]
    assert [m.role for m in mc.messages] == ["system", "user"] and mc.messages[0].content == SYSTEM_PROMPT
    assert mc.messages[1].content == rows[1]["question"] and "Answer Choices:\nA." in mc.messages[1].content
    assert mc.answer == "B" and mc.metadata.answer_type == "multipleChoice"
    assert mc.metadata.category == mc.metadata.stratum == "Physics" and mc.metadata.source_revision == REV
    exact = by_id[f"hle/{rows[2]['id']}"]
    assert exact.answer == "7" and exact.metadata.answer_type == "exactMatch"
    for line in ("Explanation:", "Answer:", "Confidence:"):
        assert f"\n{line}" in "\n" + SYSTEM_PROMPT


def test_null_and_blank_images_count_as_text_only(tmp_path):
    rows = [hle_row(0), hle_row(1), hle_row(2)]
    rows[0]["image"], rows[1]["image"] = None, "  "
    assert len(load(tmp_path, rows)) == 3


def test_bad_sources(tmp_path):
    with pytest.raises(InvalidInput, match="not a readable parquet"):
        B.load({TEST_FILE: b"not parquet"}, seed=1, revision=REV)
    with pytest.raises(InvalidInput, match="needs"):
        B.load({}, seed=1, revision=REV)
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"id": ["a"], "question": ["q"], "answer": ["x"]}), path)
    with pytest.raises(InvalidInput, match="missing columns: image, answer_type, category"):
        B.load({TEST_FILE: path.read_bytes()}, seed=1, revision=REV)
    with pytest.raises(InvalidInput, match="no text-only question"):
        load(tmp_path, [hle_row(0, image=True)])
    with pytest.raises(InvalidInput, match="duplicate id"):
        load(tmp_path, [hle_row(0), hle_row(0)])
    bad = hle_row(0)
    bad["answer_type"] = "freeForm"
    with pytest.raises(InvalidInput, match="answer_type 'freeForm'"):
        load(tmp_path, [bad])
    bad = hle_row(2)
    bad["answer"] = " "
    with pytest.raises(InvalidInput, match="has no answer"):
        load(tmp_path, [bad])


def test_selection_deterministic_and_profiles_nest(tmp_path):
    rows = hle_rows(300, image_every=7)                  # 257 text-only rows: enough for quick + standard
    cases = load(tmp_path, rows, seed=20260918)
    assert len(cases) >= 240

    def ids(profile, seed=20260918):
        return [c.id for c in select(cases, profile, B.profiles, seed)]

    smoke, quick, standard = ids("smoke"), ids("quick"), ids("standard")
    assert (len(smoke), len(quick), len(standard)) == (4, 40, 200)
    assert quick[:4] == smoke and not set(quick) & set(standard)
    cats = {c.id: c.metadata.category for c in cases}
    assert {cats[i] for i in quick} == set(HLE_CATEGORIES) and len({cats[i] for i in smoke}) == 4
    dump = canonical_json([c.model_dump(mode="json") for c in select(cases, "quick", B.profiles, 20260918)])
    again = load(tmp_path / "again", rows, seed=20260918)
    assert canonical_json([c.model_dump(mode="json") for c in select(again, "quick", B.profiles, 20260918)]) == dump
    assert ids("quick", seed=5) != quick


# -- confidence --------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("Explanation: x\nAnswer: 7\nConfidence: 85%", 0.85),
    ("Answer: 7\n**Confidence:** 100 %", 1.0),
    ("confidence score: 0%", 0.0),
    ("Confidence: 0.3", 0.3),
    ("Confidence: 42", 0.42),
    ("Confidence: 12.5%", 0.125),
    ("Confidence: 10%\nOn reflection.\nConfidence: 60%", 0.6),
    ("<think>Confidence: 99%</think>Answer: 7\nConfidence: 20%", 0.2),
    ("<think>Confidence: 99%</think>Answer: 7", None),
    ("Answer: 7", None),
    ("Confidence: 150%", None),
    ("Confidence: high", None),
    (None, None),
])
def test_extract_confidence(text, value):
    got = extract_confidence(text)
    assert got == value if value is None else math.isclose(got, value)


def test_grade_records_confidence(tmp_path):
    (case,) = load(tmp_path, [hle_row(0)])
    verdict = json.dumps({"verdict": "correct", "explanation": "equal"})
    g = B.grade_judged(case, "Explanation: e\nAnswer: 1\nConfidence: 70%", verdict)
    assert g.correct and g.details["confidence"] == 0.7 and g.details["confidence_stated"] is True
    g = B.grade_judged(case, "Answer: 1", verdict)
    assert g.details["confidence"] == 1.0 and g.details["confidence_stated"] is False   # upstream: 100 if none


# -- calibration -------------------------------------------------------------------------------
def test_calibration_unknown_below_minimum():
    assert calibration_error([(0.9, True)] * 99) is None
    assert calibration_error([(0.9, True)] * 4) is None and calibration_error([]) is None
    assert calibration_error([(0.9, True)] * 40, min_samples=50) is None


def test_calibration_hand_computed():
    # one bin of 100: mean confidence 0.9, accuracy 0.5 -> |0.4| -> sqrt(0.16) = 0.4
    pairs = [(0.9, i % 2 == 0) for i in range(100)]
    assert math.isclose(calibration_error(pairs), 0.4)
    # 250 items -> bins [0,100) and [100,250) (the last absorbs the remainder), given unsorted:
    # bin 1: conf 0.2, accuracy 0   -> d = 0.2, weight 100/250 -> 0.4 * 0.04 = 0.016
    # bin 2: conf 0.9, accuracy 0.4 -> d = 0.5, weight 150/250 -> 0.6 * 0.25 = 0.150
    high = [(0.9, i < 60) for i in range(150)]
    low = [(0.2, False)] * 100
    pairs = high[:75] + low + high[75:]
    assert math.isclose(calibration_error(pairs), math.sqrt(0.166))
    assert math.isclose(calibration_error(pairs, skip_last_bin=True), math.sqrt(0.016))   # upstream's loop
    assert calibration_error([(1.0, True)] * 120) == 0.0
    # below one full bin, a smaller minimum gives one bin holding everything
    assert math.isclose(calibration_error([(1.0, False)] * 10, min_samples=10), 1.0)


@pytest.mark.parametrize("pairs", [[(1.5, True)], [(float("nan"), True)], [(0.5, 1)], [(True, True)], [(0.5,)]])
def test_calibration_rejects_bad_pairs(pairs):
    with pytest.raises(InvalidInput, match="calibration pair 0"):
        calibration_error(pairs, min_samples=1)


def test_calibration_rejects_bad_parameters():
    with pytest.raises(InvalidInput, match="min_samples"):
        calibration_error([], min_samples=0)
    with pytest.raises(InvalidInput, match="bin_size"):
        calibration_error([], bin_size=0)


# -- source access -----------------------------------------------------------------------------
@pytest.mark.parametrize("token", [None, "hf_x"])
def test_gated_source_error_names_hf_token(tmp_path, monkeypatch, token):
    if token:
        monkeypatch.setenv("HF_TOKEN", token)
    else:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    transport = httpx.MockTransport(lambda r: httpx.Response(401 if token is None else 403))
    with pytest.raises(SourceUnavailable) as err:
        fetch_pinned(B.source, tmp_path, transport=transport)
    msg = str(err.value)
    assert B.source.gated and err.value.code == "source_gated" and "\n" not in msg
    assert "HF_TOKEN" in msg and "accept the terms at https://huggingface.co/datasets/cais/hle" in msg
    assert "HF_TOKEN" in B.source.access_note


def test_notices_and_catalog():
    notes = " ".join(B.notices())
    assert "contamination-free" in notes and "reference judge" in notes and "rolling" in notes
    entry = B.catalog_entry().model_dump(exclude_unset=True)
    assert entry["available"] and entry["needs_judge"] and entry["kind"] == "judge" and entry["weight"] == 15
    assert entry["grader_version"] == "sr-bench-reference-judge-v1"


def test_missing_pyarrow_says_install_extra(tmp_path, monkeypatch):
    data = parquet_bytes(tmp_path, hle_rows())
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(InvalidInput, match=r"sr-bench\[bench\]"):
        B.load({TEST_FILE: data}, seed=1, revision=REV)


def test_demo_sample_loads_through_the_real_loader(tmp_path):
    from srbench.simulate.samples import SAMPLE_REVISION, write_hle

    cases = B.load(read_files(B.locate(write_hle(tmp_path / "hle"))), seed=1, revision=SAMPLE_REVISION)
    assert len(cases) == 24 and {c.metadata.category for c in cases} == set(HLE_CATEGORIES)
    assert all("[synthetic sample]" in c.messages[1].content for c in cases)
