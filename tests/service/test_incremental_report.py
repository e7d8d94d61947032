"""Issue 11 (item 3): report rows are built as cells finish (service/runs/report_rows.py) and the end-of-run
report reads them; that report is the same object as a cold rebuild with every cache cleared — a run
with a router and single targets (the paired section), a failed cell and an ambiguous one, and a
judged run. Conversation cells: tests/conversation/test_incremental_conversation.py."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from srbench.service.runs import report_rows
from srbench.service.wire.figures import ReportFigures
from srbench.simulate.behaviour import RouterRule, SimModel, load_answer_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases
from srbench.stages.report import build as report_mod
from srbench.stages.report.results import all_rows

from .helpers import PRICE, freeze, manifest, single


class MemoHits:
    """Counts the rows the report took from the memo (stages/report/build.py from_memo)."""

    def __init__(self, monkeypatch: Any) -> None:
        monkeypatch.setattr(report_rows, "DRAIN_MIN", 0)       # a small run's report waits for its rows too
        self.hits = 0
        real = report_mod.from_memo

        def counted(*a: Any) -> Any:
            out = real(*a)
            self.hits += out is not None
            return out
        monkeypatch.setattr(report_mod, "from_memo", counted)


def settled(service: Any) -> None:
    """Until the run tasks (and so their end-of-run reports) are done."""
    deadline = time.monotonic() + 60
    while service.service.runs.tasks:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def spy_workers(monkeypatch: Any) -> list[Any]:
    """The report-rows worker processes the service starts from now on."""
    started: list[Any] = []

    class Spied(report_rows.worker.WorkerProcess):
        def __init__(self, *a: Any) -> None:
            super().__init__(*a)
            started.append(self)
    monkeypatch.setattr(report_rows.worker, "WorkerProcess", Spied)
    return started


def workers_ended(service: Any, started: list[Any]) -> None:
    """Until every worker process started has ended (30 s at most)."""
    deadline = time.monotonic() + 30
    while service.service.runs.rows._pool is not None or any(w.proc.poll() is None for w in started):
        assert time.monotonic() < deadline, "the report-rows worker still runs after the last run ended"
        time.sleep(0.05)
    assert started


def cold_rebuild(api: Any, service: Any, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the report as it stands, the same report rebuilt with no cache, no head and no memo)."""
    settled(service)
    first = api.ok("GET", f"/runs/{run_id}/report")

    def clear(c: sqlite3.Connection) -> None:
        for table in ("action_cache", "action_last", "report_heads", "report_rows"):
            c.execute(f"DELETE FROM {table}")
    service.service.journal.submit_sync(clear)
    cold = api.ok("GET", f"/runs/{run_id}/report")
    assert cold["cache_hit"] is False
    return first, cold


def completed_run(api: Any, ds: dict[str, Any]) -> str:
    """The id of a run of one simulated single model ("m") over `ds`, waited for until it completed."""
    with SimulatorThread(models=[SimModel("m", skill=0.7)]) as sim:
        api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url)]})
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
        assert api.wait(run_id)["status"] == "completed"
    return str(run_id)


def memo_count(service: Any, run_id: str, *, gone: bool = False) -> int:
    """The run's memoised rows (`gone`: once they are deleted, which follows the end-of-run report)."""
    deadline = time.monotonic() + 30
    while True:
        n = service.service.journal.one("SELECT COUNT(*) AS n FROM report_rows WHERE run_id=?", (run_id,))["n"]
        if not gone or n == 0 or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def assert_same(service: Any, first: dict[str, Any], cold: dict[str, Any]) -> None:
    assert cold["content_digest"] == first["content_digest"]
    assert cold["report_digest"] == first["report_digest"]
    store = service.service.objects
    a, b = store.get_json(first["report_digest"]), store.get_json(cold["report_digest"])
    assert a == b and all_rows(store, a["results"]) == all_rows(store, b["results"])


def test_a_router_and_singles_with_failed_and_ambiguous_cells(api, service, prepare, monkeypatch) -> None:
    ds = prepare("mmlu-pro")
    cases = decode_cases(Path(ds["path"]).read_bytes())
    bad = [m.model_dump() for m in cases[3].messages]
    router = RouterRule(strong="strong", weak="weak", long_prompt_chars=1500, keywords=("math", "physics"),
                        config_hash="cfg-1")
    models = [SimModel("strong", skill=0.85), SimModel("weak", skill=0.45)]
    hits = MemoHits(monkeypatch)
    started = spy_workers(monkeypatch)
    monkeypatch.setattr(service.service.runs.rows, "forget", lambda run_id: None)   # keep the rows to test them
    with SimulatorThread(models=models, router=router, answer_key=load_answer_key(ds["path"])) as sim:
        sim.set_fault(lambda body: Fault(status=500, body='{"error": {"message": "boom"}}', label="500")
                      if body.get("messages") == bad and body.get("model") == "weak" else None)
        prices = {"strong": PRICE, "weak": PRICE}
        api.ok("POST", "/targets", {"targets": [
            {"id": "strong", "kind": "single", "base_url": sim.v1_url, "model": "strong", "prices": prices},
            {"id": "weak", "kind": "single", "base_url": sim.v1_url, "model": "weak", "prices": prices},
            {"id": "mom", "kind": "mom", "base_url": sim.router_url, "model": "MoM", "models": ["strong", "weak"],
             "max_inference_calls": 1, "config_hash": "cfg-1", "preview_url": sim.router_url + "/preview",
             "prices": prices}]})
        plan = freeze(api, manifest(ds, [{"id": "strong"}, {"id": "weak"}, {"id": "mom"}]))
        run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
        run = api.wait(run_id)
    assert run["status"] == "failed" and run["progress"]["failed"] == 1, run
    total = run["progress"]["total"]
    settled(service)
    assert hits.hits == total                # the end-of-run report computed no row itself
    assert memo_count(service, run_id) == total
    assert started                           # built by the worker process
    ended = service.service.runs.final_report(run_id)
    made = service.service.figures._cache.get(ended)     # upstream's figures, made as the report was built (issue 42)
    assert made is not None and made.failure is not None
    assert made == ReportFigures(service.service.objects)._compute(service.service.objects.get_json(ended))
    first = api.ok("GET", f"/runs/{run_id}/report")
    assert first["cache_hit"] is True
    assert first["paired"] is not None and first["paired"].get("available") is not None
    assert sum(t["failed"] for t in first["summary"]["targets"]) == 1

    # a cell made ambiguous after its row was built (as a restart's recovery does): that row no longer holds
    victim = service.service.journal.one("SELECT cell_id FROM cells WHERE run_id=? AND state='completed' "
                                         "ORDER BY seq LIMIT 1", (run_id,))["cell_id"]
    service.service.journal.submit_sync(lambda c: c.execute(
        "UPDATE cells SET state='ambiguous', error_class='ambiguous_dispatch', call=NULL WHERE run_id=? AND "
        "cell_id=?", (run_id, victim)))
    warm = api.ok("GET", f"/runs/{run_id}/report")
    assert warm["cache_hit"] is False and hits.hits == 2 * total - 1
    assert sum(t["ambiguous_dispatch"] for t in warm["summary"]["targets"]) == 1
    assert warm["content_digest"] != first["content_digest"]
    warm, cold = cold_rebuild(api, service, run_id)
    assert_same(service, warm, cold)


def test_a_judged_run(api, service, tmp_path, monkeypatch) -> None:
    from srbench.benchmarks.judge import JUDGE_GRADER
    from srbench.simulate import samples

    src = samples.write_simpleqa(tmp_path / "sq")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    hits = MemoHits(monkeypatch)
    started = spy_workers(monkeypatch)
    models = [SimModel("subject", skill=0.6), SimModel("judge-model", skill=1.0)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [
            single("subject", sim.v1_url),
            {"id": "judge", "kind": "single", "base_url": sim.v1_url, "model": "judge-model",
             "prices": {"judge-model": {"input": 0.5, "cached_input": 0.5, "cache_write": 0.5, "output": 2.0}}}]})
        (Path(service.store_dir) / "benchmark-options.json").write_text(
            json.dumps({"simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "subject"}]))})["id"]
        run = api.wait(run_id)
    assert run["status"] == "completed", run
    settled(service)
    assert hits.hits == run["progress"]["total"] == 5 and memo_count(service, run_id, gone=True) == 0   # read, then deleted
    workers_ended(service, started)         # no run left: the worker process has ended (issue 42, item 3)
    first, cold = cold_rebuild(api, service, run_id)
    assert first["cache_hit"] is True
    assert first["summary"]["targets"][0]["judge_cost_usd"] > 0
    assert_same(service, first, cold)


def test_a_report_asked_as_the_run_ends_is_built_once(api, service, prepare, monkeypatch) -> None:
    """Issue 42 (item 2): a GET /report during the end-of-run report waits for it instead of building the same
    report a second time beside it (on a busy 2-core host the two builds took each other's CPU)."""
    from srbench import TERMINAL_STATUSES
    from srbench.service.runs import manager as manager_mod

    ds = prepare("mmlu-pro")
    rows = service.service.runs.rows
    real_drain = rows.drain

    def slow_drain(run_id: str, *a: Any) -> None:
        real_drain(run_id, *a)
        time.sleep(1.0)             # the end-of-run report starts late: the report below is asked before it
    monkeypatch.setattr(rows, "drain", slow_drain)
    builds: list[str] = []
    real_build = manager_mod.build_report

    def counted(*a: Any, **k: Any) -> Any:
        builds.append(a[1].run_id)
        return real_build(*a, **k)
    monkeypatch.setattr(manager_mod, "build_report", counted)
    with SimulatorThread(models=[SimModel("m", skill=0.7)]) as sim:
        api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url)]})
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
        while api.ok("GET", f"/runs/{run_id}")["status"] not in TERMINAL_STATUSES:
            time.sleep(0.01)
        report = api.ok("GET", f"/runs/{run_id}/report")
    assert report["cache_hit"] is True and builds == [run_id]


def test_the_worker_process_ends_when_the_last_run_ends_before_its_report_is_done(
        api, service, prepare, monkeypatch) -> None:
    """Issue 42 (item 3): once no run dispatches, the worker process ends before the end-of-run report is
    built, not after it (it held ~100 MiB beside the report's own peak). The run's rows are kept here (no
    forget), as they are while its report builds: on the code before, the worker ran as long as they were."""
    ds = prepare("mmlu-pro")
    MemoHits(monkeypatch)
    started = spy_workers(monkeypatch)
    monkeypatch.setattr(service.service.runs.rows, "forget", lambda run_id: None)
    run_id = completed_run(api, ds)
    settled(service)
    workers_ended(service, started)
    assert memo_count(service, run_id) > 0          # its rows were built by the worker, and are still there


def test_rows_wait_for_a_starting_worker_instead_of_being_built_in_the_service(
        api, service, prepare, monkeypatch) -> None:
    """Issue 42 (item 1): while the worker process starts (~0.5 s) the rows wait for it, up to WORKER_WAIT_S,
    rather than being built on the service's thread, where they took the GIL from the dispatching loop (at
    zero latency the largest share of a short run's CPU). On the code before, the first cells of a run were
    built in the service at once."""
    monkeypatch.setattr(report_rows, "WORKER_WAIT_S", 120.0, raising=False)   # however busy the host: the worker is awaited
    MemoHits(monkeypatch)                                         # the report waits for the rows
    in_service: list[str] = []
    real = report_rows.cell_row

    def counted(engine: Any, ri: Any, cell_id: str, cell: Any) -> Any:
        in_service.append(cell_id)
        return real(engine, ri, cell_id, cell)
    monkeypatch.setattr(report_rows, "cell_row", counted)
    monkeypatch.setattr(service.service.runs.rows, "forget", lambda run_id: None)     # the rows stay to count
    started = spy_workers(monkeypatch)
    ds = prepare("mmlu-pro")
    run_id = completed_run(api, ds)
    settled(service)
    assert started and memo_count(service, run_id) > 0 and in_service == []


def test_the_dispatcher_the_rows_and_the_end_of_run_report_share_one_decoded_dataset(
        api, service, prepare, monkeypatch) -> None:
    """Issue 42 (item 3): the run's dispatcher, the rows the service builds itself (no worker process, or one still
    starting) and the end-of-run report read one decoded copy of the dataset (stages/datasets/decoded.py), not
    one each (~8 MiB a copy at 2,000 cases). On the code before, each decoded its own."""
    from srbench.service.runs import manager as manager_mod
    from srbench.stages.report import cells as cells_mod

    rows = service.service.runs.rows
    monkeypatch.setattr(rows, "_no_worker", True)               # every row is built on the service's thread
    monkeypatch.setattr(rows, "forget", lambda run_id: None)    # its inputs stay to be looked at
    MemoHits(monkeypatch)
    tables: list[tuple[str, Any]] = []
    for mod in (manager_mod, cells_mod):
        def spied(store: Any, digest: str, _real: Any = mod.cases_by_id, _name: str = mod.__name__) -> Any:
            out = _real(store, digest)
            tables.append((_name, out))
            return out
        monkeypatch.setattr(mod, "cases_by_id", spied)
    ds = prepare("mmlu-pro")
    run_id = completed_run(api, ds)
    settled(service)
    assert memo_count(service, run_id) > 0
    ri = rows._runs[run_id]
    assert ri is not None and ri.cases
    assert [name.rsplit(".", 1)[1] for name, _ in tables] == ["manager", "cells", "cells"]  # dispatch, rows, report
    assert all(table is ri.cases for _, table in tables)


def test_the_worker_indexes_only_the_packs_of_its_batch(api, service, prepare, monkeypatch) -> None:
    """Issue 42 (item 3): the service names the packs a batch's calls are in and the worker indexes only those,
    never listing the store's packs (its index of every pack was 12 MiB at 100k cells, growing with the store);
    the rows are the ones built with the whole index. On the code before, the worker listed every pack."""
    from srbench.service.journal.cell_rows import cells_by_id
    from srbench.service.runs import report_rows_worker as worker_mod

    ds = prepare("mmlu-pro")
    run_id = completed_run(api, ds)
    settled(service)
    journal, rows = service.service.journal, service.service.runs.rows
    plan = journal.one("SELECT plan FROM runs WHERE id=?", (run_id,))["plan"]
    ids = [r["cell_id"] for r in journal.query("SELECT cell_id FROM cells WHERE run_id=?", (run_id,))]
    todo = [(r.cell_id, [r.seq, r.case_id, r.target_id, r.state, r.call, r.error_class, r.judge_call])
            for r in cells_by_id(journal, run_id, ids)]
    packs = rows._packs_of(todo)
    assert packs
    monkeypatch.setattr(worker_mod, "_worker", [])
    monkeypatch.setattr(worker_mod.threading, "Thread", lambda *a, **k: type("T", (), {"start": lambda s: None})())
    worker_mod.init(service.service.objects.url, True, journal.path)
    _, hinted, failed = worker_mod.build(plan, todo, packs)
    store = worker_mod._worker[0].store
    assert store.packs is not None and store.packs.listings == 0 and store.packs.pack_paths() == packs
    assert failed == [] and len(hinted) == len(todo)
    assert worker_mod._worker[0].cache.conn.execute("PRAGMA cache_size").fetchone()[0] == -256   # (not 2 MiB)
    monkeypatch.setattr(worker_mod, "_worker", [])
    worker_mod.init(service.service.objects.url, True, journal.path)
    _, whole, _ = worker_mod.build(plan, todo)
    assert worker_mod._worker[0].store.packs.listings > 0 and whole == hinted


def test_the_workers_batch_store_reads_packed_calls_ahead_and_compares_a_reput_once(tmp_path, monkeypatch) -> None:
    """Issue 42 (item 2): a worker batch reads its packed call records one open a pack (`read_ahead`) and an
    object put again in the same batch without a barrier (a multiple-choice grade) is not compared with its
    stored copy again; after the batch (`forget`) a put compares again, and every get is still the stored bytes."""
    from srbench.cas import ObjectStore, localfs
    from srbench.service.runs.report_rows_worker import _BatchStore

    root = str(tmp_path / "cas")
    calls = ObjectStore(root).put_many([b'{"n":%d}' % i for i in range(5)], durable=False)
    store = _BatchStore(root, verify_reads=True, create=False)
    assert store.packs is not None
    store.packs.refresh()                          # (the worker indexes the packs the service names)
    store.read_ahead([*calls, "b3:" + "0" * 64])
    assert set(store.kept) == set(calls)
    opened: list[str] = []
    real = localfs.same_bytes
    monkeypatch.setattr(localfs, "same_bytes", lambda path, data: opened.append(path) or real(path, data))
    grade = b'{"kind":"grade"}'
    first = store.put_bytes(grade, durable=False)
    assert [store.put_bytes(grade, durable=False) for _ in range(3)] == [first] * 3 and len(opened) == 1
    store.put_bytes(grade, durable=True)          # a durable put is never skipped
    assert len(opened) == 2
    store.forget()
    store.put_bytes(grade, durable=False)
    assert len(opened) == 3 and store.get_bytes(first) == grade and store.get_bytes(calls[2]) == b'{"n":2}'
