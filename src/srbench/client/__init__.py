"""The client side: what the CLI and the Dashboard import to reach the service (its API client, and the
real service embedded in-process for `demo` and tests). Arrows: cli/dashboard → client → service."""
