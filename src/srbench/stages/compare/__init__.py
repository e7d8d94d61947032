"""Comparison of runs: paired quality, cost and latency, the claims each may make, and "does routing pay?"."""
