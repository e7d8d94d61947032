"""Team workflows over one shared object store: shared dataset names, run push and pull."""
