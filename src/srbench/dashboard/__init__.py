"""The Dashboard: a separate process that signs browsers in and shows the service's runs.

It proxies an allowlist of read routes, the model-free comparison and explicit recovery (UI-8) to
the service with the service token, which the browser never sees; restarting it never touches the worker (SVC-4, SVC-7).
Every asset comes from this package: no build step, no network.
"""

from srbench.dashboard.app import make_dashboard

__all__ = ["make_dashboard"]
