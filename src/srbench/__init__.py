"""sr-bench: evaluate an LLM router (MoM) against single models on the same frozen questions."""

VERSION = "sr-bench-1.0"
DEFAULT_SEED = 20260918
# a run's end: nothing more happens (`stopped_early`: its plan's stopping rule settled the claim)
TERMINAL_STATUSES = ("completed", "failed", "cancelled", "interrupted", "stopped_early")

__all__ = ["VERSION", "DEFAULT_SEED", "TERMINAL_STATUSES"]
