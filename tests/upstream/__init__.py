"""Issue 39: conformance with the released upstream package (vllm-sr 0.4.0), unchanged."""
