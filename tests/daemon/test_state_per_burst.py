"""A burst of reader input gets one state, not one per card (issue 20, the per-card cost).

While more table input waits in the daemon's inbox (``more_waiting``), the core
publishes each card's events as it applies them and owes the state; the state goes
out once the burst is over (the inbox's table lane empty), at the latest after
:data:`~table_controller.daemon.core.STATE_BURST` inputs, and before anything that
must see the table as it is (a console command: ``feed_held``). Without an inbox
(``more_waiting`` not given) every input is a burst of its own, as before.
"""

from __future__ import annotations

import random
from pathlib import Path

from table_controller.daemon.core import STATE_BURST, TableCore
from table_controller.daemon.equity_feed import EquityReady
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.equity.live import EquitySpot, compute_live
from table_controller.domain.events import CardPlaced, CardRemoved
from table_controller.records.journal import Journal
from table_controller.simulation.physical import deal_random
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout
from table_controller.table.presence import PresenceTracker
from table_controller.testing.core_rig import RecordingPublisher
from table_controller.testing.daemon_rig import DECK, LAYOUT


class Waiting:
    """The inbox's answer to ``more_waiting``, set by the test."""

    def __init__(self) -> None:
        self.more = False

    def __call__(self) -> bool:
        return self.more


class Spots:
    """An equity sink that remembers the spots submitted (the test computes them)."""

    def __init__(self) -> None:
        self.spots: list[EquitySpot | None] = []

    def submit(self, spot: EquitySpot | None) -> None:
        """Remember ``spot``."""
        self.spots.append(spot)


def make_core(tmp: Path, waiting: Waiting,
              sink: Spots | None = None) -> tuple[TableCore, RecordingPublisher]:
    layout = load_layout(LAYOUT)
    registry = load_decks([DECK])
    recorder = RecordingPublisher()
    core = TableCore(
        table_id="t1", settings=TableSettings(seats=layout.seats, auto_hands=True),
        layout=layout, presence=PresenceTracker(layout, registry, 0.3),
        journal=Journal.open(tmp / "t.journal.jsonl", fsync="never"),
        publisher=recorder, registry=registry, equity=sink,
        wall_clock=lambda: 1.7e9, mono_clock=lambda: 100.0, more_waiting=waiting,
    )
    return core, recorder


def first_round(seats: int = 8) -> list[CardPlaced | CardRemoved]:
    """A hand's first cards, dealt to every seat in turn (none is held by the arrival
    order: each is the card the dealer is expected to deal)."""
    deal = deal_random(range(1, seats + 1), random.Random(3), fold_chance=0.0)
    return [e for e in deal.events if isinstance(e, CardPlaced | CardRemoved)]


def count(recorder: RecordingPublisher, topic: str) -> int:
    return sum(1 for name, _ in recorder.messages if name == topic)


def test_a_burst_publishes_each_event_and_one_state_at_its_end(tmp_path: Path) -> None:
    """Three cards while more input waits: three events, no state; the state follows
    when the burst ends, and shows all three cards."""
    waiting = Waiting()
    core, recorder = make_core(tmp_path, waiting)
    events = first_round()
    waiting.more = True
    for event in events[:3]:
        core.feed([event])
    dealt = count(recorder, "secure/events")
    assert dealt >= 3  # hand_started and the three cards
    assert count(recorder, "state") == 0
    waiting.more = False
    core.tick()  # the loop's next step with the table lane empty
    assert count(recorder, "state") == 1
    assert count(recorder, "secure/state") == 1
    state = [p for name, p in recorder.messages if name == "secure/state"][-1]
    assert sum(len(seat["down"]) for seat in state["seats"]) == 3
    # The events all came before it.
    names = [name for name, _ in recorder.messages]
    assert names.index("state") > max(i for i, n in enumerate(names) if n == "secure/events")


def test_a_long_burst_still_shows_the_table_every_state_burst_inputs(tmp_path: Path) -> None:
    """Input that never stops waiting gets a state after every STATE_BURST cards."""
    waiting = Waiting()
    core, recorder = make_core(tmp_path, waiting)
    waiting.more = True
    events = first_round()
    assert len(events) >= STATE_BURST
    for event in events[:STATE_BURST]:
        core.feed([event])
    assert count(recorder, "state") == 1


def test_the_owed_state_goes_out_before_a_console_command_is_carried_out(
    tmp_path: Path,
) -> None:
    """``feed_held`` (what a console command and the stop call first) pays the state
    owed, so a reply never comes before the state of the cards read before it."""
    waiting = Waiting()
    core, recorder = make_core(tmp_path, waiting)
    waiting.more = True
    core.feed([first_round()[0]])
    assert count(recorder, "state") == 0
    core.feed_held()
    assert count(recorder, "state") == 1
    core.feed_held()  # nothing owed: nothing published again
    assert count(recorder, "state") == 1


def test_without_an_inbox_every_card_gets_its_state(tmp_path: Path) -> None:
    """The core alone (tests, tools): one state per input that changed the table."""
    core, recorder = make_core(tmp_path, Waiting())
    for event in first_round()[:3]:
        core.feed([event])
    assert count(recorder, "state") == 3


def test_an_equity_of_the_last_published_spot_is_stale_once_a_burst_moved_the_hand(
    tmp_path: Path,
) -> None:
    """Equity is never shown beside cards of another position (docs/equity.md): an
    equity that arrives mid-burst for the spot last published, after a card of the
    burst moved the hand on, is not published; the owed state goes out first."""
    waiting, sink = Waiting(), Spots()
    core, recorder = make_core(tmp_path, waiting, sink)
    events = iter(first_round())
    while not any(spot is not None for spot in sink.spots):
        core.feed([next(events)])
    old = next(spot for spot in sink.spots if spot is not None)
    waiting.more = True
    states = count(recorder, "state")
    core.feed([next(events)])  # a 4th-street card: the hand is at another spot
    assert count(recorder, "state") == states  # owed
    core.handle(EquityReady(compute_live(old)))
    assert recorder.equity_updates == []
    assert count(recorder, "state") == states + 1  # the owed state, before the verdict
    assert sink.spots[-1] != old
