"""Journal: round trip, durability across kill -9, torn tails, corruption, rotation."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.records.journal import (
    Journal,
    JournalError,
    JournalLock,
    JournalLockedError,
    current_hand_records,
    encode_record,
    last_hand_number,
    read_journal,
    read_journal_bytes,
    strip_envelope,
)

OPS: list[dict[str, object]] = [
    {"op": "table", "seats": 8, "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
    {"op": "hand", "players": [1, 2, 4, 7]},
    {"op": "place", "zone": "seat1.down", "card": "As"},
    {"op": "place", "zone": "seat2.down", "card": "Kd"},
    {"op": "remove", "zone": "seat2.down", "card": "Kd"},
    {"op": "place", "zone": "seat4.up", "uid": "E0040150A1B2C3D4"},
    {"op": "hand", "players": [1, 2]},
    {"op": "place", "zone": "seat1.up", "card": "2c"},
    {"op": "act", "seat": 1, "action": "bring_in"},
]


def _write(path: Path, ops: list[dict[str, object]], fsync: str = "always") -> None:
    with Journal.open(path, fsync=fsync) as journal:  # type: ignore[arg-type]
        for i, op in enumerate(ops):
            journal.append(op, at=1000.0 + i / 4)


@pytest.mark.parametrize("fsync", ["always", "batch", "never"])
def test_round_trip_and_envelope(tmp_path: Path, fsync: str) -> None:
    path = tmp_path / "t1.jsonl"
    _write(path, OPS, fsync)
    result = read_journal(path)
    assert not result.torn_tail
    assert result.bad_records == []
    assert [strip_envelope(r) for r in result.records] == OPS
    assert [r["jseq"] for r in result.records] == list(range(1, len(OPS) + 1))
    assert [r["at"] for r in result.records] == [1000.0 + i / 4 for i in range(len(OPS))]
    first = json.loads(path.read_text().splitlines()[2])
    assert set(first) == {"op", "zone", "card", "jseq", "at", "crc"}


def test_reopen_continues_jseq(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    _write(path, OPS[:3])
    with Journal.open(path) as journal:
        assert journal.append(OPS[3], at=5.0) == 4
    assert [r["jseq"] for r in read_journal(path).records] == [1, 2, 3, 4]


def test_reserved_keys_and_missing_op_are_refused(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.jsonl") as journal:
        with pytest.raises(ValueError, match="reserved"):
            journal.append({"op": "place", "crc": "x"}, at=0)
        with pytest.raises(ValueError, match="'op'"):
            journal.append({"zone": "burn"}, at=0)
        assert journal.next_jseq == 1


def test_current_hand_records_keeps_table_line() -> None:
    records = [{**op, "jseq": i + 1} for i, op in enumerate(OPS)]
    current = current_hand_records(records)
    assert [strip_envelope(r) for r in current] == [OPS[0], *OPS[6:]]
    assert current_hand_records(records[:1]) == records[:1]


_KILLED_WRITER = """
import sys
from table_controller.records.journal import Journal
journal = Journal.open(sys.argv[1], fsync=sys.argv[2])
n = 0
while True:
    n += 1
    journal.append({"op": "place", "zone": "seat1.up", "card": "2c", "n": n}, at=float(n))
    print(n, flush=True)  # acknowledged only after append returned
"""


@pytest.mark.parametrize("fsync", ["always", "never"])
def test_kill_9_loses_no_acknowledged_record(tmp_path: Path, fsync: str) -> None:
    path = tmp_path / "t1.jsonl"
    with subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path), fsync], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        acked = 0
        while acked < 200:
            acked = int(child.stdout.readline())
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    result = read_journal(path)
    assert result.bad_records == []
    numbers = [r["n"] for r in result.records]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= acked
    with Journal.open(path) as journal:  # a restarted daemon appends after the last record
        assert journal.append({"op": "hand", "players": [1, 2]}, at=0) == len(numbers) + 1


def test_torn_tail_is_dropped_and_truncated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    _write(path, OPS[:4])
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"op":"place","zone":"seat')
    result = read_journal(path)
    assert result.torn_tail
    assert len(result.records) == 4
    with Journal.open(path) as journal:
        journal.append(OPS[4], at=9.0)
    result = read_journal(path)
    assert not result.torn_tail
    assert [strip_envelope(r) for r in result.records] == OPS[:5]


def test_bad_crc_in_middle_or_at_end_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    _write(path, OPS[:5])
    lines = path.read_bytes().splitlines(keepends=True)
    tampered = lines[2].replace(b"As", b"Ah")
    path.write_bytes(b"".join([*lines[:2], tampered, *lines[3:]]))
    result = read_journal(path)
    assert result.bad_records == [(3, "crc mismatch")]
    assert not result.torn_tail
    assert [r["jseq"] for r in result.records] == [1, 2, 4, 5]
    with pytest.raises(JournalError, match="line 3: crc mismatch"):
        Journal.open(path)

    # Issue 9 item 11: a complete last line cannot be torn by a crash (one
    # os.write per line): a bad one is a damaged, possibly published, record.
    path.write_bytes(b"".join([*lines[:4], lines[4].replace(b"Kd", b"Kh")]))
    result = read_journal(path)
    assert not result.torn_tail
    assert result.bad_records == [(5, "crc mismatch")]
    assert result.damaged
    assert result.records_lost == 1
    assert len(result.records) == 4


def test_garbage_line_reasons(tmp_path: Path) -> None:
    good = encode_record({"op": "hand", "players": [1, 2]}, 1, 0.0)
    cases = {
        b"not json\n": "bad JSON",
        b"[1,2]\n": "not a JSON object",
        b'{"op": "hand"}\n': "not in canonical form",
        b'{"op":"hand"}\n': "missing or malformed crc",
        b"\xff\xfe\n": "not ASCII",
    }
    for line, reason in cases.items():
        result = read_journal_bytes(line + good)
        assert len(result.bad_records) == 1, line
        assert result.bad_records[0][0] == 1
        assert result.bad_records[0][1].startswith(reason), (line, result.bad_records)


def test_rotation_at_hand_boundary(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    with Journal.open(path, max_bytes=4096) as journal:
        hands = 0
        while not list(tmp_path.glob("t1.*-*.jsonl")):
            journal.append({"op": "hand", "players": [1, 2]}, at=0)
            hands += 1
            for _ in range(20):
                journal.append({"op": "place", "zone": "seat1.up", "card": "2c"}, at=0)
        last = journal.next_jseq - 1
    (archived,) = tmp_path.glob("t1.*-*.jsonl")
    old = read_journal(archived).records
    live = read_journal(path).records
    assert live[0]["op"] == "hand"
    assert [r["jseq"] for r in old + live] == list(range(1, last + 1))
    assert archived.name == f"t1.1-{old[-1]['jseq']}.jsonl"
    path.unlink()  # lost live file: jseq still continues from the archive's name
    with Journal.open(path) as journal:
        assert journal.next_jseq == old[-1]["jseq"] + 1


# ---------------------------------------------------------------- properties

_op = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["place", "remove", "hand", "act"]),
        "zone": st.sampled_from(["seat1.up", "seat8.down", "burn", "muck", "board"]),
        "card": st.sampled_from(["As", "2c", "Td", "9h"]),
    },
    optional={"note": st.text(max_size=8), "amount": st.integers(0, 10**6)},
)


def _encode(ops: list[dict[str, object]], ats: list[float]) -> tuple[bytes, list[int]]:
    data = b""
    ends = []
    for jseq, (op, at) in enumerate(zip(ops, ats, strict=True), start=1):
        data += encode_record(op, jseq, at)
        ends.append(len(data))
    return data, ends


_journal = st.lists(_op, min_size=1, max_size=12).flatmap(
    lambda ops: st.tuples(
        st.just(ops),
        st.lists(
            st.floats(0, 1e9, allow_nan=False), min_size=len(ops), max_size=len(ops)
        ),
    )
)


@settings(max_examples=150)
@given(_journal, st.data())
def test_any_truncation_reads_back_a_prefix(
    journal: tuple[list, list], data: st.DataObject
) -> None:
    ops, ats = journal
    encoded, ends = _encode(ops, ats)
    cut = data.draw(st.integers(0, len(encoded)), label="cut")
    result = read_journal_bytes(encoded[:cut])
    whole = sum(1 for end in ends if end <= cut)
    # A cut just before a newline leaves a whole record without its newline:
    # kept, and reported as a repaired tail (issue 9 item 11), never dropped.
    repaired = cut + 1 in ends
    complete = whole + repaired
    assert [strip_envelope(r) for r in result.records] == ops[:complete]
    assert [r["at"] for r in result.records] == ats[:complete]
    assert result.repaired_tail == repaired
    assert result.torn_tail == (cut not in (0, *ends) and not repaired)
    assert result.bad_records == []
    assert result.good_bytes == (ends[whole - 1] if whole else 0)


@settings(max_examples=300)
@given(_journal, st.data())
def test_any_bit_flip_is_detected(journal: tuple[list, list], data: st.DataObject) -> None:
    ops, ats = journal
    encoded, _ends = _encode(ops, ats)
    position = data.draw(st.integers(0, len(encoded) - 1), label="byte")
    bit = data.draw(st.integers(0, 7), label="bit")
    flipped = bytearray(encoded)
    flipped[position] ^= 1 << bit
    result = read_journal_bytes(bytes(flipped))
    # A flipped bit in the last newline must not hide a published record as a
    # "torn tail" (issue 9 item 11): the record is kept and the damage reported.
    if position == len(encoded) - 1:
        assert result.repaired_tail
        assert len(result.records) == len(ops)
    assert result.damaged or result.torn_tail
    originals = [json.dumps(op, sort_keys=True) for op in ops]
    for record in result.records:  # whatever survives is genuine, never altered
        assert json.dumps(strip_envelope(record), sort_keys=True) in originals


# ---------------------------------------------------------------- issue 9 items 8, 9, 11, 14


def test_jseq_gap_is_damage_and_counts_the_missing_records(tmp_path: Path) -> None:
    """Item 11: a cut in the middle that removes whole lines is found."""
    path = tmp_path / "t1.jsonl"
    _write(path, OPS)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], *lines[6:]]))
    result = read_journal(path)
    assert result.gaps == [(3, 3, 7)]
    assert result.records_lost == 4
    assert result.damaged
    assert "4 records missing" in result.damage_summary()


def test_recover_moves_the_damaged_file_aside_and_keeps_every_good_record(
    tmp_path: Path,
) -> None:
    """Items 11 and 12: damage never stops the table, and is kept for inspection."""
    path = tmp_path / "t1.jsonl"
    _write(path, OPS)
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = b"".join([*lines[:3], b"garbage\n", *lines[4:]])
    path.write_bytes(damaged)
    with pytest.raises(JournalError, match="line 4"):
        Journal.open(path)
    with Journal.open(path, recover=True, clock=lambda: 0.0) as journal:
        assert journal.recovery is not None
        assert journal.recovery.lost == 1
        assert journal.recovery.kept == len(OPS) - 1
        assert journal.recovery.moved_to.name == "t1.damaged-19700101T000000Z.jsonl"
        assert journal.recovery.moved_to.read_bytes() == damaged
        assert journal.append({"op": "end"}, at=5.0) == len(OPS)
    result = read_journal(path)
    assert not result.damaged
    assert [strip_envelope(r) for r in result.records] == [*OPS[:3], *OPS[4:], {"op": "end"}]
    assert [r["jseq"] for r in result.records] == list(range(1, len(OPS) + 1))


def test_failed_write_leaves_no_partial_line(tmp_path: Path) -> None:
    """Item 14: a write cut by a full disk must not glue the next record to garbage."""
    import resource

    path = tmp_path / "t1.jsonl"
    _write(path, OPS[:3])
    size = path.stat().st_size
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    journal = Journal.open(path)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, old[1]))
        with pytest.raises(JournalError, match="write failed"):
            journal.append(OPS[3], at=1.0)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    assert path.stat().st_size == size  # the partial line was cut off again
    journal.append(OPS[3], at=1.0)
    journal.close()
    result = read_journal(path)
    assert not result.damaged
    assert not result.torn_tail
    assert [strip_envelope(r) for r in result.records] == OPS[:4]


def test_lock_refuses_a_second_holder_and_names_the_first(tmp_path: Path) -> None:
    """Item 8, in process: the lock is per open file, so a second acquire fails."""
    first = JournalLock.acquire(tmp_path, "t1")
    try:
        with pytest.raises(JournalLockedError, match=f"pid {os.getpid()}"):
            JournalLock.acquire(tmp_path, "t1")
        other = JournalLock.acquire(tmp_path, "t2")  # another table: its own lock
        other.release()
    finally:
        first.release()
    JournalLock.acquire(tmp_path, "t1").release()  # free again once released


def test_last_hand_number_from_hand_ids_or_counted() -> None:
    """Item 9: hand numbers come back from the journal, old journals included."""
    assert last_hand_number([{"op": "hand", "hand_id": 41}, {"op": "place"}]) == 41
    assert last_hand_number([{"op": "hand"}, {"op": "hand"}, {"op": "place"}]) == 2
    assert last_hand_number([]) == 0


def test_rotated_file_is_headed_by_the_header(tmp_path: Path) -> None:
    """A file begun by rotation starts with the header ops (the daemon's ``table``
    line and players' names, issue 10/12), then the hand: it replays alone."""
    path = tmp_path / "t1.jsonl"
    header = [{"op": "table", "seats": 8, "game": "razz"},
              {"op": "seat", "seat": 2, "name": "Ann"}]
    with Journal.open(path, max_bytes=4096) as journal:
        journal.header = lambda: header
        while not list(tmp_path.glob("t1.*-*.jsonl")):
            journal.append({"op": "hand", "players": [1, 2]}, at=0)
            for _ in range(20):
                journal.append({"op": "place", "zone": "seat1.up", "card": "2c"}, at=0)
        last = journal.next_jseq - 1
    (archived,) = tmp_path.glob("t1.*-*.jsonl")
    old, live = read_journal(archived).records, read_journal(path).records
    assert [strip_envelope(r) for r in live[:2]] == header
    assert live[2]["op"] == "hand"
    assert [r["jseq"] for r in old + live] == list(range(1, last + 1))  # jseq goes on


def test_new_file_at_the_next_hand_whatever_the_size(tmp_path: Path) -> None:
    """Settings changed since the file began: the next hand starts a new file."""
    path = tmp_path / "t1.jsonl"
    with Journal.open(path) as journal:
        journal.header = lambda: [{"op": "table", "seats": 8, "game": "stud8"}]
        journal.append({"op": "table", "seats": 8}, at=0)
        journal.append({"op": "hand", "players": []}, at=0)
        journal.begin_new_file_at_next_hand()
        journal.append({"op": "place", "zone": "seat1.up", "card": "2c"}, at=0)
        assert not list(tmp_path.glob("t1.*-*.jsonl"))  # only at a hand boundary
        journal.append({"op": "hand", "players": []}, at=0)
        journal.append({"op": "hand", "players": []}, at=0)  # once, not at every hand
    (archived,) = tmp_path.glob("t1.*-*.jsonl")
    assert [r["op"] for r in read_journal(archived).records] == ["table", "hand", "place"]
    live = read_journal(path).records
    assert [r["op"] for r in live] == ["table", "hand", "hand"]
    assert live[0]["game"] == "stud8"


# ------------------------------------------------------------ issue 21 item 3


def _long_journal(path: Path, records: int = 120) -> bytes:
    ops: list[dict[str, object]] = [OPS[0], {"op": "hand", "players": [], "hand_id": 1}]
    ops += [{"op": "place", "zone": f"seat{1 + i % 8}.up", "card": "As"}
            for i in range(records - len(ops))]
    _write(path, ops, fsync="never")
    return path.read_bytes()


def _lost_under(data: bytes, start: int, end: int) -> int:
    """How many record lines of ``data`` overlap the byte range [start, end)."""
    lost, offset = 0, 0
    for line in data.splitlines(keepends=True):
        if offset < end and offset + len(line) > start:
            lost += 1
        offset += len(line)
    return lost


@pytest.mark.parametrize("from_end", [0, 1, 64, 700, 5000])
def test_issue21_item3_zero_filled_block_counts_what_was_really_lost(
    tmp_path: Path, from_end: int
) -> None:
    """A 4 kB zero-filled block ending 64 bytes before the end was reported as
    1 record lost when 39 were: the jseq still readable behind the damage tells."""
    path = tmp_path / "t1.jsonl"
    data = _long_journal(path)
    end = len(data) - from_end
    damaged = data[: end - 4096] + bytes(4096) + data[end:]
    result = read_journal_bytes(damaged)
    lost = _lost_under(data, end - 4096, end)
    assert result.damaged  # never a silent torn tail, at any offset
    assert len(result.records) == 120 - lost
    if from_end in (64, 700, 5000):
        # A jseq survives behind the zeros (or a good record follows): exact.
        assert result.records_lost == lost
    else:
        # Nothing behind the zeros names a jseq: at least one, and said so.
        assert 1 <= result.records_lost <= lost
        assert "bytes unreadable" in result.damage_summary()


@pytest.mark.parametrize("tail", [bytes(300), b"\x00" * 10 + b'{"at"', b"garbage"])
def test_issue21_item3_a_last_line_that_is_no_cut_record_is_damage(
    tmp_path: Path, tail: bytes
) -> None:
    """Only a prefix of one record line can be a write cut short: zeros or text that no
    record begins with are damage (possibly published records), not a torn tail."""
    path = tmp_path / "t1.jsonl"
    data = _long_journal(path, 10)
    result = read_journal_bytes(data + tail)
    assert not result.torn_tail
    assert result.damaged
    assert len(result.records) == 10
    # ... while every real cut of a record is still a torn tail (the property test
    # above cuts at every byte).
    assert read_journal_bytes(data + data.splitlines(keepends=True)[-1][:30]).torn_tail


# ------------------------------------------------------------ issue 21 items 1 and 5


def test_issue21_item1_a_deleted_live_file_is_begun_again_with_the_current_hand(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j" / "t1.jsonl"
    told: list[str] = []
    with Journal.open(path) as journal:
        journal.header = lambda: [OPS[0]]
        journal.on_incident = told.append
        for i, op in enumerate(OPS[1:]):
            journal.append(op, at=1000.0 + i)
        assert journal.verify(2000.0) is None
        path.unlink()
        assert journal.verify(2000.0) == "the journal file was deleted"
        assert told == ["the journal file was deleted"]
        journal.append({"op": "place", "zone": "seat2.up", "card": "3c"}, at=2001.0)
        # rm -rf of the directory: noticed by the next append itself.
        shutil.rmtree(path.parent)
        journal.append({"op": "place", "zone": "seat2.up", "card": "4c"}, at=2002.0)
        assert told[-1] == "the journal directory was removed"
    found = read_journal(path)
    assert not found.damaged
    # The header, then the current hand (from its hand op) and what came after; jseq
    # goes on from the deleted file's (never backwards, never repeated).
    ops = [strip_envelope(r) for r in found.records]
    assert ops == [OPS[0], *OPS[6:], {"op": "place", "zone": "seat2.up", "card": "3c"},
                   {"op": "place", "zone": "seat2.up", "card": "4c"}]
    jseqs = [r["jseq"] for r in found.records]
    assert jseqs == list(range(jseqs[0], jseqs[0] + len(jseqs)))
    assert jseqs[0] > len(OPS)
    hand = [r for r in found.records if r["op"] == "hand"]
    assert [strip_envelope(r) for r in hand] == [OPS[6]]


def test_issue21_item5_the_journal_file_itself_is_locked(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    with Journal.open(path), pytest.raises(JournalLockedError, match="in use by another"):
        Journal.open(path)
    Journal.open(path).close()  # free once closed


def test_issue21_item5_a_deleted_lock_file_is_taken_again(tmp_path: Path) -> None:
    lock = JournalLock.acquire(tmp_path, "t1")
    try:
        assert lock.check() is False
        lock.path.unlink()
        assert lock.check() is True
        assert f"pid {os.getpid()}" in lock.path.read_text()
        with pytest.raises(JournalLockedError):
            JournalLock.acquire(tmp_path, "t1")
    finally:
        lock.release()
