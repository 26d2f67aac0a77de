"""The broadcast backlog holds hole cards: never world-readable, never a surprise
directory (issue 24, item 5), and the service's errors carry its name (item 7)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from table_controller.broadcast.command import run_broadcast
from table_controller.broadcast.store import Store
from table_controller.testing.broadcast_rig import write_config


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("open_umask")
def test_a_new_backlog_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "backlog.sqlite"
    store = Store(path)
    store.add("secure", "t1", "state", {"seq": 1, "ts": 1.0, "hand": 1})
    store.close()
    assert path.stat().st_mode & 0o777 == 0o600
    for extra in tmp_path.glob("backlog.sqlite-*"):  # SQLite's -wal/-shm, if left
        assert extra.stat().st_mode & 0o007 == 0, extra


def test_an_existing_world_readable_backlog_loses_the_world_bits(tmp_path: Path) -> None:
    path = tmp_path / "backlog.sqlite"
    Store(path).close()
    path.chmod(0o644)
    Store(path).close()
    assert path.stat().st_mode & 0o777 == 0o640  # the group may stay (0640 to the service)


def test_a_missing_directory_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Store(tmp_path / "nowhere" / "x.sqlite")
    assert not (tmp_path / "nowhere").exists()


def test_the_command_says_so_in_one_line_with_its_name(tmp_path: Path) -> None:
    config = write_config(tmp_path, 1)
    config.write_text(config.read_text().replace('"bc/state.sqlite"', '"nowhere/x.sqlite"'))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run_broadcast(argparse.Namespace(hash_password=False, config=config))
    assert code == 2
    assert err.getvalue() == (
        f"stud-table broadcast: {config}: state_file: cannot open"
        f" {tmp_path / 'nowhere' / 'x.sqlite'}: the directory {tmp_path / 'nowhere'} does"
        " not exist\n")
    assert not (tmp_path / "nowhere").exists()
