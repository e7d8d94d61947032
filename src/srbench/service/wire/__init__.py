"""Upstream's wire format (vLLM Semantic Router's sr-bench 1.0 API), translated at the edge: upstream
manifest fields in, projections of sr-bench's answers out."""
