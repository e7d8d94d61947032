"""SimpleQA Verified adapter on a synthetic native CSV (8 columns, BOM, quoted urls) and its F1 metrics."""

from __future__ import annotations

import math

import httpx
import pytest

from srbench.benchmarks import get
from srbench.benchmarks.selection import select
from srbench.benchmarks.simpleqa_verified import CSV_FILE, f1_metrics
from srbench.benchmarks.sources import fetch_pinned
from srbench.cas.digest import canonical_json
from srbench.errors import InvalidInput

from .fixtures import (
    RANGE_ANSWER,
    SIMPLEQA_HEADER,
    SIMPLEQA_TOPICS,
    simpleqa_csv_bytes,
    simpleqa_row,
    simpleqa_rows_small,
)

B = get("simpleqa-verified")
REV = B.source.revision


def load(data: bytes, seed: int = 1):
    return B.load({CSV_FILE: data}, seed=seed, revision=REV)


def test_cases_from_native_csv():
    cases = load(simpleqa_csv_bytes())
    assert [c.id for c in cases] == [f"simpleqa-verified/{i}" for i in (17, 42, 108, 250, 999)]
    person, _date, number, place, other = cases
    assert [(m.role, m.content) for m in person.messages] == [
        ("user", "Which synthetic person first catalogued the imaginary comet Zed-9?")]
    assert person.answer == "Ada Quillfeather" and person.metadata.stratum == person.metadata.topic == "Science and Technology"
    assert person.metadata.urls == "['https://example.org/synthetic?a=1,b=2', \"https://example.com/it's-quoted\"]"
    assert person.metadata.original_index == 17 and person.metadata.source_revision == REV
    assert number.answer == RANGE_ANSWER                                     # range text kept verbatim
    assert (number.metadata.multi_step, number.metadata.requires_reasoning) == (True, True)
    assert (place.metadata.multi_step, place.metadata.requires_reasoning) == (True, False)
    assert place.messages[0].content.count('"') == 2 and place.metadata.answer_type == "Place"
    assert other.answer == "teal, with a white border"


def test_bom_optional_and_locate(tmp_path):
    assert load(simpleqa_csv_bytes(bom=False)) == load(simpleqa_csv_bytes())
    path = tmp_path / CSV_FILE
    path.write_bytes(simpleqa_csv_bytes())
    assert B.locate(tmp_path) == {CSV_FILE: path} and B.locate(path) == {CSV_FILE: path}
    with pytest.raises(InvalidInput, match="not found"):
        B.locate(tmp_path / "elsewhere")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(InvalidInput, match="not a CSV file"):
        B.locate(tmp_path / "x.json")


def test_header_validated():
    header = [h for h in SIMPLEQA_HEADER if h not in ("topic", "urls")]
    with pytest.raises(InvalidInput, match="missing columns: topic, urls"):
        load(simpleqa_csv_bytes(header=header))
    with pytest.raises(InvalidInput, match="missing columns: original_index"):
        load(b"")
    extra = load(simpleqa_csv_bytes(header=["extra", *SIMPLEQA_HEADER]))
    assert len(extra) == 5


@pytest.mark.parametrize("field, value, message", [
    ("original_index", "x7", "original_index 'x7' is not an integer"),
    ("multi_step", "maybe", "multi_step 'maybe' is not a boolean"),
    ("problem", "  ", "empty problem"),
    ("answer", "", "empty problem, answer or topic"),
])
def test_bad_rows(field, value, message):
    rows = simpleqa_rows_small()
    rows[2][field] = value
    with pytest.raises(InvalidInput, match=message) as err:
        load(simpleqa_csv_bytes(rows))
    assert "row 4" in str(err.value)


def test_duplicates_and_encoding():
    rows = simpleqa_rows_small()
    rows[3]["original_index"] = "17"
    with pytest.raises(InvalidInput, match="rows 2 and 5 share original_index 17"):
        load(simpleqa_csv_bytes(rows))
    with pytest.raises(InvalidInput, match="UTF-8"):
        load(b"\xff\xfe bad")
    with pytest.raises(InvalidInput, match="no question"):
        load(simpleqa_csv_bytes([]))


def test_profiles_deterministic_and_nested():
    rows = [simpleqa_row(i) for i in range(640)]
    cases = load(simpleqa_csv_bytes(rows), seed=20260918)

    def chosen(profile, seed=20260918):
        return select(cases, profile, B.profiles, seed)

    smoke, quick, standard = (chosen(p) for p in ("smoke", "quick", "standard"))
    assert (len(smoke), len(quick), len(standard)) == (5, 100, 500)
    assert [c.id for c in quick[:5]] == [c.id for c in smoke]
    assert not {c.id for c in quick} & {c.id for c in standard}
    assert len({c.metadata.topic for c in smoke}) == 5 and {c.metadata.topic for c in quick} == set(SIMPLEQA_TOPICS)
    assert {c.metadata.split for c in standard} == {"holdout"}
    again = load(simpleqa_csv_bytes(list(reversed(rows))), seed=20260918)
    dump = canonical_json([c.model_dump(mode="json") for c in quick])
    assert canonical_json([c.model_dump(mode="json") for c in select(again, "quick", B.profiles, 20260918)]) == dump
    assert [c.id for c in chosen("quick", seed=3)] != [c.id for c in quick]
    with pytest.raises(InvalidInput, match="simpleqa-verified: the standard profile needs"):
        select(cases[:599], "standard", B.profiles, 1)


# -- F1 ----------------------------------------------------------------------------------------
def test_f1_hand_computed():
    m = f1_metrics(["correct"] * 3 + ["incorrect"] + ["not_attempted"]).model_dump()
    # correct 3/5 = 0.6; cga 3/4 = 0.75; F1 = 2*0.6*0.75 / 1.35 = 2/3
    assert m["n"] == 5 and math.isclose(m["correct"], 0.6) and math.isclose(m["incorrect"], 0.2)
    assert math.isclose(m["not_attempted"], 0.2) and math.isclose(m["correct_given_attempted"], 0.75)
    assert math.isclose(m["f1"], 2 / 3)
    m = f1_metrics(["correct", "not_attempted", "not_attempted", "not_attempted"]).model_dump()
    # correct 0.25; cga 1.0; F1 = 2*0.25*1 / 1.25 = 0.4
    assert math.isclose(m["correct_given_attempted"], 1.0) and math.isclose(m["f1"], 0.4)


def test_f1_zero_attempts_and_edge_cases():
    assert f1_metrics(["not_attempted"] * 4).model_dump() == {"n": 4, "correct": 0.0, "incorrect": 0.0, "not_attempted": 1.0,
                                                 "correct_given_attempted": 0.0, "f1": 0.0}
    assert f1_metrics(["incorrect", "incorrect"]).f1 == 0.0
    assert f1_metrics([]).model_dump() == {"n": 0, "correct": 0.0, "incorrect": 0.0, "not_attempted": 0.0,
                              "correct_given_attempted": 0.0, "f1": 0.0}
    assert f1_metrics(["correct"]).f1 == 1.0
    with pytest.raises(InvalidInput, match="verdict 1 is 'A'"):
        f1_metrics(["correct", "A"])


def test_open_source_no_token_needed(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers.get("authorization")))
        return httpx.Response(200, content=simpleqa_csv_bytes())

    out = fetch_pinned(B.source, tmp_path, transport=httpx.MockTransport(handler))
    assert seen == [(f"{B.source.url}/resolve/{REV}/{CSV_FILE}", None)] and not B.source.gated
    assert len(load(out[CSV_FILE].read_bytes())) == 5


def test_notices_and_catalog():
    assert any("reference judge" in n for n in B.notices())
    entry = B.catalog_entry().model_dump(exclude_unset=True)
    assert entry["available"] and entry["needs_judge"] and entry["weight"] == 10
    assert entry["grader_version"] == "sr-bench-reference-judge-v1" and entry["profiles"]["quick"] == 100


def test_demo_sample_loads_through_the_real_loader(tmp_path):
    from srbench.simulate.samples import SAMPLE_REVISION, write_simpleqa

    root = write_simpleqa(tmp_path / "sq")
    cases = B.load({CSV_FILE: (root / CSV_FILE).read_bytes()}, seed=1, revision=SAMPLE_REVISION)
    assert len(cases) == 12 and all("[synthetic sample]" in c.messages[0].content for c in cases)
    assert "acceptable range" in cases[0].answer and len(select(cases, "smoke", B.profiles, 1)) == 5
