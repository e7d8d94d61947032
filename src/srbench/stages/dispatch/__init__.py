"""Dispatch, the one impure stage: calls journaled before and after, single calls and conversations."""
