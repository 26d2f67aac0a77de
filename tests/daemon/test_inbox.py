"""The engine thread's inbox alone (daemon/inbox.py): lanes, fairness, the shed policy."""

from __future__ import annotations

import threading

from table_controller.daemon.inbox import ANONYMOUS, Inbox


def test_the_table_lane_is_served_before_any_console_work() -> None:
    inbox: Inbox[str] = Inbox()
    assert inbox.offer("console-1", "ack 1")
    inbox.put("card 1")
    assert inbox.offer("console-1", "ack 2")
    inbox.put("card 2")
    assert [inbox.get(0) for _ in range(5)] == ["card 1", "card 2", "ack 1", "ack 2", None]


def test_without_console_only_the_table_lane_is_served() -> None:
    """What the loop asks while a timer is due: a card, or nothing (then the timer)."""
    inbox: Inbox[str] = Inbox()
    assert inbox.offer("console-1", "ack")
    inbox.put("card")
    assert inbox.get(0, console=False) == "card"
    assert inbox.get(0, console=False) is None
    assert inbox.table_waiting() == 0
    assert inbox.console_waiting() == 1
    assert inbox.get(0) == "ack"


def test_clients_take_turns() -> None:
    """One client's flood waits behind its own requests, not behind everyone's."""
    inbox: Inbox[str] = Inbox(per_client=8)
    for n in range(5):
        assert inbox.offer("flooder", f"flood {n}")
    assert inbox.offer("dealer", "act")
    served = [inbox.get(0) for _ in range(6)]
    assert served[:2] == ["flood 0", "act"]
    assert served[2:] == ["flood 1", "flood 2", "flood 3", "flood 4"]


def test_a_client_over_its_share_is_shed_and_counted_others_are_not() -> None:
    inbox: Inbox[str] = Inbox(per_client=3, total=5)
    assert [inbox.offer("flooder", f"f{n}") for n in range(5)] == [True, True, True,
                                                                   False, False]
    assert inbox.counters.commands_shed_client == 2
    assert inbox.offer("dealer", "act")  # another client still gets in
    assert inbox.offer(ANONYMOUS, "x")
    assert not inbox.offer("third", "y")  # the whole lane is full (5)
    assert inbox.counters.commands_shed_total == 1
    # The newest is refused; those waiting kept their place.
    assert [inbox.get(0) for _ in range(5)] == ["f0", "act", "x", "f1", "f2"]
    assert inbox.counters.console_peak == 5


def test_unbounded_console_work_is_never_shed() -> None:
    """A rebirth request: bounded upstream (one pending at most)."""
    inbox: Inbox[str] = Inbox(per_client=1, total=1)
    assert inbox.offer(ANONYMOUS, "ack")
    assert inbox.offer(ANONYMOUS, "rebirth", bounded=False)
    assert inbox.console_waiting() == 2


def test_a_waiting_get_wakes_for_an_item_from_another_thread() -> None:
    inbox: Inbox[str] = Inbox()
    got: list[str | None] = []
    taker = threading.Thread(target=lambda: got.append(inbox.get(30.0)))
    taker.start()
    inbox.put("card")
    taker.join(30.0)
    assert got == ["card"]


def test_nothing_waiting_returns_none_after_the_timeout() -> None:
    inbox: Inbox[str] = Inbox()
    assert inbox.get(0.01) is None
    assert inbox.counters.table_peak == 0
