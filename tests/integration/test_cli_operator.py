"""The operator's first hour (issue 40, items 5–7; items 1–4: test_cli_first_hour.py): what a new user trips over around the commands.

A store that cannot be written is named as such; ids are echoed whole; every command prints JSON on a
pipe; a manifest names its dataset by the file `dataset prepare` wrote, its ref or id, or its sha256.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import Cli
from tests.integration.test_cli_terminal import two_runs  # noqa: F401 - the fixture

from srbench.benchmarks.arc_agi_2 import ArcAgi2


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
