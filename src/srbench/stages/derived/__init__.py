"""Rules over finished runs: compare/regrade/export, replay along previewed routes, reprice, reconcile usage."""
