"""``archive.toml``: the shipped example is valid, and every mistake is one line naming
the file, the key and the problem (``stud-table archive`` exits 2 with it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from table_controller.archive.config import load_archive_config, parse_archive_config
from table_controller.table.config_file import ConfigError
from table_controller.testing.broker import MosquittoBroker, RecordingSubscriber

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "deploy" / "archive.example.toml"


def test_the_shipped_example_is_valid() -> None:
    cfg = load_archive_config(EXAMPLE)
    assert cfg.database.path == Path("/var/lib/stud-table/archive.sqlite")
    assert (cfg.secure, cfg.tables, cfg.share_group) == (False, [], None)
    assert str(cfg.url()) == "sqlite+pysqlite:////var/lib/stud-table/archive.sqlite"


def test_the_example_with_postgresql(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace('path = "/var/lib/stud-table/archive.sqlite"', "")
    text = text.replace('# dsn = "postgresql://', 'dsn = "postgresql://')
    (tmp_path / "a.toml").write_text(text)
    cfg = load_archive_config(tmp_path / "a.toml")
    assert cfg.url().drivername == "postgresql+psycopg"


def test_relative_sqlite_path_is_beside_the_config(tmp_path: Path) -> None:
    cfg = parse_archive_config({"database": {"path": "x/a.sqlite"}}, tmp_path / "a.toml")
    assert cfg.database.path == tmp_path / "x" / "a.sqlite"
    default = parse_archive_config({}, tmp_path / "a.toml")
    assert default.database.path == tmp_path / "archive.sqlite"


@pytest.mark.parametrize(("data", "message"), [
    ({"database": {"path": "a", "dsn": "postgresql://h/d"}}, "database: give exactly one"),
    ({"database": {"dsn": "mysql://h/d"}}, "database: dsn must be a postgresql:// URL"),
    ({"database": {"dsn": "::not a url::"}}, "database: dsn is not a database URL"),
    ({"instance": "a/b"}, "instance: bad instance 'a/b'"),
    ({"share_group": "#"}, "share_group: bad share group"),
    ({"tables": ["t1", "t1"]}, "tables: a table is listed twice"),
    ({"tables": ["_archive"]}, "tables: _archive is the archive's own topic level"),
    ({"queue": 70000}, "queue: Input should be less than or equal to 65535"),
    ({"colour": "red"}, "colour: unknown key"),
])
def test_mistakes_are_one_line(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_archive_config(data, "archive.toml")
    assert str(caught.value).startswith(f"archive.toml: {message}")
    assert "\n" not in str(caught.value)


def test_a_dsn_password_is_never_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_archive_config({"database": {"dsn": "mysql://u:hunter2@h/d"}}, "a.toml")
    assert "hunter2" not in str(caught.value)


def test_command_exits_2_with_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "archive.toml"
    bad.write_text('instance = "no spaces allowed"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "table_controller", "archive", "--config",
                             str(bad)], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert result.returncode == 2
    assert result.stderr.startswith(f"stud-table archive: {bad}: instance: bad instance")
    assert result.stdout == ""


def test_a_newer_schema_stops_the_command_with_exit_3(tmp_path: Path,
                                                      mosquitto: MosquittoBroker) -> None:
    """The database holds a schema newer than the program: the service does not write
    into it; it says why (stderr, and the retained status ``failed`` with the reason)
    and exits 3 (a person must look: not restarted blindly)."""
    import sqlalchemy as sa

    from table_controller.archive.store import ArchiveStore, sqlite_url

    store = ArchiveStore(sqlite_url(str(tmp_path / "archive.sqlite")))
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE schema_version SET version = 7"))
    store.close()
    cfg = tmp_path / "archive.toml"
    cfg.write_text(f'[broker]\nhost = "127.0.0.1"\nport = {mosquitto.port}\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "table_controller", "archive", "--config",
                             str(cfg)], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert result.returncode == 3, result.stderr
    assert "schema is version 7, newer than this program's 1" in result.stderr
    sub = RecordingSubscriber(mosquitto.port, ["stud/v1/_archive/+/status"])
    try:
        status = sub.wait_topic("stud/v1/_archive/archive-1/status").json()
    finally:
        sub.close()
    assert status["status"] == "failed"
    assert "newer than this program's 1" in status["reason"]


def test_a_missing_database_directory_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "archive.toml"
    cfg.write_text('[database]\npath = "nowhere/archive.sqlite"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "table_controller", "archive", "--config",
                             str(cfg)], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert result.returncode == 2
    assert result.stderr == (f"stud-table archive: {cfg}: database.path: directory"
                             f" {tmp_path / 'nowhere'} does not exist\n")
