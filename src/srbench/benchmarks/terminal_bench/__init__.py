"""Terminal-Bench 2.1: task directories (tasks.py, source.py), the pinned agent loop and verifier
(agent.py, verifier.py), the task environment (environment.py) and the adapter (adapter.py)."""

from srbench.benchmarks.terminal_bench.adapter import TerminalBench21

__all__ = ["TerminalBench21"]
