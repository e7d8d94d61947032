"""Dataset stages: prepare source files into a frozen dataset, combine, load; exclusion snapshots; source
labels."""
