"""Issue 39, item 6: a dataset frozen by upstream's vllm-sr moves over unchanged. `data/upstream-dataset/` is a
folder as `vllm-sr benchmark dataset prepare --local` (0.4.0) wrote it from the synthetic MMLU-Pro sample (its
host path replaced by the file's name; upstream's id does not cover the path). Imported, it keeps its bytes,
sha256, case ids and upstream's id; it is marked as upstream-frozen; runs, reports and compare work on it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from srbench.benchmarks.graders import listed_options
from srbench.simulate.behaviour import answer_key_from_cases
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import Api, freeze, manifest, single

FOLDER = next((Path(__file__).parent / "data" / "upstream-dataset").iterdir())


def _import(api: Api, folder: Path) -> dict[str, Any]:
    return api.ok("POST", "/datasets/import", {"path": str(folder)})


def test_an_upstream_dataset_is_imported_unchanged(api: Api) -> None:
    upstream = json.loads((FOLDER / "manifest.json").read_text())
    data = (FOLDER / "cases.jsonl").read_bytes()
    ds = _import(api, FOLDER)
    assert ds["id"] == upstream["id"] == FOLDER.name and ds["ref"] == "ds-" + upstream["id"][:32]
    assert ds["sha256"] == upstream["sha256"] == hashlib.sha256(data).hexdigest()
    assert Path(ds["path"]).read_bytes() == data and ds["path"].endswith(".jsonl")
    assert ds["upstream"]["id"] == upstream["id"]
    assert ds["upstream"]["manifest"] == {k: v for k, v in upstream.items() if k != "path"}
    assert ds["case_count"] == upstream["case_count"] and ds["benchmarks"] == ["mmlu-pro"]
    assert any("frozen by upstream" in n for n in ds["notices"])
    # its manifest.json names it as well; again, the same dataset; every name of it resolves
    assert _import(api, FOLDER / "manifest.json") == ds
    assert len(api.ok("GET", "/datasets")["datasets"]) == 1
    for name in (ds["id"], ds["ref"], ds["sha256"]):
        assert api.ok("GET", f"/datasets/{name}")["manifest"]["id"] == ds["id"]
    ids = [json.loads(line)["id"] for line in data.splitlines()]
    page = api.ok("GET", f"/datasets/{ds['id']}/cases?limit=100")
    assert [c["id"] for c in page["cases"]] == ids


def test_runs_reports_and_compare_work_on_it(api: Api, sim: SimulatorThread) -> None:
    ds = _import(api, FOLDER)
    assert sim.server is not None
    sim.server.answer_key = answer_key_from_cases(decode_cases((FOLDER / "cases.jsonl").read_bytes()))
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("weak", sim.v1_url, "sim-weak")]})
    runs = []
    for target in ("strong", "weak"):
        plan = freeze(api, manifest(ds, [{"id": target}]))
        assert plan["dataset"]["sha256"] == ds["sha256"] and plan["dataset"]["id"] == ds["ref"]
        status, run = api.post("/runs", {"manifest": plan, "idempotency_key": f"up-{target}"})
        assert status == 201 and api.wait(run["id"])["status"] == "completed"
        runs.append(run["id"])
    report = api.ok("GET", f"/runs/{runs[0]}/report")
    (row,) = report["summary"]["targets"]
    assert row["total"] == ds["case_count"] and row["correct"] > 0
    results = api.ok("GET", f"/runs/{runs[0]}/results?limit=100")["results"]
    assert sorted(r["case_id"] for r in results) == sorted(c.id for c in decode_cases(Path(ds["path"]).read_bytes()))
    cmp = api.ok("POST", "/comparisons", {"baseline_run_id": runs[0], "candidate_run_id": runs[1]})
    assert [c["target_id"] for c in cmp["candidates"]] == ["weak"]


def test_an_edited_or_broken_folder_is_refused_naming_the_problem(api: Api, tmp_path: Path) -> None:
    edited = tmp_path / "edited"
    shutil.copytree(FOLDER, edited)
    m = json.loads((edited / "manifest.json").read_text())
    (edited / "manifest.json").write_text(json.dumps({**m, "seed": m["seed"] + 1}))
    assert "upstream's identity rule" in api.error("POST", "/datasets/import", {"path": str(edited)}, 400)
    damaged = tmp_path / "damaged"
    shutil.copytree(FOLDER, damaged)
    with open(damaged / "cases.jsonl", "ab") as f:
        f.write(b'{"id": "extra"}\n')
    msg = api.error("POST", "/datasets/import", {"path": str(damaged)}, 400)
    assert "cases.jsonl hashes to" in msg and "not a valid case" in msg
    msg = api.error("POST", "/datasets/import", {"path": str(tmp_path / "nowhere")}, 400)
    assert "no file" in msg and "manifest.json" in msg
    other = tmp_path / "other-protocol"          # another protocol version: refused by name
    shutil.copytree(FOLDER, other)
    (other / "manifest.json").write_text(json.dumps({**m, "version": "x"}))
    msg = api.error("POST", "/datasets/import", {"path": str(other)}, 400)
    assert "version 'x': sr-bench imports sr-bench-1.0 datasets only" in msg, msg
    assert api.ok("GET", "/datasets")["datasets"] == []


def test_a_link_to_its_manifest_or_another_file_from_a_spaced_unicode_path(api: Api, tmp_path: Path) -> None:
    """A link to the manifest (under any name) imports the folder the manifest is in; it said 'no file
    LINK/manifest.json'. Any other file is refused as one: it said 'no file /etc/passwd/manifest.json'."""
    folder = tmp_path / "dáta with space" / FOLDER.name
    shutil.copytree(FOLDER, folder)
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "ds.json").symlink_to(folder / "manifest.json")
    (tmp_path / "links" / "manifest.json").symlink_to(folder / "manifest.json")
    (tmp_path / "folder link").symlink_to(folder)
    ds = _import(api, folder)
    assert ds["id"] == FOLDER.name
    for name in ("links/ds.json", "links/manifest.json", "folder link", "folder link/manifest.json"):
        assert _import(api, tmp_path / name) == ds, name
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    msg = api.error("POST", "/datasets/import", {"path": str(other)}, 400)
    assert msg == (f"upstream dataset: {other} is a file, neither the folder `vllm-sr benchmark dataset prepare "
                   "--local` wrote (it holds manifest.json and cases.jsonl) nor its manifest.json"), msg


def test_an_mcq_prompt_lists_its_option_count() -> None:
    """An upstream-frozen MMLU-Pro case has no option_count: its prompt's lettered lines give it."""
    prompt = "Q?\n\nA. one\nB. two\nC. A. not an option line\nD. four\n\nReturn only the letter."
    assert listed_options(prompt) == 4 and listed_options("no options") is None


def test_export_writes_upstreams_format_and_import_takes_it_back(tmp_path: Path, sources) -> None:
    """`sr-bench dataset export ID --upstream STORE` writes <STORE>/datasets/<id>/{manifest.json,cases.jsonl}:
    an imported dataset as it came (its id unchanged), an sr-bench dataset with the id upstream's rule gives;
    either imports again as the same bytes."""
    from tests.integration.conftest import Cli

    from srbench.service.wire.upstream_dataset import upstream_identity

    cli = Cli(tmp_path)
    try:
        imported = cli.json("dataset", "import", str(FOLDER))
        back = cli.json("dataset", "export", imported["id"], "--upstream", str(tmp_path / "up"))
        upstream = json.loads((FOLDER / "manifest.json").read_text())
        folder = tmp_path / "up" / "datasets" / upstream["id"]
        assert back == {**upstream, "path": str(folder / "cases.jsonl")}
        assert (folder / "cases.jsonl").read_bytes() == (FOLDER / "cases.jsonl").read_bytes()
        ours = cli.json("dataset", "prepare", "--benchmark", "gpqa-diamond", "--profile", "smoke", "--source-path",
                        str(sources["gpqa-diamond"]), "--revision", "synthetic-sample-v1")
        out = cli.json("dataset", "export", ours["id"], "--upstream", str(tmp_path / "up"))
        assert out["id"] == upstream_identity(out) and out["sha256"] == ours["sha256"]
        assert out["selection"] == "sr-bench:stratified-hash-v1" and out["split"] == "dev"
        written = tmp_path / "up" / "datasets" / out["id"]
        assert json.loads((written / "manifest.json").read_text()) == out
        again = cli.json("dataset", "import", str(written))
        assert (again["id"], again["sha256"], again["upstream"]["id"]) == (out["id"], ours["sha256"], out["id"])
    finally:
        cli.run("stop", ok=False)
