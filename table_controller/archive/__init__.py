"""The hand archive (issue 14): every finished hand, alert and notice of many tables,
kept in SQLite (default) or PostgreSQL (a DSN), fed by ``stud-table archive`` and
queried by the floor dashboard (:class:`~table_controller.archive.store.ArchiveStore`).
See docs/archive.md."""
