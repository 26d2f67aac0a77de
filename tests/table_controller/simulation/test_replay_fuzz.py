"""Fuzzing the replay door (issue 9): whatever the file, ``stud-table replay FILE --json``
exits 0 with one JSON report, or 2 with exactly one ``FILE:LINE: problem`` line on
stderr. Never a traceback, never exit 1, never a hang, never an "internal error".

Inputs: hypothesis-generated scripts (op objects with hostile values, odd line
separators), mutated valid scripts and journals (byte flips, truncation, line
deletion, duplication and shuffles, huge numbers, deep nesting, odd whitespace
and Unicode), tampered journal records, and mutated PHH files for
``phh import``/``phh export``. Thousands of cases run in process through
``main()`` (fast, exact capture; an exception fails the test with its
traceback); a few hundred run through the real CLI in subprocesses whose
timeout is the hang detector. ``--soak`` runs many more (see README).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.records.journal import Journal
from table_controller.records.script import OPS, event_to_op
from table_controller.simulation import deal_random
from table_controller.simulation.errors import ErrorKind, inject
from table_controller.tools.cli import main

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
PHH_DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "phh-wsop-2023-event43"

ONE_LINE_ERROR = re.compile(r"^stud-table replay: (?P<file>.+):(?P<line>\d+): (?P<problem>.+)\n$")
HANG_TIMEOUT = 120.0
"""Seconds before a subprocess counts as hung: generous, CI is a loaded 2-core machine."""

HEAVY = settings()


# ---------------------------------------------------------------- the oracle

def check_outcome(path: Path, data: bytes, code: int, out: str, err: str) -> str:
    """Assert the door's contract for one run; return "ok" or "error" (which it was)."""
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 0:
        assert err == "", err
        report = json.loads(out)
        assert isinstance(report, dict)
        assert isinstance(report["hands"], list)
        for hand in report["hands"]:
            assert {"players", "community", "bring_in", "first_to_act", "winners",
                    "alerts"} <= set(hand)
        return "ok"
    assert out == ""
    match = ONE_LINE_ERROR.match(err)
    assert match is not None, err
    assert match["file"] == str(path)
    assert "internal error" not in err, err
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert 1 <= int(match["line"]) <= max(lines, 1), (match["line"], lines)
    return "error"


def run_main(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), "--json"])
    return code, out.getvalue(), err.getvalue()


def replay_bytes(tmp_dir: Path, data: bytes, name: str = "fuzz.jsonl") -> str:
    """Write ``data``, replay it through main() and check the contract."""
    path = tmp_dir / name
    path.write_bytes(data)
    code, out, err = run_main(path)
    return check_outcome(path, data, code, out, err)


# ------------------------------------------------------------------- corpus

def _generated_scripts() -> list[bytes]:
    """Multi-hand scripts from the simulator's physical deals, some with dealing errors."""
    rng = random.Random(20261201)
    scripts = []
    for _ in range(4):
        lines = ['{"op":"table","seats":8,"ante":1,"bring_in":2,"small_bet":5,"big_bet":10}']
        for _ in range(3):
            seats = sorted(rng.sample(range(1, 9), rng.randint(2, 7)))
            deal = deal_random(seats, rng, fold_chance=0.2)
            events = list(deal.events)
            injection = inject(deal, rng.choice(list(ErrorKind)), rng)
            if injection is not None:
                events = list(injection.events)
            lines += [json.dumps(event_to_op(event), separators=(",", ":")) for event in events]
        scripts.append(("\n".join(lines) + "\n").encode())
    return scripts


def _journal_of(script: bytes, directory: Path) -> bytes:
    path = directory / "journal.jsonl"
    path.unlink(missing_ok=True)
    with Journal.open(path, fsync="never") as journal:
        for number, line in enumerate(script.decode().splitlines()):
            if line.strip():
                journal.append(json.loads(line), at=1_795_958_400.0 + number / 4)
    return path.read_bytes()


@functools.cache
def seeds() -> dict[str, list[bytes]]:
    """Valid seeds: the hand-written scripts, generated ones, and journals of them all.

    A cached function, not a fixture: hypothesis would print a fixture's whole value
    with every falsifying example.
    """
    scripts = [path.read_bytes() for path in sorted(SCRIPTS.glob("*.jsonl"))]
    scripts += _generated_scripts()
    with tempfile.TemporaryDirectory() as directory:
        journals = [_journal_of(script, Path(directory)) for script in scripts]
    return {"scripts": scripts, "journals": journals, "all": scripts + journals}


# ---------------------------------------------------------------- mutations

ODD_TEXT = ["\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\r", "\t", "\x00", "\ufeff", " ",
            "\U0001f0a1", "\u0661", "\\", '"', "\ufffd", "é"]
EXTREME_NUMBERS = [b"0", b"-1", b"1" + b"0" * 400, b"9" * 4301, b"1e400", b"-1e400", b"NaN",
                   b"Infinity", b"1.5", b"2.0", b"true", b"null", b'"7"', b"[]", b"{}"]


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One random mutation of ``data`` (name, result)."""
    b = bytearray(data)
    kind = rng.choice(["flip", "byte", "truncate", "delete_line", "duplicate_line", "swap_lines",
                       "shuffle", "number", "huge", "deep", "odd", "splice"])
    lines = data.split(b"\n")
    if kind == "flip" and b:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == "byte" and b:
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == "truncate":
        del b[rng.randrange(len(b) + 1):]
    elif kind == "delete_line" and lines:
        del lines[rng.randrange(len(lines))]
        b = bytearray(b"\n".join(lines))
    elif kind == "duplicate_line" and lines:
        index = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[index])
        b = bytearray(b"\n".join(lines))
    elif kind == "swap_lines" and len(lines) > 1:
        i, j = rng.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
        b = bytearray(b"\n".join(lines))
    elif kind == "shuffle":
        rng.shuffle(lines)
        b = bytearray(b"\n".join(lines))
    elif kind == "number":
        numbers = list(re.finditer(rb"-?\d+(\.\d+)?", data))
        if numbers:
            found = rng.choice(numbers)
            b[found.start():found.end()] = rng.choice(EXTREME_NUMBERS)
    elif kind == "huge":
        at = rng.randrange(len(b) + 1)
        b[at:at] = b"9" * rng.choice([19, 400, 4301, 20_000])
    elif kind == "deep":
        at = rng.randrange(len(b) + 1)
        b[at:at] = rng.choice([b"[", b"{\"a\":", b"[{\"op\":"]) * rng.choice([900, 100_000])
    elif kind == "odd":
        at = rng.randrange(len(b) + 1)
        b[at:at] = rng.choice(ODD_TEXT).encode("utf-8")
    elif kind == "splice" and lines:
        other = rng.randrange(len(lines))
        at = rng.randrange(len(b) + 1)
        b[at:at] = lines[other][: rng.randrange(len(lines[other]) + 1)]
    return kind, bytes(b)


def mutated(data: bytes, rng: random.Random, rounds: int) -> bytes:
    """``data`` after ``rounds`` random mutations (:func:`mutate`) drawn from ``rng``."""
    for _ in range(rounds):
        _, data = mutate(data, rng)
    return data


# ------------------------------------------------------- generated scripts

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, 2, 4, 7, 8, 9, 10**18, 10**19, -1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["As", "Kd", "2c", "Td", "1s", "Ax", "", "seat4.up", "seat1.down",
                     "seat9.down", "burn", "muck", "board", "table", "E0040150A1B2C3D4",
                     "bring_in", "complete", "bet", "raise", "call", "check", "fold",
                     "allin", "suit", "position", "stud", "razz"]),
    st.text(max_size=8),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["1", "2", "4", "x", "bring_in_tiebreak", "raise_cap"]) | st.text(
            max_size=3), inner, max_size=3),
    max_leaves=6,
)
KEYS = ["op", "zone", "card", "uid", "seat", "action", "amount", "players", "stacks",
        "hand_id", "console", "reason", "at", "deck", "seats", "ante", "bring_in",
        "small_bet", "big_bet", "rules", "game", "auto_hands", "jseq", "crc", "ts"]
OP_OBJECTS = st.fixed_dictionaries(
    {"op": st.sampled_from([*OPS, "deal", ""]) | JSON_SCALARS},
    optional={key: JSON_VALUES for key in KEYS if key != "op"},
)
LINES = st.one_of(
    OP_OBJECTS.map(lambda obj: json.dumps(obj, ensure_ascii=False)),
    st.sampled_from(['{"op":"hand","players":[1,2,4]}', '{"op":"act","seat":4,"action":"call"}',
                     '{"op":"place","zone":"seat4.up","card":"Kd"}', "", "  ", "[]", "{",
                     '{"op":"table","auto_hands":true}', '{"op":"end"}']),
    st.text(max_size=20),
)
SEPARATORS = st.sampled_from(["\n", "\r\n", "\n\n", "\x0c\n", "\u2028\n", "\n\u2029"])


@settings(HEAVY, max_examples=200)
@given(lines=st.lists(LINES, max_size=12), separator=SEPARATORS, trailing=st.booleans())
def test_fuzz_generated_scripts_in_process(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], separator: str, trailing: bool
) -> None:
    text = separator.join(lines) + (separator if trailing else "")
    data = text.encode("utf-8", "surrogatepass")
    replay_bytes(tmp_path_factory.getbasetemp(), data)


# ---------------------------------------------------------- mutated seeds

@settings(HEAVY, max_examples=1000)
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 4))
def test_fuzz_mutated_scripts_and_journals_in_process(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int, rounds: int,
) -> None:
    rng = random.Random(seed)
    data = mutated(rng.choice(seeds()["all"]), rng, rounds)
    replay_bytes(tmp_path_factory.getbasetemp(), data)


@settings(HEAVY, max_examples=300)
@given(seed=st.integers(0, 2**32 - 1))
def test_fuzz_any_changed_byte_before_the_last_journal_line_is_refused(
    tmp_path_factory: pytest.TempPathFactory, seed: int
) -> None:
    """Item 13's property: a tampered record never replays as genuine. Any single byte
    changed in any record but the last gives exit 2 (CRC-32 catches every burst of up to
    32 bits; a broken line breaks JSON or canonical form)."""
    rng = random.Random(seed)
    journal = rng.choice(seeds()["journals"])
    last_start = journal.rindex(b"\n", 0, len(journal) - 1) + 1
    # The newline ending the last-but-one record included: without it the last two
    # records are one complete bad last line, damage since issue 21 item 3
    # (test_journal_newline_before_the_last_record below).
    at = rng.randrange(last_start)
    new = rng.choice([value for value in range(256) if value != journal[at]])
    data = journal[:at] + bytes([new]) + journal[at + 1:]
    assert replay_bytes(tmp_path_factory.getbasetemp(), data) == "error"


def test_journal_newline_before_the_last_record(tmp_path: Path) -> None:
    """The newline ending the last-but-one record changed: the last two records become
    one complete bad last line. Replayed as a torn tail (exit 0) until issue 21 item 3;
    a complete line cannot be a cut write, so it is damage naming that line."""
    journal = seeds()["journals"][0]
    end = journal.rindex(b"\n", 0, len(journal) - 1)
    path = tmp_path / "merged.jsonl"
    path.write_bytes(journal[:end] + b" " + journal[end + 1:])
    code, out, err = run_main(path)
    assert (code, out) == (2, "")
    line = journal.count(b"\n") - 1
    assert f"{path}:{line}: damaged journal record:" in err


@settings(HEAVY, max_examples=120)
@given(seed=st.integers(0, 2**32 - 1))
def test_fuzz_journal_cut_anywhere_replays_its_complete_records(
    tmp_path_factory: pytest.TempPathFactory, seed: int
) -> None:
    """kill -9 at any byte: exit 0, the complete records replayed, a partial last line
    reported as the torn tail (docs/journal.md)."""
    rng = random.Random(seed)
    journal = rng.choice(seeds()["journals"])
    first_end = journal.index(b"\n") + 1
    cut = rng.randrange(first_end, len(journal) + 1)
    directory = tmp_path_factory.getbasetemp()
    whole = journal[: journal.rindex(b"\n", 0, cut) + 1]
    (directory / "whole.jsonl").write_bytes(whole)
    code, out, err = run_main(directory / "whole.jsonl")
    assert (code, err) == (0, "")
    expected = json.loads(out)
    (directory / "cut.jsonl").write_bytes(journal[:cut])
    code, out, err = run_main(directory / "cut.jsonl")
    assert (code, err) == (0, ""), err
    report = json.loads(out)
    assert report["hands"] == expected["hands"]
    torn = report["journal"]["torn_tail"]
    assert (torn is not None) == (cut != len(whole))
    if torn is not None:
        assert torn["line"] == whole.count(b"\n") + 1


# --------------------------------------------------------------- phh files

def run_phh(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["phh", *argv])
    return code, out.getvalue(), err.getvalue()


@settings(HEAVY, max_examples=250)
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 3))
def test_fuzz_phh_import_of_mutated_files(
    tmp_path_factory: pytest.TempPathFactory, seed: int, rounds: int
) -> None:
    """``phh import`` of a damaged PHH file: exit 0 or 2 with one line, never a traceback."""
    rng = random.Random(seed)
    files = sorted(PHH_DATA.glob("*.phh"))
    data = mutated(rng.choice(files).read_bytes(), rng, rounds)
    path = tmp_path_factory.getbasetemp() / "fuzz.phh"
    path.write_bytes(data)
    code, out, err = run_phh("import", str(path))
    assert code in (0, 2), (code, err)
    if code == 2:
        assert out == ""
        assert err.count("\n") == 1, err
        assert err.startswith("stud-table phh import: ")


@settings(HEAVY, max_examples=200)
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 3))
def test_fuzz_phh_export_of_mutated_scripts_and_journals(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int, rounds: int,
) -> None:
    rng = random.Random(seed)
    data = mutated(rng.choice(seeds()["all"]), rng, rounds)
    path = tmp_path_factory.getbasetemp() / "fuzz.jsonl"
    path.write_bytes(data)
    code, _, err = run_phh("export", str(path))
    assert code in (0, 2), (code, err)
    if code == 2:
        last = err.splitlines()[-1]
        assert last.startswith("stud-table phh export: "), err
        assert "internal error" not in err


def test_issue9_phh_import_of_huge_numbers_and_deep_nesting(tmp_path: Path) -> None:
    """Found by the fuzz test: tomllib raises ValueError past 4,300 digits and
    RecursionError on deep arrays; both were tracebacks out of ``phh import``."""
    for text in ("variant = 'F7S'\nantes = [" + "9" * 5000 + "]\n",
                 "variant = 'F7S'\nantes = " + "[" * 100_000 + "\n"):
        path = tmp_path / "bad.phh"
        path.write_text(text)
        code, out, err = run_phh("import", str(path))
        assert (code, out) == (2, "")
        assert err.startswith(f"stud-table phh import: {path}: not a PHH file (bad TOML: ")
        assert err.count("\n") == 1


def test_issue9_phh_import_of_stakes_out_of_range_is_one_line(tmp_path: Path) -> None:
    """Found by the fuzz test: a big_bet past the chip bound printed pydantic's
    several-line error (with a URL); stakes the engine refuses are one line too."""
    original = (PHH_DATA / "stud-hand-05.phh").read_text()
    for old, new in (("big_bet = 400000", "big_bet = 4" + "0" * 17),
                     ("bring_in = 50000", "bring_in = 200000")):
        path = tmp_path / "bad.phh"
        path.write_text(original.replace(old, new))
        code, out, err = run_phh("import", str(path))
        assert (code, out) == (2, "")
        assert err.startswith("stud-table phh import: the stakes do not make a table: ")
        assert err.count("\n") == 1


# ------------------------------------------------------- the real CLI, in processes

def subprocess_cases(count: int, seed: int) -> list[bytes]:
    """``count`` inputs: mutated seeds, plus the named hostile shapes every run."""
    rng = random.Random(seed)
    cases = [
        b"", b"\n\n", b"[" * 100_000 + b"\n", b'{"op":"hand","players":[1,2],"at":1'
        + b"0" * 5000 + b"}\n", b"\x00" * 70_000, b"\xff\xfe{}\n",
        '{"op":"hand","players":[1,2]}\u2028\n{"op":"x"}\n'.encode(),
    ]
    while len(cases) < count:
        cases.append(mutated(rng.choice(seeds()["all"]), rng, rng.randint(1, 3)))
    return cases


def run_cli_cases(cases: list[bytes], directory: Path) -> dict[str, int]:
    """Run every case through ``python -m table_controller replay`` (3 at a time)."""

    def one(index: int) -> str:
        path = directory / f"case-{index}.jsonl"
        path.write_bytes(cases[index])
        result = subprocess.run(
            [sys.executable, "-m", "table_controller", "replay", str(path), "--json"],
            capture_output=True, text=True, check=False, timeout=HANG_TIMEOUT,
        )  # TimeoutExpired is the hang detector: it fails the test
        return check_outcome(path, cases[index], result.returncode, result.stdout,
                             result.stderr)

    with ThreadPoolExecutor(max_workers=3) as pool:
        outcomes = list(pool.map(one, range(len(cases))))
    return {kind: outcomes.count(kind) for kind in ("ok", "error")}


def test_fuzz_real_cli_in_subprocesses(
    tmp_path: Path
) -> None:
    # 60 processes keep CI short (each pays Python's start-up); the in-process tests above
    # take the thousands, --soak the 3,000 subprocess cases.
    counts = run_cli_cases(subprocess_cases(60, 9), tmp_path)
    assert counts["ok"] + counts["error"] == 60
    assert counts["ok"] > 0  # mutations that keep a valid script are replayed


# ------------------------------------------------------------------- soak

@pytest.mark.soak
def test_soak_real_cli_in_subprocesses(
    tmp_path: Path
) -> None:
    counts = run_cli_cases(subprocess_cases(3000, 10), tmp_path)
    assert sum(counts.values()) == 3000


@pytest.mark.soak
def test_soak_in_process(tmp_path: Path) -> None:
    """100,000 mutated inputs through main() (about an hour on the 2-core machine)."""
    rng = random.Random(11)
    outcomes: dict[str, int] = {}
    for _ in range(100_000):
        data = mutated(rng.choice(seeds()["all"]), rng, rng.randint(1, 4))
        kind = replay_bytes(tmp_path, data)
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert sum(outcomes.values()) == 100_000


def test_regression_phh_import_huge_or_unicode_numbers_in_actions(tmp_path: Path) -> None:
    """Found by the fuzzer (seed 76): a ``cbr`` amount of 4,301 digits reached ``int()``
    and raised ValueError (a traceback); a superscript digit passes ``isdigit()`` but not
    ``int()``; a player label ``p`` + 4,301 digits likewise. Each is one line, exit 2."""
    base = (PHH_DATA / "stud-hand-05.phh").read_text()
    for bad in ("p1 cbr " + "9" * 4301, "p1 cbr 1²", "p" + "1" * 4301 + " cbr 5"):
        text = base.replace("actions = [", f"actions = [\n  '{bad}',", 1)
        path = tmp_path / "bad.phh"
        path.write_text(text)
        code, _out, err = run_phh("import", str(path))
        assert code == 2, (bad[:20], err)
        assert len(err.strip().splitlines()) == 1, err
