"""floor.toml: the example file loads; every problem is one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from table_controller.floor.config import load_floor_config, parse_floor_config
from table_controller.table.config_file import ConfigError
from table_controller.web.passwords import hash_password

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "floor.example.toml"
HASH = hash_password("floor-secret-1", salt=b"0123456789abcdef")


def test_the_example_loads_with_a_real_hash(tmp_path: Path) -> None:
    """deploy/floor.example.toml is valid once its placeholder hash is replaced."""
    text = EXAMPLE.read_text()
    placeholder = "scrypt$16384$8$1$<salt from the command>$<hash from the command>"
    assert placeholder in text
    path = tmp_path / "floor.toml"
    path.write_text(text.replace(placeholder, HASH))
    cfg = load_floor_config(path)
    assert cfg.http.host == "127.0.0.1"
    assert cfg.broker.username == "stud-floor"
    assert [s.name for s in cfg.supervisors] == ["Maria Lopez"]
    assert cfg.archive is None


@pytest.mark.parametrize(("data", "problem"), [
    ({"supervisors": []}, "supervisors"),
    ({"supervisors": [{"name": "A", "password_hash": "hunter2"}]}, "never the password"),
    ({"supervisors": [{"name": "A", "password_hash": HASH},
                      {"name": "A", "password_hash": HASH}]}, "listed twice"),
    ({"supervisors": [{"name": "", "password_hash": HASH}]}, "supervisor name"),
    ({"supervisors": [{"name": "A", "password_hash": HASH}], "colour": "red"}, "colour"),
    ({"supervisors": [{"name": "A", "password_hash": HASH}],
      "archive": {"path": "a.sqlite", "dsn": "postgresql://x@y/z"}}, "exactly one"),
])
def test_problems_are_one_line(data: dict[str, object], problem: str) -> None:
    """A bad config names the file, the key and the problem."""
    with pytest.raises(ConfigError) as err:
        parse_floor_config(data, "floor.toml")
    assert problem in str(err.value)
    assert "\n" not in str(err.value)


def test_archive_path_is_relative_to_the_config(tmp_path: Path) -> None:
    """``[archive] path`` resolves against the config file's directory."""
    cfg = parse_floor_config({"supervisors": [{"name": "A", "password_hash": HASH}],
                              "archive": {"path": "db/archive.sqlite"}},
                             tmp_path / "floor.toml")
    assert cfg.archive is not None
    assert cfg.archive.path == tmp_path / "db" / "archive.sqlite"


def test_stakes_per_table_for_the_phh_export() -> None:
    """``[stakes.<table>]`` and ``[stakes."*"]``; stakes no fixed-limit game has are one
    line naming the key."""
    sup = [{"name": "Maria Lopez", "password_hash": HASH}]
    cfg = parse_floor_config({"supervisors": sup, "stakes": {
        "t1": {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "*": {"bring_in": 1, "small_bet": 2, "big_bet": 4}}}, "floor.toml")
    t1, other = cfg.stakes_of("t1"), cfg.stakes_of("t9")
    assert t1 is not None
    assert (t1.ante, t1.bring_in, t1.small_bet, t1.big_bet) == (1, 2, 5, 10)
    assert other is not None
    assert other.small_bet == 2
    assert parse_floor_config({"supervisors": sup}, "floor.toml").stakes_of("t1") is None
    with pytest.raises(ConfigError, match=r"stakes\.t1"):
        parse_floor_config({"supervisors": sup, "stakes": {
            "t1": {"bring_in": 20, "small_bet": 5, "big_bet": 10}}}, "floor.toml")


def test_a_pit_is_the_tables_listed_in_order() -> None:
    """``tables``: the pit this floor instance follows (docs/scaling.md "How to scale");
    unset, every table (``+``), as before."""
    sup = [{"name": "A", "password_hash": HASH}]
    assert parse_floor_config({"supervisors": sup}, "floor.toml").pit == ()
    cfg = parse_floor_config({"supervisors": sup, "tables": ["t02", "t01", "pit-3.a_9"]},
                             "floor.toml")
    assert cfg.pit == ("t02", "t01", "pit-3.a_9")


@pytest.mark.parametrize(("tables", "problem"), [
    ([], "floor.toml: tables: an empty pit follows nothing"),
    (["t01", "t02", "t01"], "floor.toml: tables: t01 listed twice"),
    (["t01", "a/b"], "floor.toml: tables[1]: bad table id 'a/b'"),
    (["+"], "floor.toml: tables[0]: bad table id '+'"),
    (["t 1"], "no '/', '+', '#' or spaces"),
    (["x" * 65], "1-64 characters"),
    (["_archive"], "_archive is the archive's own topic level"),
    ("t01", "floor.toml: tables: Input should be a valid list"),
])
def test_a_bad_pit_is_one_clear_line(tables: object, problem: str) -> None:
    """An empty list, a table twice, an id that is no single topic level (it would
    subscribe outside its table's subtree) or not a list: refused, naming the key."""
    with pytest.raises(ConfigError) as err:
        parse_floor_config({"supervisors": [{"name": "A", "password_hash": HASH}],
                            "tables": tables}, "floor.toml")
    assert problem in str(err.value)
    assert "\n" not in str(err.value)
