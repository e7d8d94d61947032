"""The operator's first hour (issue 40, items 5–7; items 1–4: test_cli_first_hour.py): what a new user trips over around the commands.

A store that cannot be written is named as such; ids are echoed whole; every command prints JSON on a
pipe; a manifest names its dataset by the file `dataset prepare` wrote, its ref or id, or its sha256.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import Cli
from tests.integration.test_cli_terminal import drain, on_tty, two_runs  # noqa: F401 - the fixture

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.simulate.behaviour import SimModel
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread


def test_a_store_that_cannot_be_written_is_named(cli: Cli) -> None:
    for extra in ((), ("--embedded",)):
        r = cli.run("--store", "/proc/srbench", *extra, "runs", ok=False)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("error: the store /proc/srbench cannot be written here") and "--store" in r.stderr
        assert "service-token" not in r.stderr


def test_export_and_regrade_echo_the_whole_id(cli: Cli, two_runs: list[str]) -> None:  # noqa: F811
    rid = two_runs[0]
    n = next(i for i in range(5, 25) if rid[:i] != two_runs[1][:i])
    assert cli.json("export", rid[:n], "--output", str(cli.cwd / "x.json"))["run_id"] == rid
    assert cli.json("regrade", rid[:n], "--output", str(cli.cwd / "r.json"))["run_id"] == rid


def test_store_verify_prints_json_on_a_pipe(cli: Cli) -> None:
    answer = json.loads(cli.run("store", "verify").stdout)
    assert answer["ok"] is True and answer["problems"] == 0
    assert cli.json("stop") == {"stopping": True, "message": "service stopping; all results are kept"}
    again = cli.json("stop")
    assert again["stopping"] is False and again["message"].startswith("nothing to stop: ")


def _arc(cli: Cli, sources: dict[str, Path]) -> dict:
    return cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke", "--source-path",
                    str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision,
                    "--output", str(cli.cwd / "arc.json"))


def test_a_manifest_names_its_dataset_by_file_ref_id_or_sha256(cli: Cli, sources: dict[str, Path]) -> None:
    """Every form freezes to the same plan (the plan hash never depends on where the file lives)."""
    m = _arc(cli, sources)
    printed = cli.write("printed.json", cli.json("dataset", "show", m["ref"]))       # `… > printed.json`
    cli.json("target", "register", "--file", cli.write("targets.json", [
        {"id": "t", "kind": "single", "base_url": "http://127.0.0.1:9/v1", "model": "t",
         "prices": {"t": {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}}]))
    (cli.cwd / "sub").mkdir()
    (cli.cwd / "sub" / "copy.json").write_text((cli.cwd / "arc.json").read_text())
    head = {"version": "sr-bench-1.0", "profile": "smoke", "seed": 20260918, "targets": [{"id": "t"}]}
    forms: list[tuple[str, object]] = [
        ("m.json", {"sha256": m["sha256"]}), ("m.json", {"path": "arc.json"}), ("m.json", "arc.json"),
        ("m.json", {"path": printed}), ("m.json", {"path": "arc.jsonl"}), ("m.json", {"id": m["ref"]}),
        ("m.json", {"id": m["id"]}), ("m.json", m["ref"]), ("m.json", {"ref": m["sha256"]}),
        ("sub/m.json", {"path": "copy.json"})]                                      # beside the manifest
    hashes = set()
    for name, dataset in forms:
        path = cli.write(name, {**head, "dataset": dataset})
        hashes.add(cli.json("plan", "--manifest", path, "--output", str(cli.cwd / "frozen.json"))["plan_sha256"])
    assert len(hashes) == 1, hashes
    for dataset, says in (({"path": "gone.json"}, "dataset.path gone.json: no such file"),
                          ("nonsense", "dataset 'nonsense': no such file, and not a dataset ref"),
                          ("ds-" + "0" * 32, f"dataset ds-{'0' * 32}: not a dataset of this store"),
                          ({"path": "targets.json"}, "not a dataset manifest (no sha256)")):
        r = cli.run("plan", "--manifest", cli.write("bad.json", {**head, "dataset": dataset}), "--output",
                    str(cli.cwd / "f.json"), ok=False)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr


def test_benchmark_options_are_set_by_a_command_through_the_service(cli: Cli) -> None:
    """`options set/show` write and read the store's benchmark-options.json through the service; a bad key or
    value is one line naming it; the plan's refusal names the command, not the file to edit."""
    store = cli.cwd / ".sr-bench" / "default" / "store"
    res = cli.json("options", "set", "hle", "judge=judge", "grader_version=sr-bench-reference-judge-v1")
    assert res["options"] == {"hle": {"judge": "judge", "grader_version": "sr-bench-reference-judge-v1"}}
    cli.json("options", "set", "arc-agi-2", "attempts=2")
    assert json.loads((store / "benchmark-options.json").read_text())["arc-agi-2"] == {"attempts": 2}
    assert cli.json("options", "set", "arc-agi-2", "--unset", "attempts")["options"].keys() == {"hle"}
    assert cli.json("options", "show", "hle")["options"] == res["options"]
    for args, says in ((("hle", "grader_version=x"), "hle.grader_version must be one of"),
                       (("arc-agi-2", "attempts=3"), "attempts must be 1 or 2"),
                       (("mmlu-pro", "judge=j"), "mmlu-pro has no option judge"),
                       (("nope", "a=1"), "no benchmark 'nope'"),
                       (("hle", "judge"), "give KEY=VALUE")):
        r = cli.run("options", "set", *args, ok=False)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr
    setup = {b["benchmark"]: b for b in json.loads(cli.run("setup", ok=False).stdout)["benchmarks"]}
    assert any("sr-bench options set simpleqa-verified judge=<target id>" in m
               for m in setup["simpleqa-verified"]["missing"]), setup["simpleqa-verified"]


def _register(cli: Cli, url: str, model: str = "big") -> None:
    cli.json("target", "register", "--file", cli.write("targets.json", [
        {"id": "big", "kind": "single", "base_url": url, "model": model,
         "prices": {model: {"input": 1.0, "cached_input": 0.5, "cache_write": 1.0, "output": 2.0}}}]))


def test_eval_prepares_plans_runs_and_reports_in_one_command(cli: Cli) -> None:
    """Same inputs → same dataset, same plan, same run: the second eval sends nothing and prints the report."""
    args = ("eval", "--benchmark", "arc-agi-2", "--profile", "smoke", "--target", "big", "--source", "mirror",
            "--max-cost-usd", "0.000001")
    with SimulatorThread(models=[SimModel("big", skill=0.9)], answer_key={}) as sim:
        _register(cli, sim.v1_url)
        refused = cli.run(*args, ok=False)               # the budget is below the estimate: a warning about money
        assert refused.returncode == 2 and not sim.log, refused.stderr
        assert refused.stderr.splitlines()[-1].startswith("error: 1 warning(s) above are about money (the upper cost")
        assert "nothing was sent" in refused.stderr and "--yes" in refused.stderr
        args += ("--yes",)
        first = cli.run(*args, ok=False)                 # the budget is tiny: the run stops at the cap
        answer = json.loads(first.stdout)
        assert answer["created"] is True and answer["report"]["run_id"] == answer["run_id"], first.stderr
        assert answer["dataset"].startswith("ds-") and len(answer["plan_sha256"]) == 64
        assert "warning: the upper cost estimate" in first.stderr          # the plan's warnings, before it spends
        assert f"dataset {answer['dataset']}: 2 cases of arc-agi-2 (smoke" in first.stderr
        sent = len(sim.log)
        code, out, err = on_tty(cli, *args)
        assert len(sim.log) == sent                                      # nothing sent again
        assert f"the same plan already ran as {answer['run_id']}" in err and "--idempotency-key NEW" in err
        assert "Does routing pay?" in out and f"run {answer['run_id']}: " in out and code == first.returncode
    [ds] = cli.json("dataset", "list")["datasets"]                       # one dataset, reused
    assert ds["ref"] == answer["dataset"]


def test_retry_continues_a_stopped_run_in_one_command(cli: Cli, sources: dict[str, Path]) -> None:
    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke", "--source-path",
                 str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    with SimulatorThread(models=[SimModel("big", skill=0.9, latency_s=2.0)], answer_key={}) as sim:
        _register(cli, sim.v1_url)
        manifest = cli.write("m.json", {"version": "sr-bench-1.0", "profile": "smoke", "seed": 20260918,
                                        "dataset": {"sha256": m["sha256"]}, "targets": [{"id": "big"}],
                                        "limits": {"concurrency": 1}})
        rid = cli.json("run", "--manifest", manifest, "--detach")["run_id"]
        cli.json("cancel", rid)
        while cli.json("show", rid)["status"] != "cancelled":
            pass
        child = cli.json("retry", rid[:12])               # the cells never sent (2 s a call, one at a time)
        assert child["status"] == "completed" and child["parent"] == rid and child["created"] is True
        assert child["report"]["run_id"] == child["run_id"] and child["progress"]["completed"] > 0
        again = cli.json("retry", rid)                    # the same retry binds the same child
        assert again["run_id"] == child["run_id"] and again["created"] is False
    r = cli.run("retry", child["run_id"], ok=False)       # every cell completed: nothing in either mode
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"error: {child['run_id']}: nothing to retry: its cells are ") and "--failed" not in \
        r.stderr and f"`sr-bench report {child['run_id']}`" in r.stderr, r.stderr


def test_retry_names_the_other_mode_only_where_it_has_cells() -> None:
    """`retry` of a run whose cells all completed offered `retry RUN --failed`, which had nothing either, and
    printed the reasons as a Python dict ("excluded: {'completed': 6}")."""
    from srbench.cli.evaluate import _nothing_to_retry

    assert _nothing_to_retry("run-a", "undispatched", {"completed": 6}) == (
        "run-a: nothing to retry: its cells are 6 completed (continued by a child run where claimed); its report: "
        "`sr-bench report run-a`")
    assert _nothing_to_retry("run-a", "undispatched", {"already_dispatched": 2, "completed": 4}) == (
        "run-a: no cell to continue in mode undispatched (2 already dispatched, 4 completed); the failed or "
        "interrupted cells: `sr-bench retry run-a --failed` (new attempts cost extra)")
    assert _nothing_to_retry("run-a", "failed", {"completed": 1, "unknown_usage_or_cost": 1}) == (
        "run-a: no cell to retry in mode failed (1 completed, 1 unknown usage or cost)")


def test_dataset_prepare_shows_progress_on_a_terminal(cli: Cli, sources: dict[str, Path]) -> None:
    """stdout to a file (`> arc.json`), stderr a terminal: a live line while it prepares, gone at the end;
    the file holds the manifest as always. On a pipe nothing but the JSON."""
    master, slave = pty.openpty()
    out = cli.cwd / "arc.json"
    with open(out, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "dataset", "prepare", "--benchmark",
                                 "arc-agi-2", "--profile", "smoke", "--source-path", str(sources["arc-agi-2"]),
                                 "--revision", ArcAgi2.source.revision], cwd=cli.cwd, env={**cli.env, "TERM": "xterm"},
                                stdin=subprocess.DEVNULL, stdout=fh, stderr=slave)
        os.close(slave)
        chunks = [drain(master)]
        assert proc.wait(timeout=120) == 0
    os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert "preparing arc-agi-2 smoke" in shown, shown
    assert json.loads(out.read_text())["benchmarks"] == ["arc-agi-2"]
    piped = cli.run("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke", "--source-path",
                    str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    assert "preparing" not in piped.stderr and json.loads(piped.stdout)["id"]
