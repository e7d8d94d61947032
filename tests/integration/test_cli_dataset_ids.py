"""Issue 30, item 6: sr-bench's CLI with datasets handed out by their 64-hex id (``ref`` the ``ds-`` id).

`dataset prepare` prints and writes the 64-hex id and the ref; `dataset show` and `--cases` take the
id, the ref or the written manifest file alike; `dataset combine` takes manifest files written now and
ones written before (their `id` the ds- ref) to the same dataset; a malformed id is one line.
"""

from __future__ import annotations

import json
import re

from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.simulate.samples import SAMPLE_REVISION


def test_dataset_commands_take_either_name(cli, sources) -> None:
    out = cli.cwd / "mmlu.json"
    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                 "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION, "--output", str(out))
    assert re.fullmatch(r"[0-9a-f]{64}", m["id"]) and m["ref"] == "ds-" + m["id"][:32]
    written = json.loads(out.read_text())
    assert (written["id"], written["ref"]) == (m["id"], m["ref"])
    shown = [cli.json("dataset", "show", name) for name in (m["id"], m["ref"], m["sha256"], str(out))]
    assert all((s["id"], s["ref"], s["sha256"]) == (m["id"], m["ref"], m["sha256"]) for s in shown)
    pages = [cli.json("dataset", "show", name, "--cases") for name in (m["id"], m["ref"])]
    assert pages[0]["dataset_id"] == pages[1]["dataset_id"] == m["id"] and pages[0]["cases"] == pages[1]["cases"]
    assert [d["id"] for d in cli.json("dataset", "list")["datasets"]] == [m["id"]]
    # combine: manifests as printed now, and as printed before (the ds- id as `id`, no `ref`)
    arc = cli.json("dataset", "prepare", "--benchmark", "arc-agi-2", "--profile", "smoke",
                   "--source-path", str(sources["arc-agi-2"]), "--revision", ArcAgi2.source.revision)
    now = cli.json("dataset", "combine", cli.write("a.json", m), cli.write("b.json", arc))
    old = [{k: v for k, v in d.items() if k != "ref"} | {"id": d["ref"]} for d in (m, arc)]
    before = cli.json("dataset", "combine", cli.write("c.json", old[0]), cli.write("d.json", old[1]))
    assert (now["id"], now["ref"]) == (before["id"], before["ref"]) and now["ref"] == "ds-" + now["id"][:32]
    # the terminal line names the short ref; a malformed id is one line
    r = cli.run("dataset", "show", m["id"])
    assert r.stdout.startswith(f"dataset {m['ref']}  ") or json.loads(r.stdout)["ref"] == m["ref"]
    r = cli.run("dataset", "show", "nope", ok=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "malformed" in r.stderr, r.stderr
    assert "(`sr-bench dataset list`, or `GET /datasets`, lists them)" in r.stderr, r.stderr   # named only the route
