"""The command line starts light (issue 25): each door imports what it needs, and the
evaluators' tables are loaded from a checked file instead of built at every start.

No timing here (bench/bench_cli_start.py prints the figures): what a start imports is
read from ``sys.modules`` of a real ``stud-table`` process, and the table cache is
driven directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from table_controller.domain import _hand_tables, table_store
from table_controller.domain.equity import evaluate
from table_controller.records import table_cache
from table_controller.tools import cli

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests" / "scripts" / "clean-hand.jsonl"
HEAVY = ("numpy", "paho", "sqlalchemy", "pydantic", "starlette", "uvicorn",
         "table_controller.domain.equity.evaluate", "table_controller.domain.engine")
"""What ``--help`` must not load: numpy, MQTT, the database, the web stack, the equity
tables' module and the rules engine."""


def _modules_after(arguments: list[str], cache: Path) -> tuple[set[str], str]:
    """The modules a ``stud-table ARGUMENTS`` process had loaded when it exited, and its
    stdout (the process is the real entry point; an atexit hook reports sys.modules)."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules))))\n"
        "from table_controller.tools.cli import main\n"
        f"sys.exit(main({arguments!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "STUD_TABLE_CACHE": str(cache)}, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    line = done.stderr[done.stderr.index("MODULES ") + len("MODULES "):]
    return set(json.loads(line)), done.stdout


def _loaded(modules: set[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_help_imports_no_command(tmp_path: Path) -> None:
    """``stud-table --help`` lists every command without importing numpy, paho, the
    database, the engine or the equity tables."""
    modules, out = _modules_after(["--help"], tmp_path)
    assert [name for name in HEAVY if _loaded(modules, name)] == []
    for name in cli._COMMAND_HELP:
        assert name in out
    assert not (tmp_path / "cache").exists()


def test_replay_json_imports_neither_numpy_nor_mqtt(tmp_path: Path) -> None:
    """The conformance door replays without numpy, paho, pydantic (a valid ``table``
    line is checked by plain code: issue 25) or the equity tables."""
    modules, out = _modules_after(["replay", str(SCRIPT), "--json"], tmp_path)
    unwanted = ("numpy", "paho", "sqlalchemy", "pydantic", "table_controller.domain.equity")
    assert [name for name in unwanted if _loaded(modules, name)] == []
    assert json.loads(out)["hands"][0]["winners"]  # a showdown was valued
    assert list(tmp_path.iterdir()) == []  # one hand by one: no table loaded or built


def test_equity_json_imports_no_engine_or_mqtt(tmp_path: Path) -> None:
    """The equity door loads numpy and its tables, not the engine, MQTT or a database;
    the second start reads the tables the first one kept."""
    spec = tmp_path / "spot.json"
    spec.write_text(json.dumps({"game": "stud8", "seats": {
        "1": ["As", "2d", "3h", "Jc", "Kd"], "2": ["9s", "9d", "4c", "5d", "8h"]}}))
    first = _modules_after(["equity", str(spec), "--json"], tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".bin")
    assert [name.split("-")[0] for name in kept] == ["equity", "hand"]
    modules, out = _modules_after(["equity", str(spec), "--json"], tmp_path)
    unwanted = ("paho", "sqlalchemy", "pydantic", "table_controller.domain.engine")
    assert [name for name in unwanted if _loaded(modules, name)] == []
    assert out == first[1]  # the loaded tables give the document the built ones gave
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".bin") == kept


def test_lazy_help_is_the_full_help() -> None:
    """The help line of every command listed without its module is its parser's own."""
    full = cli.build_parser().format_help()
    assert cli.build_parser(()).format_help() == full
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), pytest.raises(SystemExit):
        cli.main(["--help"])
    assert stdout.getvalue() == full


@pytest.mark.parametrize("command", sorted(cli._COMMAND_HELP))
def test_each_command_parses_alone_as_in_the_full_parser(command: str) -> None:
    """Built alone, a command's own help is the same as in the full parser."""
    def command_help(parser: object) -> str:
        action = next(a for a in parser._actions  # type: ignore[attr-defined]
                      if a.__class__.__name__ == "_SubParsersAction")
        return str(action.choices[command].format_help())

    assert command_help(cli.build_parser({command})) == command_help(cli.build_parser())


def test_unknown_command_is_refused_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown command still gets argparse's message listing every command."""
    with pytest.raises(SystemExit) as stop:
        cli.main(["deal"])
    assert stop.value.code == 2
    message = capsys.readouterr().err
    assert "invalid choice: 'deal'" in message
    assert all(name in message for name in cli._COMMAND_HELP)


class _Counting:
    """A build function that counts its calls."""

    def __init__(self, value: bytes) -> None:
        self.value = value
        self.calls = 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.value


def _obtain(store: table_cache.DiskTableStore, build: _Counting) -> bytes:
    return store.obtain("probe", (__name__,), build, bytes, _checked)


def _checked(data: bytes) -> bytes:
    if not data.startswith(b"probe"):
        raise ValueError("not a probe")
    return data


def test_cache_builds_once_then_loads(tmp_path: Path) -> None:
    """The first process builds and keeps the tables, the next ones load them."""
    build = _Counting(b"probe tables")
    assert _obtain(table_cache.DiskTableStore(tmp_path), build) == b"probe tables"
    assert _obtain(table_cache.DiskTableStore(tmp_path), build) == b"probe tables"
    assert build.calls == 1
    assert [p.suffix for p in tmp_path.iterdir()] == [".bin"]  # no temporary file left


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "payload"])
def test_damaged_cache_file_is_built_again(tmp_path: Path, damage: str) -> None:
    """A file failing its checksum, magic or the loader's own check is rebuilt and
    rewritten, never used."""
    store = table_cache.DiskTableStore(tmp_path)
    build = _Counting(b"probe tables")
    _obtain(store, build)
    path = store.path("probe", (__name__,))
    assert path is not None
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-1] ^= 0x01
    elif damage == "truncate":
        del data[-3:]
    elif damage == "magic":
        data[0] ^= 0x20
    else:  # intact checksum over bytes the loader refuses
        data = bytearray(path.read_bytes().replace(b"probe tables", b"other tables"))
        head = len(table_cache.MAGIC)
        data[head:head + 32] = hashlib.sha256(bytes(data[head + 32:])).digest()
    path.write_bytes(bytes(data))
    assert _obtain(store, build) == b"probe tables"
    assert build.calls == 2
    assert _obtain(store, build) == b"probe tables"  # and the rewritten file loads
    assert build.calls == 2


def test_changed_builder_reads_another_file(tmp_path: Path) -> None:
    """The file name carries a digest of the building modules' source."""
    store = table_cache.DiskTableStore(tmp_path)
    assert store.path("probe", (__name__,)) != store.path("probe", ("json",))
    assert store.path("probe", ("no_such_module_here",)) is None


def test_unwritable_cache_only_costs_the_build(tmp_path: Path) -> None:
    """A cache directory that cannot be made (a file is in the way) builds every time."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = table_cache.DiskTableStore(blocker / "cache")
    build = _Counting(b"probe tables")
    assert _obtain(store, build) == b"probe tables"
    assert _obtain(store, build) == b"probe tables"
    assert build.calls == 2


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """``$STUD_TABLE_CACHE``, else ``$XDG_CACHE_HOME/stud-table``, else ``~/.cache``."""
    monkeypatch.setenv("STUD_TABLE_CACHE", str(tmp_path / "a"))
    assert table_cache.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("STUD_TABLE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert table_cache.cache_dir() == tmp_path / "x" / "stud-table"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert table_cache.cache_dir() == tmp_path / "h" / ".cache" / "stud-table"


def test_hand_tables_round_trip() -> None:
    """What the file keeps of the hand tables is exactly what the rules build."""
    built = _hand_tables.build_tables()
    loaded = _hand_tables.load_tables(_hand_tables.dump_tables(built))
    assert loaded == built
    with pytest.raises(ValueError, match="hand tables"):
        _hand_tables.load_tables(_hand_tables.dump_tables(built)[:-8])


def test_values_one_by_one_are_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the tables are obtained every key and flush mask is valued alone, and
    exactly as the table says; afterwards the table answers."""
    built = _hand_tables.build_tables()
    monkeypatch.setattr(_hand_tables, "_obtained", None)
    monkeypatch.setattr(_hand_tables, "_one_by_one", {})
    wrong = [key for key, value in built.rank_multiset_values.items()
             if _hand_tables.rank_value(key) != value]
    assert wrong == []
    masks = [mask for mask in range(1 << 13) if 5 <= mask.bit_count() <= 7]
    assert [m for m in masks if _hand_tables.flush_rank_value(m) != built.flush_values[m]] == []
    monkeypatch.setattr(_hand_tables, "_obtained", built)
    monkeypatch.setattr(_hand_tables, "_one_by_one", {})
    key = next(iter(built.rank_multiset_values))
    assert _hand_tables.rank_value(key) == built.rank_multiset_values[key]
    assert _hand_tables._one_by_one == {}


def test_straight_tops_are_the_rules() -> None:
    """The import-time straight table equals the rule applied to every mask."""
    by_rule = tuple(_hand_tables._straight_top_of(mask) for mask in range(1 << 13))
    assert by_rule == _hand_tables.STRAIGHT_TOPS


def test_equity_tables_round_trip() -> None:
    """What the file keeps of the equity tables is exactly what the rules build."""
    built = evaluate.build_tables()
    loaded = evaluate.load_tables(evaluate.dump_tables(built))
    for name in built._fields:
        assert np.array_equal(getattr(loaded, name), getattr(built, name)), name
    with pytest.raises(ValueError, match="equity tables"):
        evaluate.load_tables(evaluate.dump_tables(built)[1:])


def test_no_store_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an installed store the domain builds its tables itself (the daemon)."""
    monkeypatch.setattr(table_store, "_store", None)
    assert table_store.obtain("x", (), lambda: 7, lambda v: b"", lambda b: 0) == 7
