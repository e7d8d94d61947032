"""Datasets on the service: the store's dataset registry, preparation jobs, and the views upstream's
Dashboard reads."""
