"""sr-bench: evaluate an LLM router (MoM) against single models on the same frozen questions."""

VERSION = "sr-bench-1.0"
DEFAULT_SEED = 20260918

__all__ = ["VERSION", "DEFAULT_SEED"]
