"""Every command's `--help` ends with an Example section: the lines here, appended where a command's own
docstring has none (one table, so a new command without one fails tests/integration/test_cli_help.py).
Lines stay within 76 characters, so the help reads whole on an 80-column terminal."""

from __future__ import annotations

import inspect

import click

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("sr-bench demo", "sr-bench eval --benchmark arc-agi-2 --profile smoke --target mom"),
    "cancel": ("sr-bench cancel run-5f3a",),
    "candidate-plan": ("sr-bench candidate-plan BASE_RUN --target mom --output candidate.json",),
    "catalog": ("sr-bench catalog", "sr-bench catalog --json | jq '.benchmarks[].id'"),
    "compare": ("sr-bench compare BASE_RUN CANDIDATE_RUN --output cmp.json --explain",
                "sr-bench compare RUN    # its routers vs its strongest single model"),
    "comparison-options": ("sr-bench comparison-options", "sr-bench comparison-options BASE_RUN"),
    "dashboard": ("sr-bench dashboard", "sr-bench dashboard --port 8091"),
    "dataset": ("sr-bench dataset prepare --benchmark mmlu-pro --profile quick > mmlu.json",),
    "dataset combine": ("sr-bench dataset combine mmlu.json gpqa.json > quick.json",),
    "dataset export": ("sr-bench dataset export ds-97ec --upstream up-store",),
    "dataset import": ("sr-bench dataset import up-store/datasets/UPSTREAM_DATASET_ID",),
    "dataset exclusions": ("sr-bench dataset exclusions --run RUN --output seen.json",),
    "dataset list": ("sr-bench dataset list",),
    "dataset prepare": ("sr-bench dataset prepare --benchmark mmlu-pro --profile quick > mmlu.json",
                        "sr-bench dataset prepare --benchmark arc-agi-2 --profile smoke \\",
                        "  --source mirror --output arc.json    # also writes arc.jsonl"),
    "dataset show": ("sr-bench dataset show arc.json", "sr-bench dataset show ds-97ec --cases --page 2"),
    "demo": ("sr-bench demo", "sr-bench demo --dir ./demo --json > demo.json"),
    "env": ("sr-bench env set MY_KEY",),
    "experiment": ("sr-bench experiment create router-v2",),
    "experiment attach": ("sr-bench experiment attach EXP_ID RUN --role candidate",),
    "experiment create": ("sr-bench experiment create router-v2",),
    "experiment delete": ("sr-bench experiment delete EXP_ID",),
    "experiment list": ("sr-bench experiment list",),
    "experiment show": ("sr-bench experiment show EXP_ID --runs",),
    "export": ("sr-bench export DEV_RUN --output training-matrix.json",),
    "options": ("sr-bench options set arc-agi-2 attempts=2", "sr-bench options show"),
    "plan": ("sr-bench plan --manifest candidate.yaml --output frozen.json",),
    "preview": ("sr-bench preview --manifest preview.yaml",),
    "pull": ("sr-bench pull RUN --remote s3://team-bucket/sr-bench",),
    "push": ("sr-bench push RUN --remote s3://team-bucket/sr-bench",),
    "reconcile-usage": ("sr-bench reconcile-usage RUN", "sr-bench reconcile-usage RUN --router mom=litellm"),
    "recover": ("sr-bench recover RUN --plan recovery.json --idempotency-key recovery-1",),
    "recover-plan": ("sr-bench recover-plan RUN --mode undispatched --output recovery.json",),
    "regrade": ("sr-bench regrade RUN --output regrade.json",),
    "replay": ("sr-bench replay --baseline BASE_RUN --preview PREVIEW_RUN",),
    "robustness": ("sr-bench robustness --manifest candidate.yaml",
                   "sr-bench robustness --manifest candidate.yaml --perturbations typo,preamble"),
    "replay-options": ("sr-bench replay-options", "sr-bench replay-options BASE_RUN"),
    "report": ("sr-bench report run-5f3a", "sr-bench report run-5f3a --output report.json --explain"),
    "reprice": ("sr-bench reprice RUN --prices prices.json --reason 'new list prices'",),
    "run": ("sr-bench run --manifest frozen.json",
            "sr-bench run --manifest frozen.json --detach --idempotency-key loop-1"),
    "runs": ("sr-bench runs", "sr-bench runs --json | jq -r '.runs[0].id'"),
    "serve": ("sr-bench serve --store ./store --port 8090",),
    "setup": ("sr-bench setup", "sr-bench setup --benchmark livecodebench --build-sandbox --install"),
    "show": ("sr-bench show run-5f3a", "sr-bench show run-5f3a --calls --limit 50",
             "sr-bench show run-5f3a --events --json"),
    "stop": ("sr-bench stop",),
    "store": ("sr-bench store verify", "sr-bench store gc --apply"),
    "store gc": ("sr-bench store gc --list", "sr-bench store gc --apply"),
    "store verify": ("sr-bench store verify", "sr-bench store verify --repair"),
    "target": ("sr-bench target register --file targets.json",),
    "target list": ("sr-bench target list",),
    "target register": ("sr-bench target register --file targets.json",),
}


def add_examples(cmd: click.Command, path: str = "") -> None:
    """Append `EXAMPLES[path]` to the help of `cmd` and of every subcommand whose help has no Example."""
    lines = EXAMPLES.get(path)
    if lines and "Example" not in (cmd.help or ""):
        cmd.help = inspect.cleandoc(cmd.help or "") + "\n\n\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            add_examples(sub, f"{path} {name}".strip())
