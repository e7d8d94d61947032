"""The report: one row per planned cell, aggregated per target and benchmark, with its limitations."""
