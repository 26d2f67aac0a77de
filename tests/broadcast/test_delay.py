"""The pure delay line and reveal filter, with a clock the test controls (issue 12)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.broadcast.delay import (
    EQUITY_SEAT_FIELDS,
    SECRET_SEAT_FIELDS,
    DelayError,
    DelayLine,
    Reveal,
    filter_event,
    filter_message,
    filter_state,
    shown_seats,
)

# One step of a run: ("push", dt) a message produced dt seconds after the previous
# one (negative: the table's clock stepped back), ("delay", D), ("offset", ms),
# ("tick", dt) the clock moves on.
steps = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.floats(-5.0, 30.0)),
        st.tuples(st.just("delay"), st.floats(0.0, 3600.0)),
        st.tuples(st.just("offset"), st.integers(0, 5000)),
        st.tuples(st.just("tick"), st.floats(0.0, 900.0)),
    ),
    max_size=120,
)


@settings(max_examples=300)
@given(steps, st.floats(0.0, 3600.0))
def test_nothing_early_nothing_lost_nothing_twice(run: list[tuple[str, float]],
                                                  first_delay: float) -> None:
    """Every release is at or after ts + D + offset *for the D in force then*, in log
    order, each message once; after the clock passes every due time all are out.

    This covers delay changes: lengthening holds back what is pending, shortening
    releases nothing produced less than the new D ago."""
    line = DelayLine(delay_s=first_delay)
    now = 1_000_000.0
    produced = now
    ts_of: dict[int, float] = {}
    released: list[int] = []
    seq = 0
    for op, value in run:
        if op == "push":
            produced += value
            seq += 1
            ts_of[seq] = produced
            line.push(seq, produced)
        elif op == "delay":
            line.set_delay(value)
        elif op == "offset":
            line.set_offset(int(value))
        else:
            now += value
        out = line.release(now)
        for s in out:
            assert ts_of[s] + line.delay_s + line.offset_ms / 1000 <= now, "released early"
        released.extend(out)
    assert released == list(range(1, len(released) + 1)), "out of order, gap or repeat"
    assert line.released == (released[-1] if released else 0)
    due = line.next_due()
    if due is not None:
        assert due > now
        released.extend(line.release(max(ts_of.values()) + line.delay_s + 61.0 + 1e-6))
    assert released == list(range(1, seq + 1)), "a message was lost"
    assert line.backlog == 0


@given(st.lists(st.floats(0.0, 50.0), min_size=1, max_size=50), st.integers(0, 50))
def test_restart_releases_nothing_twice(gaps: list[float], cut: int) -> None:
    """A line rebuilt after a restart from its persisted cursor skips what it released."""
    ts = [sum(gaps[: i + 1]) for i in range(len(gaps))]
    cut = min(cut, len(ts))
    line = DelayLine(delay_s=10.0, released=cut)
    for i, t in enumerate(ts, start=1):
        line.push(i, t)  # the store replays the whole log
    assert line.release(10**9) == list(range(cut + 1, len(ts) + 1))


def test_shortening_releases_only_what_is_older_than_new_delay() -> None:
    """Rule of issue 12: 60 s -> 20 s at t=30 releases what was produced up to t=10."""
    line = DelayLine(delay_s=60.0)
    for i, t in enumerate([0.0, 5.0, 10.0, 15.0, 25.0], start=1):
        line.push(i, t)
    assert line.release(30.0) == []
    line.set_delay(20.0)
    assert line.release(30.0) == [1, 2, 3]
    line.set_delay(3600.0)  # lengthening: held back again
    assert line.release(100.0) == []
    assert line.released == 3


def test_board_sync_offset_adds_to_the_delay() -> None:
    """The offset is extra milliseconds on top of D."""
    line = DelayLine(delay_s=1.0, offset_ms=250)
    line.push(1, 0.0)
    assert line.release(1.2) == []
    assert line.release(1.25) == [1]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), 86_401.0])
def test_bad_delay_is_refused(bad: float) -> None:
    """A delay out of range is a clear error, never a silent clamp."""
    with pytest.raises(DelayError, match="delay"):
        DelayLine(delay_s=bad)
    with pytest.raises(DelayError, match="offset"):
        DelayLine(offset_ms=-5)


# --------------------------------------------------------------------------- reveal

RANKS = "23456789TJQKA"
DECK = [r + s for r in RANKS for s in "cdhs"]


@st.composite
def secure_states(draw: st.DrawFn) -> dict[str, Any]:
    """A secure state with random seats, down cards and equity fields."""
    cards = iter(draw(st.permutations(DECK)))
    seats = []
    for no in range(1, 9):
        status = draw(st.sampled_from(["active", "folded", "empty"]))
        n_down = 0 if status == "empty" else draw(st.integers(0, 3))
        down = [next(cards) for _ in range(n_down)]
        row: dict[str, Any] = {
            "seat": no, "status": status, "up": [next(cards)] if n_down else [],
            "down_count": n_down, "down": down, "stack": 100, "bet": None,
        }
        if draw(st.booleans()) and status == "active":
            row.update(equity=0.5, win=0.4, tie=0.1, stderr=None, outs=None,
                       reading="pair of nines")
        seats.append(row)
    return {"table": "t1", "hand": 1, "seq": 5, "ts": 1.0, "seats": seats,
            "equity_info": {"method": "exact"}}


@settings(max_examples=200)
@given(secure_states(), st.sampled_from(list(Reveal)),
       st.one_of(st.none(), st.frozensets(st.integers(1, 8))))
def test_reveal_filter_shows_only_what_the_mode_allows(
    state: dict[str, Any], mode: Reveal, shown: frozenset[int] | None
) -> None:
    """No down card of a hidden seat; no equity while any live hand is hidden."""
    out = filter_state(state, mode, shown)
    by_seat = {row["seat"]: row for row in out["seats"]}
    hidden_live = False
    for row in state["seats"]:
        seat = row["seat"]
        revealed = mode is Reveal.ALL or (
            mode in (Reveal.SHOWDOWN, Reveal.SHOWDOWN_EARLY) and shown is not None
            and seat in shown)
        got = by_seat[seat]
        assert got["up"] == row["up"]
        assert got["down_count"] == row["down_count"]
        if revealed:
            assert got.get("down") == row["down"]
        else:
            assert not any(key in got for key in SECRET_SEAT_FIELDS)
            hidden_live = hidden_live or (row["status"] == "active" and bool(row["down"]))
    if hidden_live:
        assert not any(key in got for got in out["seats"] for key in EQUITY_SEAT_FIELDS)
        assert "equity_info" not in out
    if mode is Reveal.NEVER:
        secret = {card for row in state["seats"] for card in row["down"]}
        assert not any(set(got.get("down", [])) & secret for got in out["seats"])


def test_showdown_mode_reveals_the_hands_of_a_known_result() -> None:
    """Mode showdown: seats in the result's shown list from the deal on, others never."""
    result = {"kind": "hand_result", "winners": [2],
              "shown": [{"seat": 2, "cards": [], "description": "x"},
                        {"seat": 3, "cards": [], "description": "y"}]}
    shown = shown_seats(result)
    assert shown == {2, 3}
    for seat, visible in [(1, False), (2, True), (3, True)]:
        event = {"kind": "card_dealt_down", "seat": seat, "card": "Ah"}
        assert ("card" in filter_event(event, Reveal.SHOWDOWN, shown)) is visible
        assert "card" not in filter_event(event, Reveal.SHOWDOWN, None)  # not known yet
        assert "card" not in filter_event(event, Reveal.NEVER, shown)
    burn = {"kind": "card_burned", "card": "2c"}
    assert "card" not in filter_event(burn, Reveal.SHOWDOWN, shown)
    assert filter_event(burn, Reveal.ALL, None)["card"] == "2c"


def test_alerts_and_notices_never_reach_a_delayed_output() -> None:
    """Only state and events pass; production-room kinds are dropped."""
    assert filter_message("notice", {"code": "beaten_on_board"}, Reveal.ALL, None) is None
    assert filter_message("alert", {"code": "x"}, Reveal.ALL, None) is None
