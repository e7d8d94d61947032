"""The route handlers, one module per concern (core: targets, plans, runs; datasets; derived results;
evidence pages; exclusions; experiments; team). Handlers parse, call the domain, answer; no SQL."""
