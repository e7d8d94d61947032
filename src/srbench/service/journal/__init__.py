"""The journal: the store's only mutable state (SQLite, WAL), its schema and numbered migrations, and the
typed reads and writes over it. Only the service writes it, from one thread."""
