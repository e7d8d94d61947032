"""Pydantic schemas shared by every area: cases and datasets, targets, plans, calls, grades.

This package imports nothing from sr-bench but itself, so any layer may depend on it.
"""
