"""Is the journal still the table's whole story? Pure decisions on what the daemon saw.

Issue 21. The journal can lose records in ways that read back as a clean, short
journal: the file truncated to 0 or 1 byte, deleted with or without the hand
number file, deleted or replaced while the daemon runs. Each leaves traces
elsewhere: the sequence file (``<table>.seq``) exists once the table has run,
the hand number file (``<table>.hands``) holds the next hand number, written at
every hand start *after* its ``hand`` record was journaled, and the daemon's own
open file descriptor knows whether its file is still linked at its path.

This module only decides, from observations the daemon gathers (file checks are
its I/O, not ours): :func:`start_finding` says whether records were lost before
this start and what hand number comes next. (What is wrong with the file the
journal holds while it runs is the journal's own pure
:func:`~table_controller.records.journal.running_finding`.) No I/O, no clock: the
time for the hand-number clock floor is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

HAND_CLOCK_EPOCH: Final = 1_767_225_600
"""2026-01-01T00:00:00Z. When every record of the hand numbers is gone (journal,
rotated files and hand number file) but the table has run before, hand numbers go on
from the seconds since then: above every number a table counting 1, 2, 3 ... (or an
earlier floor of this kind) has used, unless it dealt more than one hand a second."""


@dataclass(frozen=True, slots=True)
class StartEvidence:
    """What the daemon found on disk at start.

    ``live_exists``: the live journal file exists; ``live_records``: its good
    records; ``live_damaged``: it was damaged (reported as such already);
    ``ran_before``: the sequence file exists (written from the first start on);
    ``archived``: rotated journal files exist; ``journal_last_hand``: the highest
    hand number the journal (live file, else the newest rotated one) names;
    ``hand_floor_next``: the next hand number per the hand number file (None:
    no such file).
    """

    live_exists: bool
    live_records: int
    live_damaged: bool
    ran_before: bool
    archived: bool
    journal_last_hand: int
    hand_floor_next: int | None


@dataclass(frozen=True, slots=True)
class StartFinding:
    """What :func:`start_finding` decided: ``lost`` (None: nothing lost) is the one
    line the log, the ``journal_missing`` alert and ``status`` say; ``last_hand`` is the
    highest hand number to count on from; ``from_clock`` that it is the clock floor."""

    lost: str | None
    last_hand: int
    from_clock: bool = False


def start_finding(evidence: StartEvidence, now: float) -> StartFinding:
    """Decide whether the journal lost records before this start, and the hand floor."""
    e = evidence
    floor_last = e.hand_floor_next - 1 if e.hand_floor_next is not None else 0
    last_hand = max(e.journal_last_hand, floor_last)
    lost: str | None = None
    if not e.live_damaged:
        if e.ran_before and not e.archived and not e.live_exists:
            lost = "journal file was missing at start"
        elif e.ran_before and not e.archived and e.live_records == 0:
            # A crash never empties a journal: its first record (the table line) was
            # fsynced before anything else. Truncated to 0 or 1 byte, or emptied.
            lost = "journal file was empty at start (truncated?)"
        elif floor_last > e.journal_last_hand:
            # The hand file is written only after the hand record was journaled.
            named = f"hand {e.journal_last_hand} at most" if e.journal_last_hand else "no hand"
            lost = (f"journal lost its records: hand {floor_last} was started but the"
                    f" journal names {named}")
    from_clock = False
    if lost is not None and e.hand_floor_next is None and e.journal_last_hand == 0:
        # Every record of the numbers is gone with the journal: counting from 1
        # again would reuse numbers (the archive keeps one hand per number).
        last_hand = max(last_hand, int(now) - HAND_CLOCK_EPOCH)
        from_clock = True
    return StartFinding(lost, last_hand, from_clock)
