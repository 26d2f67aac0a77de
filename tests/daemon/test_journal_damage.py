"""The journal under faults, against the real daemon (issue 9 items 8, 9, 11, 12, 14).

Each test runs ``stud-table run`` as a subprocess with emulated readers on ptys
and a real Mosquitto, damages or starves its journal the way the hostile tester
did, and checks what the daemon does and that it is reported: the log line, the
alert, the retained ``status``. The damage matrix at the end is the table of
docs/reliability.md.

Journals for the damage cases are written directly (records as the daemon
writes them) for the cards that are put on the emulated table, so the daemon
restarts onto a table that matches its journal, as after a crash.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_rig import (
    Mirror,
    alert_codes,
    fill,
    hand_events,
    journal_file,
    journal_positions,
    limit_file_size,
    payloads,
    remount,
    restart_and_wait_ready,
    small_tmpfs,
    status_of,
    unlimit_file_size,
    wait_caught_up,
    wait_status,
)

from table_controller.domain.events import CardPlaced
from table_controller.records.journal import encode_record, read_journal
from table_controller.records.script import event_to_op
from table_controller.simulation import deal_random
from table_controller.testing.broker import WAIT, wait_until
from table_controller.testing.daemon_rig import ROOT, TABLE, TableRig, subscribe, wait_state

EXIT_NEEDS_PERSON = 3


def cards_shown(state: dict[str, object]) -> int:
    """How many cards a published state shows at the seats."""
    seats = state["seats"]
    assert isinstance(seats, list)
    return sum(len(s["up"]) + s["down_count"] for s in seats)


def seated(events: list[CardPlaced]) -> int:
    """How many of ``events`` put a card at a seat (not the burn pile)."""
    return sum(1 for e in events if e.zone.seat is not None)


def _deal(rig: TableRig, seed: int = 5) -> tuple[Mirror, list[CardPlaced]]:
    deal = deal_random([1, 2, 3, 4], random.Random(seed), fold_chance=0.0)
    events = [e for e in hand_events(deal) if isinstance(e, CardPlaced)]
    return Mirror(rig), events


def write_journal(rig: TableRig, mirror: Mirror, events: list[CardPlaced]) -> list[bytes]:
    """Put ``events`` on the table and write the journal a daemon would have
    written for them (table line, hand 1, the cards); return its lines."""
    for event in events:
        mirror.apply(event)
    ops: list[dict[str, object]] = [
        {"op": "table", "seats": 8, "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
         "auto_hands": True},
        {"op": "hand", "players": [], "hand_id": 1},
        *(event_to_op(CardPlaced(e.zone, e.card, deck="red")) for e in events),
    ]
    lines = [encode_record(op, jseq, 1000.0 + jseq) for jseq, op in enumerate(ops, start=1)]
    path = journal_file(rig)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    (path.parent / f"{TABLE}.seq").write_text("1000\n")
    return lines


def flip(line: bytes) -> bytes:
    """The line with one byte changed inside its card code (CRC mismatch)."""
    index = line.index(b'"card":"') + 8
    changed = bytearray(line)
    changed[index] = ord("2") if changed[index] != ord("2") else ord("3")
    return bytes(changed)


# --------------------------------------------------------------------- item 8


def test_second_daemon_is_refused_and_names_the_holder(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    first = rig.start_process()
    wait_status(sub, "online")
    mark = len(sub.snapshot())
    second = subprocess.run(
        [sys.executable, "-m", "table_controller", "run", "--config", str(rig.config_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert second.returncode == EXIT_NEEDS_PERSON
    message = second.stderr.strip().splitlines()[-1]
    assert "in use by another daemon" in message
    assert f"pid {first.pid}" in message  # the holder is named
    time.sleep(1.5)  # the first daemon is not knocked off the broker
    statuses = [m.json()["status"] for m in sub.snapshot()[mark:] if m.topic == f"{ROOT}/status"]
    assert statuses == []
    assert status_of(sub)["status"] == "online"
    assert first.poll() is None


# --------------------------------------------------------------------- item 9


def test_hand_numbers_go_on_after_sigterm_and_kill_9(rig: TableRig) -> None:
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    rig.start_process()
    wait_status(sub, "online")
    numbers = []
    for round_no, stop in enumerate(("sigterm", "kill9", "none")):
        deal = deal_random([2, 5], random.Random(round_no), fold_chance=0.0)
        mirror.run(hand_events(deal))
        wait_caught_up(rig, mirror)
        wait_until(lambda n=round_no: len(
            [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]) > n, WAIT,
            f"result {round_no + 1}: {[p['kind'] for p in payloads(sub, 'events')]}")
        numbers = [p["hand"] for p in payloads(sub, "events") if p["kind"] == "hand_result"]
        time.sleep(0.7)  # the dealer shuffles
        if stop == "sigterm":
            assert rig.process is not None
            rig.process.terminate()
            rig.process.wait(timeout=WAIT)
            rig.process = None
            restart_and_wait_ready(rig, sub)
        elif stop == "kill9":
            rig.kill9()
            restart_and_wait_ready(rig, sub)
    assert numbers == [1, 2, 3]
    # seq never goes backwards either (the will "lost" carries the seq of its
    # connection, docs/mqtt.md, so it is left out; reader figures have none).
    seqs = [m.json()["seq"] for m in sub.snapshot()
            if not (m.topic == f"{ROOT}/status" and m.json()["status"] == "lost")
            and not m.topic.endswith("/stats")]
    assert seqs == sorted(seqs)


# ------------------------------------------------------------ items 11 and 12


Damage = Callable[[list[bytes]], bytes]

DAMAGE: dict[str, tuple[Damage, int, bool]] = {
    # case: (what to write, records the report must call lost, whether the
    # restored hand is whole again: a record lost from the hand's first round
    # changes who is in the hand, which the alert asks people to check)
    "flip_last": (lambda lines: b"".join([*lines[:-1], flip(lines[-1])]), 1, True),
    "flip_middle": (lambda lines: b"".join([*lines[:5], flip(lines[5]), *lines[6:]]), 1,
                    False),
    "cut_mid_file": (
        lambda lines: b"".join(lines)[: sum(map(len, lines[:4])) + 17]
        + b"".join(lines)[sum(map(len, lines[:12])) + 9:],
        9,  # lines 5..12 gone, plus line 5's head glued to line 13's tail
        False,
    ),
    "garbage_appended": (lambda lines: b"".join(lines) + b"\x00garbage}\n{\"op\":1}\n", 2,
                         True),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_journal_is_reported_kept_and_recovered(rig: TableRig, case: str) -> None:
    damage, lost, whole = DAMAGE[case]
    mirror, events = _deal(rig)
    lines = write_journal(rig, mirror, events[:16])
    path = journal_file(rig)
    path.write_bytes(damage(lines))
    sub = subscribe(rig.broker.port)
    rig.start_process()
    status = wait_status(sub, "degraded")
    assert "journal damaged" in status["reason"]
    (alert,) = sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts"
                            and m.json()["code"] == "journal_damaged")
    assert f"{lost} record(s) lost" in alert.json()["message"]
    log = rig.daemon_log()
    assert "journal_damaged" in log
    # The damaged file is kept as it was, beside a fresh journal...
    (kept,) = path.parent.glob(f"{TABLE}.journal.damaged-*.jsonl")
    assert kept.read_bytes() == damage(lines)
    fresh = read_journal(path)
    assert not fresh.damaged
    # ...and what the journal lost, the readers still show: it is journaled
    # again (no card the table shows is missing from the journal)...
    wait_caught_up(rig, mirror)
    if whole:  # ...and the state has every card.
        state = wait_state(sub, lambda s: cards_shown(s) == seated(events[:16]))
        assert state["hand"] == 1
    # The table deals on; the next hand clears the "degraded" note.
    mirror.run(events[16:])
    wait_caught_up(rig, mirror)
    assert read_journal(path).damaged is False


def test_torn_tail_is_logged_and_dropped(rig: TableRig) -> None:
    mirror, events = _deal(rig)
    lines = write_journal(rig, mirror, events[:10])
    journal_file(rig).write_bytes(b"".join(lines) + lines[0][:25])  # a write cut by kill -9
    sub = subscribe(rig.broker.port)
    rig.start_process()
    wait_status(sub, "online")
    state = wait_state(sub, lambda s: cards_shown(s) == seated(events[:10]))
    assert state["hand"] == 1
    wait_until(lambda: "journal_torn_tail_dropped" in rig.daemon_log(), WAIT,
               "the torn tail's log line")
    assert alert_codes(sub) == []  # a write never acknowledged needs nobody


def test_missing_journal_is_reported(rig: TableRig) -> None:
    mirror, events = _deal(rig)
    write_journal(rig, mirror, events[:10])
    journal_file(rig).unlink()  # the .seq file says this table has run before
    sub = subscribe(rig.broker.port)
    rig.start_process()
    status = wait_status(sub, "degraded")
    assert "missing" in status["reason"]
    sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts" and m.json()["code"] == "journal_missing")
    assert "journal_missing" in rig.daemon_log()
    wait_caught_up(rig, mirror)  # what the readers show is journaled afresh


def test_unreadable_journal_refuses_to_start_and_says_why(rig: TableRig) -> None:
    path = journal_file(rig)
    path.mkdir(parents=True)  # a journal that cannot be read as a file
    sub = subscribe(rig.broker.port)
    process = rig.start_process()
    assert process.wait(timeout=WAIT * 2) == EXIT_NEEDS_PERSON
    rig.process = None
    status = wait_status(sub, "failed")
    assert "cannot read the journal" in status["reason"]
    assert alert_codes(sub) == ["daemon_cannot_start"]
    assert "daemon_cannot_start" in rig.daemon_log()


def test_service_unit_does_not_restart_a_daemon_that_needs_a_person() -> None:
    unit = (Path(__file__).resolve().parents[2] / "deploy" / "stud-table.service").read_text()
    prevent = next(line for line in unit.splitlines()
                   if line.startswith("RestartPreventExitStatus"))
    assert set(prevent.split("=", 1)[1].split()) == {"2", "3"}


# ------------------------------------------------------ item 14 and read-only


def _journal_dir(rig: TableRig) -> Path:
    return rig.tmp / "journal"


def _stop_daemon(rig: TableRig) -> None:
    """SIGTERM the daemon before its file system is unmounted."""
    if rig.process is not None:
        rig.process.terminate()
        rig.process.wait(timeout=WAIT)
        rig.process = None


def test_disk_full_holds_cards_reports_and_loses_nothing(rig: TableRig) -> None:
    directory = _journal_dir(rig)
    with small_tmpfs(directory) as mounted:
        sub = subscribe(rig.broker.port)
        mirror = Mirror(rig)
        deal = deal_random([1, 2, 3, 4], random.Random(5), fold_chance=0.0)
        events = hand_events(deal)  # the deal, the showdown pick-up, the gathering
        process = rig.start_process()
        wait_status(sub, "online")
        mirror.run(events[:1])
        wait_caught_up(rig, mirror)
        mirror.run(events[1:8])
        wait_caught_up(rig, mirror)
        filler = fill(directory) if mounted else None
        if not mounted:  # no tmpfs here: the same failure injected (EFBIG)
            limit_file_size(process.pid, journal_file(rig).stat().st_size)
        # The journal's last page may still have room: deal on until a write fails.
        rest = iter(events[8:])
        while status_of(sub).get("status") != "degraded":
            mirror.run([next(rest)])
        status = wait_status(sub, "degraded")
        assert "journal not writable" in status["reason"]
        sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts"
                     and m.json()["code"] == "journal_write_failed")
        assert "journal_write_failed" in rig.daemon_log()
        mirror.run(list(rest)[:10])
        shown = cards_shown(payloads(sub, "state")[-1])
        journaled = len(read_journal(journal_file(rig)).records)
        time.sleep(1.5)
        # Nothing unjournaled is published: no card dealt since shows up.
        assert cards_shown(payloads(sub, "state")[-1]) == shown
        assert len(read_journal(journal_file(rig)).records) == journaled
        if mounted:
            # A restart with the disk still full: up, degraded, saying why.
            rig.kill9()
            mark = len(sub.snapshot())
            process = rig.start_process()
            wait_until(lambda: any(m.topic == f"{ROOT}/status" and m.json()["status"] == "degraded"
                                   for m in sub.snapshot()[mark:]), WAIT * 2,
                       "degraded after a restart on a full disk\n" + rig.daemon_log()[-2000:])
            assert process.poll() is None
        # Space again: the waiting cards are journaled and published, in order.
        if filler is not None:
            filler.unlink()
        else:
            unlimit_file_size(process.pid)
        wait_status(sub, "online")
        mirror.run(events[len(mirror.history):])
        wait_caught_up(rig, mirror)
        assert journal_positions(rig) == mirror.positions()  # no record lost
        assert not read_journal(journal_file(rig)).damaged
        results = [p for p in payloads(sub, "events") if p["kind"] == "hand_result"]
        assert [r["hand"] for r in results] == [1]
        assert alert_codes(sub).count("journal_write_failed") >= 1
        assert set(alert_codes(sub)) <= {"journal_write_failed", "hand_interrupted"}
        _stop_daemon(rig)


def test_read_only_directory_holds_cards_and_recovers(rig: TableRig) -> None:
    """A journal directory that is read-only at start (a file system remounted
    read-only after errors). tmpfs cannot be remounted read-only under a daemon
    holding files open for writing, so the daemon starts on it."""
    directory = _journal_dir(rig)
    with small_tmpfs(directory, size="4m") as mounted:
        sub = subscribe(rig.broker.port)
        mirror, events = _deal(rig)
        write_journal(rig, mirror, events[:6])
        if mounted:
            remount(directory, "ro")
        process = rig.start_process()
        if not mounted:  # injection instead: every write past the file's size fails,
            limit_file_size(process.pid, journal_file(rig).stat().st_size)
            wait_status(sub, "online")  # so the failure comes with the next card
            mirror.run(events[6:10])
        wait_until(lambda: "journal_write_failed" in rig.daemon_log(), WAIT * 2,
                   "the journal failure logged\n" + rig.daemon_log()[-2000:])
        # seq goes on from the clock floor, so the floor is told at once.
        status = wait_status(sub, "degraded")
        assert "journal not writable" in status["reason"]
        # The alert may be raised before the daemon's first connect and then
        # reach the broker after the status published on connecting.
        sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts"
                     and m.json()["code"] == "journal_write_failed")
        if mounted:
            mirror.run(events[6:10])
        time.sleep(1.5)
        assert process.poll() is None  # the table is still read
        # Nothing unjournaled is published.
        assert all(cards_shown(state) <= seated(events[:6]) for state in payloads(sub, "state"))
        if mounted:
            remount(directory, "rw")
        else:
            unlimit_file_size(process.pid)
        wait_status(sub, "online")
        wait_caught_up(rig, mirror)
        wait_state(sub, lambda s: cards_shown(s) == seated(events[:10]))
        assert journal_positions(rig) == mirror.positions()
        _stop_daemon(rig)


# ------------------------------------------------------------ issue 21 items 2 and 4


def _hands_file(rig: TableRig) -> Path:
    return journal_file(rig).parent / f"{TABLE}.hands"


@pytest.mark.parametrize("size", [0, 1])
def test_issue21_item2_journal_truncated_to_0_or_1_byte_is_reported(
    rig: TableRig, size: int
) -> None:
    """75 records dropped, logged only as journal_torn_tail_dropped (1 byte) or not
    at all (0 bytes), status online, the hand in progress replaced by a new hand 1.
    The .seq and .hands files show that the table ran before."""
    mirror, events = _deal(rig)
    lines = write_journal(rig, mirror, events[:12])
    _hands_file(rig).write_text("2\n")  # hand 1 was started: the next is 2
    journal_file(rig).write_bytes(b"".join(lines)[:size])
    sub = subscribe(rig.broker.port)
    rig.start_process()
    status = wait_status(sub, "degraded")
    assert "journal" in status["reason"]
    (alert,) = sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts"
                            and m.json()["code"] == "journal_missing")
    assert "empty" in alert.json()["message"]
    assert "journal_missing" in rig.daemon_log()
    wait_caught_up(rig, mirror)  # what the readers show is journaled afresh...
    state = wait_state(sub, lambda s: cards_shown(s) == seated(events[:12]))
    assert state["hand"] == 2  # ...as a new hand that does not reuse hand 1's number


def test_issue21_item4_journal_and_hand_file_deleted_hand_numbers_go_on(rig: TableRig) -> None:
    """journal_missing was raised, but the next hand was numbered 1 again although
    the .seq file shows the table ran (its hand numbers are lost with both files)."""
    mirror, events = _deal(rig)
    write_journal(rig, mirror, events[:12])
    journal_file(rig).unlink()
    _hands_file(rig).unlink(missing_ok=True)
    sub = subscribe(rig.broker.port)
    rig.start_process()
    wait_status(sub, "degraded")
    sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts" and m.json()["code"] == "journal_missing")
    wait_caught_up(rig, mirror)
    state = wait_state(sub, lambda s: cards_shown(s) == seated(events[:12]))
    # No record of the old numbers is left: they go on from a clock floor (seconds
    # since 2026-01-01), above any number a table that ran before can have used.
    assert state["hand"] > 1_000_000
    assert "hand_numbers_from_clock" in rig.daemon_log()


# ------------------------------------------------------------------ issue 21 item 5


def test_issue21_item5_lock_file_deleted_a_second_daemon_is_still_refused(
    rig: TableRig,
) -> None:
    """After ``rm journal/t1.lock`` a second daemon on the same config stayed up and
    both appended (duplicate jseq; replay then failed). The lock is held on the
    journal file itself too, which an unlinked lock file does not release."""
    sub = subscribe(rig.broker.port)
    mirror, events = _deal(rig)
    first = rig.start_process()
    wait_status(sub, "online")
    mirror.run(events[:4])
    wait_caught_up(rig, mirror)
    lock = journal_file(rig).parent / f"{TABLE}.lock"
    lock.unlink()
    second = subprocess.run(
        [sys.executable, "-m", "table_controller", "run", "--config", str(rig.config_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert second.returncode == EXIT_NEEDS_PERSON, second.stderr
    message = second.stderr.strip().splitlines()[-1]
    assert "in use by another daemon" in message
    assert first.poll() is None
    # The first daemon notices its lock file is gone and takes a new one (naming it).
    wait_until(lambda: lock.exists() and f"pid {first.pid}" in lock.read_text(), WAIT,
               "the lock file re-taken\n" + rig.daemon_log()[-2000:])
    assert "journal_lock_file_replaced" in rig.daemon_log()
    mirror.run(events[4:10])
    wait_caught_up(rig, mirror)
    found = read_journal(journal_file(rig))
    assert not found.damaged
    jseqs = [r["jseq"] for r in found.records]
    assert jseqs == list(range(1, len(jseqs) + 1))  # one writer: no duplicate jseq


# ------------------------------------------------------------------ issue 21 item 1


@pytest.mark.parametrize("what", ["file", "directory"])
def test_issue21_item1_journal_deleted_while_running_is_noticed_and_begun_again(
    rig: TableRig, what: str
) -> None:
    """After ``rm -rf`` of the journal directory the daemon kept writing to the deleted
    file: status online, no alert, no log line; at restart hand numbers began at 1."""
    sub = subscribe(rig.broker.port)
    mirror = Mirror(rig)
    first = hand_events(deal_random([1, 2, 3], random.Random(3), fold_chance=0.0))
    second = hand_events(deal_random([2, 4], random.Random(4), fold_chance=0.0))
    rig.start_process()
    wait_status(sub, "online")
    mirror.run(first[:8])
    wait_caught_up(rig, mirror)
    path = journal_file(rig)
    if what == "file":
        path.unlink()
    else:
        shutil.rmtree(path.parent)
    (alert,) = sub.wait_for(lambda m: m.topic == f"{ROOT}/alerts"
                            and m.json()["code"] == "journal_missing")
    assert ("directory was removed" if what == "directory" else "file was deleted") in (
        alert.json()["message"])
    status = wait_status(sub, "degraded")
    assert "a new journal file was begun" in status["reason"]
    assert "journal_file_lost" in rig.daemon_log()
    # The new file holds the hand in progress: the journal accounts for the table.
    wait_caught_up(rig, mirror)
    mirror.run(first[8:])
    wait_until(lambda: [p["hand"] for p in payloads(sub, "events")
                        if p["kind"] == "hand_result"] == [1], WAIT * 2, "hand 1's result")
    time.sleep(0.7)  # the dealer shuffles
    mirror.run(second[:6])
    wait_caught_up(rig, mirror)
    wait_status(sub, "online")  # the next hand clears the note
    # A restart finds the new file whole and the hand where it was.
    rig.kill9()
    restart_and_wait_ready(rig, sub)
    state = wait_state(sub, lambda s: s["hand"] == 2 and cards_shown(s) == seated(
        [e for e in second[:6] if isinstance(e, CardPlaced)]))
    assert state["hand"] == 2  # never 1 again
    found = read_journal(path)
    assert not found.damaged
    assert (path.parent / f"{TABLE}.hands").exists()
    seqs = [m.json()["seq"] for m in sub.snapshot()
            if not (m.topic == f"{ROOT}/status" and m.json()["status"] == "lost")
            and not m.topic.endswith("/stats")]
    assert seqs == sorted(seqs)
