"""Memoised pure stages: rule keys, an action cache and an engine that rebuilds only what is stale."""

from srbench.rules.engine import (
    ActionCache,
    BuildResult,
    CacheEntry,
    Engine,
    MemoryActionCache,
    Rule,
    RuleInputs,
    RuleParams,
    Volatile,
    explain,
    rule_key,
)

__all__ = ["ActionCache", "BuildResult", "CacheEntry", "Engine", "MemoryActionCache", "Rule", "RuleInputs", "RuleParams", "Volatile", "explain", "rule_key"]
