"""A NaN or an infinity given on the command line (a flag, an `options set` value) is one line naming it,
exit 2, and nothing is sent: each was httpx's 'Out of range float values are not JSON compliant' traceback."""

from __future__ import annotations

import pytest

from .conftest import cli_env, run_cli

DEAD = ["--url", "http://127.0.0.1:9"]          # nothing answers: the refusal comes before any request


@pytest.mark.parametrize(("args", "flag"), [
    (["compare", "run-x", "--margin", "nan"], "--margin"),
    (["compare", "run-x", "run-y", "--margin", "-inf"], "--margin"),
    (["eval", "--benchmark", "arc-agi-2", "--profile", "smoke", "--target", "t", "--max-cost-usd", "inf"],
     "--max-cost-usd"),
    (["store", "gc", "--grace-s", "nan"], "--grace-s"),
])
def test_a_non_finite_number_flag_is_a_usage_error(tmp_path, args, flag) -> None:
    proc = run_cli([*DEAD, *args], tmp_path, cli_env(SR_BENCH_TOKEN="t" * 32))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"Invalid value for '{flag}'" in proc.stderr and "is not a finite number" in proc.stderr, proc.stderr


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_option_value_is_one_line(tmp_path, value) -> None:
    proc = run_cli([*DEAD, "options", "set", "livecodebench", f"test_timeout_s={value}"], tmp_path,
                   cli_env(SR_BENCH_TOKEN="t" * 32))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: request body: set.test_timeout_s (") and "not a finite number" in proc.stderr


@pytest.mark.parametrize(("args", "refusal"), [
    (["compare", "run-x", "--margin", "-0.5"], "Invalid value for '--margin': -0.5 is not in the range 0<=x<=1."),
    (["compare", "run-x", "--margin", "2"], "Invalid value for '--margin': 2.0 is not in the range 0<=x<=1."),
    (["eval", "--benchmark", "arc-agi-2", "--profile", "smoke", "--target", "t", "--max-cost-usd", "0"],
     "Invalid value for '--max-cost-usd': 0.0 is not in the range x>0."),
])
def test_a_number_flag_out_of_the_services_range_is_a_usage_error(tmp_path, args, refusal) -> None:
    """The service's bounds (a margin within [0, 1], a budget above 0) are the flag's: a usage error naming the
    flag, nothing sent (they were the service's 'request body: margin: …' after a request)."""
    proc = run_cli([*DEAD, *args], tmp_path, cli_env(SR_BENCH_TOKEN="t" * 32))
    assert proc.returncode == 2 and refusal in proc.stderr, proc.stderr


def test_number_flags_show_their_real_bounds(tmp_path) -> None:
    """`compare --help` showed `[x<=None]` for --margin; `store gc --help` shows --grace-s's real bound."""
    shown = run_cli(["compare", "--help"], tmp_path, cli_env()).stdout + run_cli(
        ["store", "gc", "--help"], tmp_path, cli_env()).stdout
    assert "None]" not in shown and "[0<=x<=1]" in shown and "[x>=0]" in shown, shown


def test_the_store_option_names_the_variable_that_sets_it(tmp_path) -> None:
    """`--store`'s help gave the managed store as its default, though SR_BENCH_STORE (which every other
    environment-set option names) overrides it."""
    shown = " ".join(run_cli(["--help"], tmp_path, cli_env()).stdout.split())
    assert "--store DIRECTORY Store directory (default: SR_BENCH_STORE, else the managed store" in shown, shown
