"""rules: a build is cached by its key; a changed input rebuilds and says which input changed."""

from __future__ import annotations

from srbench.cas import ObjectStore
from srbench.rules import Engine, MemoryActionCache, Rule

calls: list[int] = []


def _sum(store: ObjectStore, inputs: dict, params: dict) -> dict:
    calls.append(1)
    values = [store.get_json(d)["v"] for d in inputs["parts"].values()]
    return {"total": sum(values) * params.get("scale", 1)}


SUM = Rule("sum", "1", _sum)


def test_cache_hit_rebuild_and_explain(tmp_path) -> None:
    calls.clear()
    store = ObjectStore(str(tmp_path / "cas"))
    engine = Engine(store, MemoryActionCache())
    a, b = store.put_json({"v": 1}), store.put_json({"v": 2})
    first = engine.build(SUM, {"parts": {"a": a, "b": b}}, subject="s")
    assert not first.hit and first.explanation == "rebuilt: never built before"
    assert store.get_json(first.output) == {"total": 3}
    again = engine.build(SUM, {"parts": {"a": a, "b": b}}, subject="s")
    assert again.hit and again.output == first.output and again.explanation == "up to date"
    assert len(calls) == 1
    c = store.put_json({"v": 5})
    changed = engine.build(SUM, {"parts": {"a": a, "b": c}}, subject="s")
    assert not changed.hit and changed.reasons == ["input parts[b] changed"]
    assert store.get_json(changed.output) == {"total": 6}
    scaled = engine.build(SUM, {"parts": {"a": a, "b": c}}, {"scale": 2}, subject="s")
    assert scaled.reasons == ["param scale changed"]
    bumped = Rule("sum", "2", _sum)
    r = engine.build(bumped, {"parts": {"a": a, "b": c}}, {"scale": 2}, subject="s")
    assert r.reasons == ["rule sum version 1 -> 2"]
    assert len(calls) == 4


def test_many_changed_entries_are_counted(tmp_path) -> None:
    store = ObjectStore(str(tmp_path / "cas"))
    engine = Engine(store, MemoryActionCache())
    parts = {str(i): store.put_json({"v": i}) for i in range(10)}
    engine.build(SUM, {"parts": parts}, subject="t")
    parts2 = dict(parts)
    for i in range(5):
        parts2[str(i)] = store.put_json({"v": i + 100})
    r = engine.build(SUM, {"parts": parts2}, subject="t")
    assert r.reasons == ["input parts: 5 of 10 entries changed"]
