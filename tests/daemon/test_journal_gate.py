"""journal_gate (issue 21): pure decisions on what the daemon saw of its journal."""

from __future__ import annotations

import dataclasses

import pytest

from table_controller.daemon.journal_gate import HAND_CLOCK_EPOCH, StartEvidence, start_finding
from table_controller.records.journal import FileCheck, running_finding

NOW = HAND_CLOCK_EPOCH + 5_000_000.0


def evidence(**changes: object) -> StartEvidence:
    base = StartEvidence(live_exists=True, live_records=40, live_damaged=False,
                         ran_before=True, archived=False, journal_last_hand=2,
                         hand_floor_next=3)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_whole_journal_loses_nothing_and_counts_on() -> None:
    assert start_finding(evidence(), NOW) == start_finding(evidence(), NOW)
    finding = start_finding(evidence(), NOW)
    assert finding.lost is None
    assert finding.last_hand == 2
    # A first start: nothing ran before, nothing lost, hands from 1.
    fresh = start_finding(evidence(live_exists=False, live_records=0, ran_before=False,
                                   journal_last_hand=0, hand_floor_next=None), NOW)
    assert (fresh.lost, fresh.last_hand, fresh.from_clock) == (None, 0, False)


@pytest.mark.parametrize(("changes", "words"), [
    ({"live_exists": False, "live_records": 0, "journal_last_hand": 0}, "missing"),
    ({"live_records": 0, "journal_last_hand": 0}, "empty"),  # item 2: 0 or 1 byte left
    ({"live_records": 3, "journal_last_hand": 1}, "hand 2 was started"),
    ({"archived": True, "live_records": 0, "journal_last_hand": 1}, "hand 2 was started"),
])
def test_issue21_item2_lost_records_are_found(changes: dict[str, object], words: str) -> None:
    finding = start_finding(evidence(**changes), NOW)
    assert finding.lost is not None
    assert words in finding.lost
    assert finding.last_hand == 2  # the hand file's floor: never backwards


def test_issue21_item4_no_record_of_the_numbers_left_counts_from_the_clock() -> None:
    finding = start_finding(evidence(live_exists=False, live_records=0, journal_last_hand=0,
                                     hand_floor_next=None), NOW)
    assert finding.lost is not None
    assert finding.from_clock
    assert finding.last_hand == 5_000_000
    # ... but a table that simply never dealt a hand counts from 1.
    idle = start_finding(evidence(live_records=1, journal_last_hand=0, hand_floor_next=None),
                         NOW)
    assert (idle.lost, idle.last_hand) == (None, 0)


def test_damage_is_reported_as_damage_not_again_as_missing() -> None:
    assert start_finding(evidence(live_damaged=True, live_records=0), NOW).lost is None


def test_issue21_item1_running_checks() -> None:
    assert running_finding(FileCheck(linked=True, at_path=True, directory=True)) is None
    assert "deleted" in str(running_finding(FileCheck(False, False, True)))
    assert "directory" in str(running_finding(FileCheck(False, False, False)))
    assert "replaced" in str(running_finding(FileCheck(True, False, True)))
