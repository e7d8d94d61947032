"""τ³ (tau2-bench text domains): native tasks, environments, the conversation loop and the reward."""
