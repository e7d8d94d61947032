"""A simulated OpenAI-compatible endpoint and MoM router for `sr-bench demo` and the tests.

Deterministic and network-free: answers, token counts and routes are hashes of (model, prompt).
"""

from srbench.simulate.behaviour import (
    Reply,
    RouterRule,
    SimModel,
    answer_key_from_cases,
    load_answer_key,
    messages_key,
    reply_for,
    usage_for,
)
from srbench.simulate.scripted import Scripted, tool_call
from srbench.simulate.server import DEFAULT_MODELS, Fault, SimServer, start_simulator
from srbench.simulate.thread import SimulatorThread

__all__ = [
    "DEFAULT_MODELS", "Fault", "Reply", "RouterRule", "Scripted", "SimModel", "SimServer", "SimulatorThread",
    "answer_key_from_cases", "load_answer_key", "messages_key", "reply_for", "start_simulator", "tool_call",
    "usage_for",
]
