"""Fixtures of the archive tests: one real PostgreSQL server per test session, a store
on SQLite or on PostgreSQL (the same tests run on both), the test feed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import PostgresServer

from table_controller.archive.store import ArchiveStore, database_url, sqlite_url


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server started for the session (stop/start it for an outage)."""
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database: an SQLite file, or a new database on the server."""
    if request.param == "sqlite":
        return str(sqlite_url(str(tmp_path / "archive.sqlite")))
    server: PostgresServer = request.getfixturevalue("postgres")
    return database_url(server.create_database()).render_as_string(hide_password=False)


@pytest.fixture
def store(db_url: str) -> Iterator[ArchiveStore]:
    """A public archive store on ``db_url``."""
    opened = ArchiveStore(db_url)
    try:
        yield opened
    finally:
        opened.close()
