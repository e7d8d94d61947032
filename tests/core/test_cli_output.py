"""The terminal views' building blocks (issue 29, item 1): ids whole at 80 columns, the rest wrapped or
named; a long reason cut to one line with its fix; JSON on a pipe exactly as json.dumps printed it."""

from __future__ import annotations

import io
import json

from rich.console import Console

from srbench.cli.output import console, emit, generic_view, one_line, records_table
from srbench.cli.views import run_view, runs_view


def render(value, width: int = 80) -> str:
    out = io.StringIO()
    generic_view(value, Console(file=out, width=width, color_system=None))
    return out.getvalue()


def test_ids_stay_whole_and_the_fields_that_do_not_fit_are_named() -> None:
    rows = [{"id": f"call-{i:032x}", "case_id": f"mmlu-pro/{i:020d}", "target_id": "a-target",
             "payload": {"k": "v" * 50}, "note": "words " * 20} for i in range(3)]
    text = render({"calls": rows, "total": 3})
    assert all(r["id"] in text and r["case_id"] in text for r in rows)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "also " in text and "(all with --json)" in text and "total" in text
    table = records_table(rows, width=200)                   # room for every field: nothing left out
    assert table.caption is None and len(table.columns) == 5


def test_one_line_keeps_the_head_and_the_fix() -> None:
    long = "a code-grading sandbox: " + "x " * 80 + "(sr-bench setup --build-sandbox --install)"
    assert one_line(long) == "a code-grading sandbox… (sr-bench setup --build-sandbox --install)"
    assert one_line("short reason") == "short reason"
    assert one_line("an interpreter: " + "y " * 80 + "(DEP-2)") == "an interpreter…"


def test_a_pipe_gets_the_json_unchanged(capsys) -> None:
    value = {"b": [1, 2], "a": {"x": None}}
    emit(value, lambda v, con: con.print("human"))           # pytest's stdout is not a terminal
    assert capsys.readouterr().out == json.dumps(value, indent=2, sort_keys=True) + "\n"


def _bench(name: str) -> dict:
    return {"benchmark": name, "n": 14, "candidate_accuracy": 0.571, "candidate_accuracy_ci95": [0.33, 0.79],
            "baseline_accuracy": 0.5, "baseline_accuracy_ci95": [0.27, 0.73], "delta": 0.07,
            "delta_interval": {"ci": [-0.65, 0.8]}, "wins": 3, "losses": 2, "ties": 9}


def test_the_per_benchmark_comparison_reads_at_80_columns() -> None:
    """The demo's per-benchmark table squeezed each accuracy into a 3-character column ("can/did/ate",
    "0.5/7/[0."): one router is named in the title and every accuracy keeps its number whole."""
    from srbench.cli.derived import per_benchmark_table

    cmp = {"baseline": {"target_id": "large"},
           "candidates": [{"target_id": "mom", "kind": "mom", "benchmarks": [_bench("simpleqa-verified"),
                                                                           _bench("mmlu-pro")]}]}
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(per_benchmark_table(cmp))
    text = out.getvalue()
    assert "mom against large" in text and max(len(line) for line in text.splitlines()) <= 80
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("mmlu-pro"))
    assert "0.57" in lines[i] and "0.50" in lines[i] and "3/2/9" in lines[i]
    assert "[0.33,0.79]" in lines[i + 1] and "[0.27,0.73]" in lines[i + 1]       # whole intervals (issue 40)
    cmp["candidates"].append({"target_id": "mom2", "kind": "mom", "benchmarks": [_bench("hle")]})
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(per_benchmark_table(cmp))
    assert "mom2 against large" in out.getvalue() and "[-0.65,+0.80]" in out.getvalue()   # a table per router
    assert max(len(line) for line in out.getvalue().splitlines()) <= 80


def test_the_run_summary_splits_no_number_at_80_columns() -> None:
    """`sr-bench run` printed its wide per-target table at 80 columns: "correc/t", "0.0005/4", "p50/p9/5 s";
    it now prints the compact table there and the wide one (tokens, TTFT) from 120 columns."""
    from srbench.cli.runs import targets_table

    s = {"target_id": "local", "kind": "single", "correct": 0, "total": 2, "accuracy": 0.0, "accuracy_ci95": [0.0, 0.66],
         "macro_accuracy": 0.0, "cost_usd": 0.00054, "latency_p50_s": 0.001, "latency_p95_s": 0.002,
         "ttft_p50_s": 0.003, "tokens": {"input": 3560, "cached_input": 0, "cache_write": 0, "output": 6}}
    rep = {"run_id": "run-" + "a" * 20, "status": "completed", "complete": True, "summary": {"targets": [s]}}
    for width in (80, 120):
        out = io.StringIO()
        Console(file=out, width=width, color_system=None).print(targets_table(rep, width))
        text = out.getvalue()
        row = next(line for line in text.splitlines() if "local (single)" in line)
        assert "0/2" in row and "0.00054" in row and "0.00/0.00" in row, text
        assert ("3560/0/0/6" in row) == (width >= 120), text


def test_a_target_with_an_unknown_call_cost_shows_its_known_part() -> None:
    """A cancelled run's targets showed cost "unknown" although their answered calls' cost is known."""
    from srbench.cli.views import report_targets_table

    s = {"target_id": "slow", "kind": "single", "correct": 0, "total": 14, "accuracy": 0.0, "accuracy_ci95": None,
         "macro_accuracy": 0.0, "cost_usd": None, "known_cost_usd": 0.00013185, "latency_p50_s": 1.0, "latency_p95_s": 1.0}
    rep = {"run_id": "run-" + "a" * 20, "status": "cancelled", "complete": False, "summary": {"targets": [s]}}
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(report_targets_table(rep))
    assert "≥0.00013" in out.getvalue() and "the known part" in " ".join(out.getvalue().split())
    s.update(known_cost_usd=0.0)
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(report_targets_table(rep))
    assert "unknown" in out.getvalue() and "≥" not in out.getvalue()


def test_the_targets_list_keeps_each_url_whole_at_80_columns() -> None:
    """`target list` cut base URLs mid-port ("http://127.0.0.1:800" then "0/v1"), so a copied URL was wrong."""
    from srbench.cli.views import targets_view

    targets = [{"id": f"t{i}", "kind": "single", "model": "my-model", "base_url": "http://127.0.0.1:8000/router/v1",
                "api_key_env": "MY_KEY", "prices": {"my-model": {}, "weak": {}}} for i in range(3)]
    out = io.StringIO()
    targets_view({"targets": targets}, Console(file=out, width=80, color_system=None))
    text = out.getvalue()
    assert text.count("http://127.0.0.1:8000/router/v1") == 3 and max(len(x) for x in text.splitlines()) <= 80, text
    assert text.count("my-model") == 3 and "--json" in text
    out = io.StringIO()
    targets_view({"targets": targets}, Console(file=out, width=120, color_system=None))
    assert out.getvalue().count("my-model, weak") == 3


def test_a_stored_name_is_shown_as_data_never_as_markup_or_escape_codes() -> None:
    """A run named with rich markup or terminal escape codes (the manifest's name is free text): `runs` on a
    terminal printed a traceback for '[/bold]' (MarkupError) and sent ESC sequences to the screen raw."""
    name = "oops [/bold] [red]x\x1b[2J\x1b]0;title\x07\rz"
    run = {"id": "run-0123456789abcdef0123", "status": "completed", "name": name, "targets": ["large"],
           "progress": {"completed": 1, "total": 1, "failed": 0}}
    for view, value in ((runs_view, {"runs": [run]}), (run_view, run)):
        out = io.StringIO()
        con = console()                     # the console every terminal view prints on
        con.file, con.width = out, 200
        view(value, con)
        text = out.getvalue()
        assert "oops [/bold] [red]x" in text and "\\x1b[2J" in text and "\\x07\\x0dz" in text, text
        assert "\x1b[2J" not in text and "\x07" not in text and "\r" not in text
