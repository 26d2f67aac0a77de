"""The equity door: ``stud-table equity SPEC --json`` (docs/conformance.md "Second door").

Real subprocesses, as an outside check would run it: exit 0 with one JSON document,
or exit 2 with one line on stderr naming the problem, never a traceback.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

EXAMPLE = {"game": "stud", "seats": {"1": ["As", "Kd", "Qh", "7c"], "4": ["9h", "9d", "2s", "Jc"]},
           "dead": ["7d", "3c"]}


def _run(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "table_controller", "equity", *args],
        input=stdin, capture_output=True, check=False, timeout=120,
    )


def _spec(tmp_path: Path, spec: Any) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(spec if isinstance(spec, str) else json.dumps(spec))
    return path


def test_example_of_the_contract(tmp_path: Path) -> None:
    done = _run([str(_spec(tmp_path, EXAMPLE)), "--json"])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc["equity"]) == {"1", "4"}
    assert math.isclose(sum(doc["equity"].values()), 1.0, abs_tol=1e-9)
    assert doc["exact"] is True
    assert doc["runouts"] == math.comb(42, 3) * math.comb(39, 3)  # 4th street heads-up
    assert doc["equity"]["4"] > doc["equity"]["1"]
    assert doc["hands"] == {"1": "Ace-king high", "4": "Pair of nines"}


def test_spec_from_stdin_and_every_game() -> None:
    for game in ("stud", "razz", "stud8"):
        spec = {"game": game, "seats": {"2": ["Ah", "2d", "4c", "6s", "Kh"],
                                        "3": ["9h", "9d", "2s", "Jc", "3h"],
                                        "6": ["5c", "5s", "Td", "8c", "7h"]}}
        done = _run(["-", "--json"], json.dumps(spec).encode())
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["game"] == game
        assert math.isclose(sum(doc["equity"].values()), 1.0, abs_tol=1e-9)
        for seat in doc["equity"]:
            assert math.isclose(doc["win"][seat] + doc["tie"][seat], doc["equity"][seat])


def test_monte_carlo_spot_reports_its_seed_and_error() -> None:
    spec = {"seats": {"1": ["As", "Kd", "Qh"], "2": ["9h", "9d", "2s"], "3": ["7c", "7s", "8d"]},
            "samples": 5000, "seed": 11}
    first = _run(["-", "--json"], json.dumps(spec).encode())
    again = _run(["-", "--json"], json.dumps(spec).encode())
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["exact"] is False
    assert doc["runouts"] == 5000
    assert doc["seed"] == 11
    assert all(0 < se < 0.02 for se in doc["stderr"].values())
    assert first.stdout == again.stdout  # same seed, same numbers


def test_readable_form_without_json(tmp_path: Path) -> None:
    spec = {"seats": {"1": ["As", "Kd", "Qh", "7c", "2d"], "4": ["9h", "9d", "2s", "Jc", "3h"]}}
    done = _run([str(_spec(tmp_path, spec))])
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "exact over" in text
    assert "seat  1" in text
    assert "Pair of nines" in text
    assert "outs for seat 1 against seat 4" in text


def test_community_card_is_said(tmp_path: Path) -> None:
    cards = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    spec = {"seats": {str(seat): cards[(seat - 1) * 6: seat * 6] for seat in range(1, 9)}}
    done = _run([str(_spec(tmp_path, spec)), "--json"])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["community"] is True
    assert doc["runouts"] == 4


BAD = [
    ("card twice on a seat", {"seats": {"1": ["As", "As", "Kd"], "2": ["2c", "3c", "4c"]}},
     "As appears twice on seat 1"),
    ("card on two seats", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["As", "3c", "4c"]}},
     "As is on seat 1 and on seat 2"),
    ("card on a seat and dead", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]},
                                 "dead": ["Kd"]}, "Kd is on seat 1 and on dead"),
    ("bad card code", {"seats": {"1": ["As", "Kx", "Qd"], "2": ["2c", "3c", "4c"]}},
     "seat 1: bad card code 'Kx'"),
    ("one seat", {"seats": {"1": ["As", "Kd", "Qd"]}}, "at least two live seats"),
    ("eight cards", {"seats": {"1": ["As", "Kd", "Qd", "Jd", "Td", "9d", "8d", "7d"],
                               "2": ["2c", "3c", "4c", "5c", "6c", "7c", "8c"]}},
     "seat 1 has 8 cards"),
    ("two cards", {"seats": {"1": ["As", "Kd"], "2": ["2c", "3c", "4c"]}}, "seat 1 has 2 cards"),
    ("3 and 6 cards",
     {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c", "5c", "6c", "7c"]}},
     "seats hold 3 and 6 cards"),
    ("unknown game", {"game": "holdem", "seats": {}}, "unknown game 'holdem'"),
    ("samples zero", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]}, "samples": 0},
     "samples must be an integer"),
    ("samples text", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]},
                      "samples": "many"}, "samples must be an integer"),
    ("samples bool", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]},
                      "samples": True}, "samples must be an integer"),
    ("seed negative", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]}, "seed": -1},
     "seed must be an integer"),
    ("seed float", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]}, "seed": 1.5},
     "seed must be an integer"),
    ("not an object", [1, 2, 3], "spec must be a JSON object, got list"),
    ("unknown key", {"seats": {}, "board": []}, "unknown key 'board'"),
    ("seats not an object", {"seats": ["As"]}, "seats: expected an object"),
    ("seat number", {"seats": {"9": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]}},
     "seat '9' is not a seat number"),
    ("cards not a list", {"seats": {"1": "AsKdQd", "2": ["2c", "3c", "4c"]}},
     "seat 1: expected a list of card codes"),
    ("dead not a list", {"seats": {"1": ["As", "Kd", "Qd"], "2": ["2c", "3c", "4c"]},
                         "dead": "7d"}, "dead: expected a list"),
    ("not JSON", "{\"seats\": ", "spec is not valid JSON"),
    ("deeply nested", "[" * 50_000, "nested too deeply"),
    ("huge", "{\"seats\": {}, \"dead\": [" + "\"7d\"," * 40_000 + "]}", "larger than 65536 bytes"),
    ("huge integer", "{\"seats\": {}, \"seed\": " + "9" * 5000 + "}", "spec is not valid JSON"),
]


@pytest.fixture(scope="module")
def bad_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    """Every bad spec run through the real command, four processes at a time (each
    start imports the whole CLI: run one after the other they took most of the time)."""
    folder = tmp_path_factory.mktemp("bad-specs")
    paths = {}
    for name, spec, _ in BAD:
        paths[name] = folder / f"{len(paths)}.json"
        paths[name].write_text(spec if isinstance(spec, str) else json.dumps(spec))
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = pool.map(lambda name: _run([str(paths[name]), "--json"]), paths)
        return dict(zip(paths, runs, strict=True))


@pytest.mark.parametrize(("name", "message"), [(b[0], b[2]) for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_spec_exits_2_with_one_line(
    bad_runs: dict[str, subprocess.CompletedProcess[bytes]], name: str, message: str
) -> None:
    done = bad_runs[name]
    stderr = done.stderr.decode()
    assert done.returncode == 2, (name, stderr)
    assert done.stdout == b""
    assert stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
    assert message in stderr, stderr
    assert stderr.startswith("stud-table equity: ")


def test_bad_spec_on_stdin_and_missing_file(tmp_path: Path) -> None:
    done = _run(["-", "--json"], b"\xff\xfe not text")
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    assert done.stderr.count(b"\n") == 1
    missing = _run([str(tmp_path / "nope.json"), "--json"])
    assert missing.returncode == 2
    assert b"cannot read" in missing.stderr
    assert missing.stderr.count(b"\n") == 1


CARD_CODES = [r + s for r in "23456789TJQKA" for s in "cdhs"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.sampled_from(CARD_CODES) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(
        st.sampled_from(["game", "seats", "dead", "samples", "seed", "1", "2", "9", "x"]),
        inner, max_size=6),
    max_leaves=30,
)


@settings(max_examples=300)
@given(JSON_VALUES)
def test_any_json_is_refused_cleanly_or_accepted(value: Any) -> None:
    """In process, the same code as the door: arbitrary JSON either parses into a spec
    or raises SpecError (one line), never anything else."""
    from table_controller.domain.equity.spec import SpecError, parse_spec

    message = ""
    try:
        parse_spec(json.dumps(value))
    except SpecError as exc:
        message = str(exc)
    assert "\n" not in message
