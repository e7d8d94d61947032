"""Targets: OpenAI-compatible transport, metering of the four token buckets, pricing."""
