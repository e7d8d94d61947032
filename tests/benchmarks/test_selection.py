"""`stratified-hash-v1`: interleave order, profile cuts, limits and failures."""

from __future__ import annotations

import pytest

from srbench.benchmarks.selection import ALGORITHM, VERSION, order, select, selection_record
from srbench.cas.digest import canonical_json, digest_json
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, CaseMetadata, Message

COUNTS = {"smoke": 2, "quick": 4, "standard": 3}


def case(cid: str, stratum: str = "all") -> Case:
    return Case(id=cid, benchmark="toy", messages=[Message(role="user", content=cid)], answer="A",
                metadata=CaseMetadata(stratum=stratum, extra_key=cid))


def by_digest(ids, seed):
    return sorted(ids, key=lambda i: digest_json([seed, i]))


def test_interleave_matches_the_written_rule():
    seed = 7
    groups = {"a": ["a1", "a2", "a3"], "b": ["b1"], "c": ["c1", "c2"], "d": ["d1", "d2"]}
    cases = [case(i, s) for s, ids in groups.items() for i in ids]
    got = [c.id for c in order(cases, seed)]
    a, c, d = by_digest(groups["a"], seed), by_digest(groups["c"], seed), by_digest(groups["d"], seed)
    # heads a, b, c, d; then a[1] 1/4, c[1] 1/2 and d[1] 1/2 (tie: c before d), a[2] 3/4
    assert got == [a[0], "b1", c[0], d[0], a[1], c[1], d[1], a[2]]


def test_order_is_independent_of_input_order():
    cases = [case(f"t{i}", f"s{i % 3}") for i in range(30)]
    assert [c.id for c in order(cases, 1)] == [c.id for c in order(list(reversed(cases)), 1)]


def test_profiles_cut_from_one_order():
    cases = [case(f"t{i}", f"s{i % 2}") for i in range(10)]
    smoke = [c.id for c in select(cases, "smoke", COUNTS, 3)]
    quick = [c.id for c in select(cases, "quick", COUNTS, 3)]
    standard = [c.id for c in select(cases, "standard", COUNTS, 3)]
    assert quick[:2] == smoke and len(standard) == 3 and not set(standard) & set(quick)
    assert [c.id for c in order(cases, 3)][4:7] == standard


def test_split_set_and_extras_kept_and_input_untouched():
    cases = [case(f"t{i}") for i in range(8)]
    quick = select(cases, "quick", COUNTS, 1)
    standard = select(cases, "standard", COUNTS, 1)
    assert {c.metadata.split for c in quick} == {"dev"}
    assert {c.metadata.split for c in standard} == {"holdout"}
    assert all(c.metadata.extra_key == c.id for c in standard)
    assert all(c.metadata.split is None for c in cases)


def test_deterministic_bytes_and_seed_matters():
    cases = [case(f"t{i}", f"s{i % 4}") for i in range(40)]

    def dump(seed):
        return canonical_json([c.model_dump(mode="json") for c in select(cases, "quick", COUNTS, seed)])

    assert dump(5) == dump(5)
    assert dump(5) != dump(6)


def test_limit_prefix_and_bounds():
    cases = [case(f"t{i}") for i in range(10)]
    full = select(cases, "standard", COUNTS, 1)
    assert select(cases, "standard", COUNTS, 1, limit=2) == full[:2]
    assert select(cases, "standard", COUNTS, 1, limit=3) == full
    for bad in (0, 4, -1, True, 1.5):
        with pytest.raises(InvalidInput, match="--limit"):
            select(cases, "standard", COUNTS, 1, limit=bad)


def test_source_too_small_names_everything():
    cases = [case(f"t{i}") for i in range(5)]
    assert len(select(cases, "quick", COUNTS, 1)) == 4
    with pytest.raises(InvalidInput) as err:
        select(cases, "standard", COUNTS, 1, benchmark="toy-bench")
    msg = str(err.value)
    assert "toy-bench" in msg and "standard" in msg and "7" in msg and "5" in msg


def test_bad_inputs():
    cases = [case("x"), case("x")]
    with pytest.raises(InvalidInput, match="duplicate"):
        order(cases, 1)
    with pytest.raises(InvalidInput, match="unknown profile"):
        select([case("y")], "full", COUNTS, 1)
    with pytest.raises(InvalidInput, match="seed"):
        order([case("y")], "1")
    with pytest.raises(InvalidInput, match="smoke"):
        select([case("y")], "smoke", {"smoke": 5, "quick": 4, "standard": 1}, 1)


def test_selection_record():
    rec = selection_record("category", limit=3)
    assert (rec.algorithm, rec.version, rec.strata, rec.limit, rec.custom_subset) == (ALGORITHM, VERSION, "category", 3, True)
    assert selection_record("all").custom_subset is False
