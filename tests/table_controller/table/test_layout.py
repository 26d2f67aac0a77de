"""Layout files: the shipped layouts load, lookups work, every error names file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from table_controller.domain.zones import BOARD, BURN, MUCK, Zone
from table_controller.table.config_file import ConfigError
from table_controller.table.layout import MAX_PORT, TableLayout, load_layout

ROOT = Path(__file__).resolve().parents[3]
LAYOUTS = ROOT / "hardware" / "layouts"

# A valid 2-seat layout; the error tests each break one thing in it.
VALID = """\
name = "test table"
seats = 2

[[readers]]
id = 1
device = "/dev/ttyUSB0"
[readers.antennas]
0 = "seat1.down"
1 = "seat1.up"
2 = "seat2.down"
3 = "seat2.up"

[[readers]]
id = 10
device = "/dev/ttyUSB1"
[readers.antennas]
0 = "burn"
1 = "muck"
2 = "board"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "layout.toml"
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str) -> ConfigError:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_layout(path)
    message = str(caught.value)
    assert "\n" not in message, "a config error is one line"
    assert message.startswith(f"{path}: "), "a config error names the file first"
    return caught.value


# ---------------------------------------------------------------- shipped files


@pytest.mark.parametrize("seats", range(2, 9))
def test_shipped_layout_for_each_table_size(seats: int) -> None:
    layout = load_layout(LAYOUTS / f"table-{seats}.toml")
    assert layout.seats == seats
    for seat in range(1, seats + 1):
        assert layout.antennas_of(Zone.down(seat)), f"seat{seat}.down is covered"
        assert layout.antennas_of(Zone.up(seat)), f"seat{seat}.up is covered"
    for zone in (BURN, MUCK, BOARD):
        assert layout.antennas_of(zone)
    # One reader per two seats plus the dealer's.
    assert len(layout.readers) == (seats + 1) // 2 + 1


def test_eight_seat_layout_split() -> None:
    layout = load_layout(LAYOUTS / "table-8.toml")
    assert [reader.id for reader in layout.readers] == [1, 2, 3, 4, 10]
    assert layout.zones_of_reader(3) == (
        Zone.down(5),
        Zone.up(5),
        Zone.down(6),
        Zone.up(6),
    )
    assert layout.zones_of_reader(10) == (BURN, MUCK, BOARD)
    assert layout.zone_for(4, 3) == Zone.up(8)
    assert layout.zone_for(10, 1) == MUCK
    assert layout.zone_for(4, 4) is None, "unmapped port"
    assert layout.zone_for(99, 0) is None, "unknown reader"
    assert layout.zones_of_reader(99) == ()
    reader = layout.reader(1)
    assert reader is not None
    assert reader.device == "/dev/stud-table/reader-1"  # the udev name (deploy/udev)
    assert reader.antennas[1] == Zone.up(1)
    assert len(layout.antenna_map) == 4 * 4 + 3
    assert layout.zones[:2] == (Zone.down(1), Zone.up(1))
    assert layout.zones[-3:] == (BURN, MUCK, BOARD)


def test_two_antennas_may_cover_one_zone() -> None:
    layout = load_layout(LAYOUTS / "table-8-long-rows.toml")
    assert layout.antennas_of(Zone.up(3)) == ((2, 1), (2, 2))
    assert layout.zone_for(2, 1) == layout.zone_for(2, 2) == Zone.up(3)
    assert layout.zones_of_reader(2) == (Zone.down(3), Zone.up(3), Zone.down(4), Zone.up(4))


def test_antennas_of_one_zone_may_sit_on_different_readers(tmp_path: Path) -> None:
    text = VALID.replace('2 = "board"', '2 = "board"\n3 = "seat2.up"')
    layout = load_layout(_write(tmp_path, text))
    assert layout.antennas_of(Zone.up(2)) == ((1, 3), (10, 3))


def test_inline_antenna_table_and_model_validate(tmp_path: Path) -> None:
    text = VALID.replace(
        '[readers.antennas]\n0 = "burn"\n1 = "muck"\n2 = "board"',
        'antennas = { 0 = "burn", 1 = "muck", 2 = "board" }',
    )
    layout = load_layout(_write(tmp_path, text))
    assert layout.zone_for(10, 2) == BOARD
    # The model validates the same way when built in code.
    rebuilt = TableLayout.model_validate(layout.model_dump())
    assert rebuilt.antenna_map == layout.antenna_map


# ---------------------------------------------------------------------- errors


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: file not found$"):
        load_layout(tmp_path / "nope.toml")


def test_not_toml(tmp_path: Path) -> None:
    err = _error(tmp_path, "seats = [\n")
    assert "not valid TOML" in err.problem


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "layout.toml"
    path.write_bytes(b'name = "caf\xe9"\nseats = 2\n')
    with pytest.raises(ConfigError, match=r"layout\.toml: not UTF-8 text \(byte 11\)$"):
        load_layout(path)


def test_a_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory, not a file"):
        load_layout(tmp_path)


def test_same_port_twice_literally_is_a_toml_error(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace('3 = "seat2.up"', '3 = "seat2.up"\n1 = "seat2.up"'))
    assert "not valid TOML" in err.problem
    assert "line 12" in err.problem, "tomllib names the line of the duplicate key"


def test_same_port_twice_under_two_spellings(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace('3 = "seat2.up"', '03 = "seat2.up"\n3 = "seat1.up"'))
    assert err.key in {"readers[0].antennas.03", "readers[0].antennas.3"}
    assert "antenna port 3 is mapped twice" in err.problem


def test_unknown_zone(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace('"muck"', '"trash"'))
    assert err.key == "readers[1].antennas.1"
    assert "unknown zone 'trash'" in err.problem


@pytest.mark.parametrize("seat", [0, 9, 12])
def test_seat_outside_one_to_eight(tmp_path: Path, seat: int) -> None:
    err = _error(tmp_path, VALID.replace('"seat2.up"', f'"seat{seat}.up"'))
    assert err.key == "readers[0].antennas.3"
    assert f"seat {seat} is outside 1..8" in err.problem


def test_seat_beyond_table_size(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace('2 = "board"', '2 = "board"\n3 = "seat5.down"'))
    assert err.key == "readers[1].antennas.3"
    assert err.problem == "zone 'seat5.down' is beyond this table's 2 seats"


@pytest.mark.parametrize("port", ["16", "99"])
def test_port_out_of_range(tmp_path: Path, port: str) -> None:
    err = _error(tmp_path, VALID.replace('2 = "board"', f'{port} = "board"'))
    assert err.key == f"readers[1].antennas.{port}"
    assert err.problem == f"antenna port {port} is outside 0..{MAX_PORT}"


def test_port_not_a_number(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace('2 = "board"', 'x = "board"'))
    assert err.key == "readers[1].antennas.x"
    assert "antenna port must be a number" in err.problem


def test_same_reader_id_twice(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace("id = 10", "id = 1"))
    assert err.key == "readers[1].id"
    assert err.problem == "reader id 1 is defined twice"


def test_same_device_twice(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace("/dev/ttyUSB1", "/dev/ttyUSB0"))
    assert err.key == "readers[1].device"
    assert "also used by reader 1" in err.problem


@pytest.mark.parametrize("reader_id", ["65536", "-1", '"1"', "1.0"])
def test_reader_id_not_u16(tmp_path: Path, reader_id: str) -> None:
    err = _error(tmp_path, VALID.replace("id = 10", f"id = {reader_id}"))
    assert err.key == "readers[1].id"


@pytest.mark.parametrize("zone", ["seat2.down", "seat2.up"])
def test_seat_missing_a_zone(tmp_path: Path, zone: str) -> None:
    text = "\n".join(line for line in VALID.splitlines() if f'"{zone}"' not in line)
    err = _error(tmp_path, text)
    assert err.key == "readers"
    assert err.problem == f"no antenna covers '{zone}' (seat 2 of 2)"


@pytest.mark.parametrize("zone", ["burn", "muck", "board"])
def test_missing_dealer_zone(tmp_path: Path, zone: str) -> None:
    text = "\n".join(line for line in VALID.splitlines() if f'"{zone}"' not in line)
    err = _error(tmp_path, text)
    assert err.key == "readers"
    assert err.problem == f"no antenna covers dealer zone '{zone}'"


@pytest.mark.parametrize(("seats", "key"), [("1", "seats"), ("9", "seats"), ('"8"', "seats")])
def test_seat_count_out_of_range(tmp_path: Path, seats: str, key: str) -> None:
    err = _error(tmp_path, VALID.replace("seats = 2", f"seats = {seats}"))
    assert err.key == key


def test_missing_seats(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace("seats = 2\n", ""))
    assert err.key == "seats"
    assert err.problem == "required key is missing"


def test_unknown_key(tmp_path: Path) -> None:
    err = _error(tmp_path, VALID.replace("id = 10", "id = 10\nbaud = 115200"))
    assert err.key == "readers[1].baud"
    assert err.problem == "unknown key"


def test_reader_without_antennas(tmp_path: Path) -> None:
    text = VALID + '\n[[readers]]\nid = 11\ndevice = "/dev/ttyUSB2"\nantennas = {}\n'
    err = _error(tmp_path, text)
    assert err.key == "readers[2].antennas"


def test_no_readers(tmp_path: Path) -> None:
    err = _error(tmp_path, 'name = "x"\nseats = 2\nreaders = []\n')
    assert err.key == "readers"
