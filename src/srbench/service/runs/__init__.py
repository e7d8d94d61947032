"""A run's lifecycle in the service: submit, execute, grade while dispatching, stop early, end, recover,
replay, correct, and the report rows built as cells finish."""
