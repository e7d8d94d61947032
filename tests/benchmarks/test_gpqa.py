"""GPQA Diamond adapter on a synthetic native CSV (full header, multi-line cells, BOM)."""

from __future__ import annotations

import itertools

import pytest

from srbench.benchmarks import get
from srbench.benchmarks.gpqa_diamond import CSV_FILE, RETEST_NOTICE, SHUFFLE, permutation
from srbench.benchmarks.selection import select
from srbench.cas.digest import digest_json, short
from srbench.errors import InvalidInput

from .fixtures import GPQA_HEADER, gpqa_csv_bytes, write_gpqa_csv

B = get("gpqa-diamond")
REV = B.source.revision


def load(data: bytes, seed: int = 1):
    return B.load({CSV_FILE: data}, seed=seed, revision=REV)


def test_permutation_is_a_fixed_lehmer_code():
    perms = {tuple(permutation(digest_json([s, "x"]))) for s in range(400)}
    assert perms == set(itertools.permutations(range(4)))      # every one of the 24 is reachable
    # pinned values: the shuffle algorithm must never drift
    assert permutation("b3:" + "0" * 64) == [0, 1, 2, 3]
    assert permutation("b3:" + "0" * 62 + "17") == [3, 2, 1, 0]     # 0x17 = 23 = last of 24


def test_cases_from_native_csv():
    cases = load(gpqa_csv_bytes(6))
    assert len(cases) == 6
    c = cases[0]
    question = "Synthetic Quantum Mechanics question 0.\nA second line, with a comma and \"quotes\"."
    assert c.id == "gpqa-diamond/" + short(digest_json(question), 24)
    assert c.metadata.record_id == "recSynthetic00000" and c.metadata.stratum == "Quantum Mechanics"
    assert c.metadata.high_level_domain == "Physics" and c.metadata.shuffle == SHUFFLE
    perm = c.metadata.permutation
    assert perm == permutation(digest_json([1, c.id]))
    text = c.messages[0].content
    assert text.startswith("Answer the following multiple choice question.") and "'Answer: $LETTER'" in text
    assert question in text
    correct_line = [ln for ln in text.splitlines() if "right answer 0" in ln][0]
    assert correct_line.startswith(f"{c.answer}) ")
    assert "wrong answer 0-2\nspanning two lines" in text
    assert B.grade(c, f"Reasoning.\nAnswer: {c.answer}").correct
    assert B.grade(c, "Answer: E").status == "unparsed"


def test_shuffle_depends_on_seed_and_is_frozen():
    a = {c.id: c.metadata.permutation for c in load(gpqa_csv_bytes(6), seed=1)}
    b = {c.id: c.metadata.permutation for c in load(gpqa_csv_bytes(6), seed=2)}
    assert a.keys() == b.keys() and a != b
    assert a == {c.id: c.metadata.permutation for c in load(gpqa_csv_bytes(6), seed=1)}


def test_bom_optional_and_locate(tmp_path):
    assert [c.id for c in load(gpqa_csv_bytes(6, bom=False))] == [c.id for c in load(gpqa_csv_bytes(6))]
    path = write_gpqa_csv(tmp_path / "dataset" / CSV_FILE)
    assert B.locate(tmp_path) == {CSV_FILE: path}
    assert B.locate(path) == {CSV_FILE: path}
    with pytest.raises(InvalidInput, match="not found"):
        B.locate(tmp_path / "dataset" / "nothing")


def test_header_validated():
    header = [h for h in GPQA_HEADER if h not in ("Incorrect Answer 2", "Subdomain")]
    with pytest.raises(InvalidInput, match="missing columns: Incorrect Answer 2, Subdomain"):
        load(gpqa_csv_bytes(2, header=header))
    header = [h for h in GPQA_HEADER if h != "Record ID"]
    cases = load(gpqa_csv_bytes(2, header=header))
    assert not hasattr(cases[0].metadata, "record_id")


def test_bad_rows():
    with pytest.raises(InvalidInput, match="same question"):
        load(gpqa_csv_bytes(1) + gpqa_csv_bytes(1, bom=False).split(b"\r\n", 1)[1])
    with pytest.raises(InvalidInput, match="UTF-8"):
        load(b"\xff\xfe bad")


def test_profiles_on_full_size_source():
    cases = load(gpqa_csv_bytes(198), seed=20260918)
    smoke, quick, standard = (select(cases, p, B.profiles, 20260918) for p in ("smoke", "quick", "standard"))
    assert (len(smoke), len(quick), len(standard)) == (4, 40, 158)
    assert {c.id for c in smoke} <= {c.id for c in quick}
    assert not {c.id for c in quick} & {c.id for c in standard}
    assert len({c.metadata.stratum for c in smoke}) == 4


def test_retest_notice_and_gated_pin():
    assert RETEST_NOTICE in B.notices() and "retest" in RETEST_NOTICE
    assert B.source.gated and "HF_TOKEN" in B.source.access_note
