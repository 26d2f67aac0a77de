"""Issue 13: the live view's drawing (pure): every reader, why it is down, every
port with its zone, the figures, the last fault; the UIDs only here."""

from __future__ import annotations

from firmware_bridge.figures import FigureCounter
from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import Heartbeat, Hello, ReaderFault, TagArrived
from table_controller.table.layout import TableLayout
from table_controller.tools.readers_view import render

LAYOUT = TableLayout.model_validate({
    "name": "test", "seats": 2,
    "readers": [
        {"id": 1, "device": "/dev/r1",
         "antennas": {"0": "seat1.down", "1": "seat1.up", "2": "seat2.down", "3": "seat2.up"}},
        {"id": 10, "device": "/dev/r10", "antennas": {"0": "burn", "1": "muck", "2": "board"}},
    ],
})


def test_render_shows_figures_uids_faults_and_why_a_reader_is_down() -> None:
    seats = FigureCounter()
    seats.feed(Hello(1, (1, 4, 2), 5), 0.0)  # five ports: port 4 is not in the layout
    seats.feed(Heartbeat(100, 1), 9.0)
    seats.feed(TagArrived(1, "04A1B2C3"), 9.5)
    missing = LinkStats(problem=LinkProblem.PORT_MISSING, problem_detail="no such file /dev/r10")
    lines = render(
        LAYOUT,
        {1: (ConnectionState.ONLINE, LinkStats(frames_ok=12, crc_errors=2, frames_missed=1),
             seats.snapshot(10.0)),
         10: (ConnectionState.DISCONNECTED, missing, FigureCounter().snapshot(10.0))},
        faults={1: (ReaderFault(1, 3, "open circuit"), 4.0)},
        now=10.0,
    )
    text = "\n".join(lines)
    assert "reader 1: online   /dev/r1" in text
    assert "firmware 1.4.2   heartbeat 1.0 s ago   frames 12   errors: crc 2" in text
    assert "missed 1" in text
    assert "last fault 6 s ago: antenna 3: antenna open: open circuit" in text
    rows = {tuple(line.split()[:2]): line.split() for line in lines if line.startswith("  ")}
    assert rows[("1", "seat1.up")][2:] == ["1", "0.2", "0", "04A1B2C3"]
    assert rows[("4", "(unmapped)")][2:] == ["0", "0.0", "0"]
    assert ("reader 10: offline — port missing: no such file /dev/r10 — is the reader"
            " plugged in" in text)
    assert rows[("2", "board")][2:] == ["0", "0.0", "0"]  # never heard: nothing stale


def test_known_decks_show_cards_and_an_offline_readers_figures_are_stale() -> None:
    """Issue 23: with a deck known the view names the card a tag is (UIDs stay for
    tags of no known deck); a reader gone offline keeps its last figures, marked."""
    seats = FigureCounter()
    seats.feed(Hello(1, (1, 4, 2), 4), 0.0)
    seats.feed(TagArrived(0, "04A1B2C3"), 1.0)
    seats.feed(TagArrived(0, "04FFFFFF"), 1.0)
    dealer = FigureCounter()
    dealer.feed(Hello(10, (1, 4, 2), 3), 0.0)
    dealer.feed(TagArrived(1, "04000001"), 2.0)
    names = {"04A1B2C3": "Kd/red", "04000001": "7s/blue"}
    lost = LinkStats(problem=LinkProblem.PORT_LOST, problem_detail="EIO")
    lines = render(
        LAYOUT,
        {1: (ConnectionState.ONLINE, LinkStats(), seats.snapshot(3.0)),
         10: (ConnectionState.DISCONNECTED, lost, dealer.snapshot(3.0))},
        now=3.0, card_of=names.get,
    )
    rows = {tuple(line.split()[:2]): line.split() for line in lines if line.startswith("  ")}
    assert sorted(rows[("0", "seat1.down")][5:]) == ["04FFFFFF", "Kd/red"]  # unknown: UID
    assert "04A1B2C3" not in "\n".join(lines)
    assert rows[("1", "muck")][5:] == ["7s/blue", "(stale)"]
    assert rows[("0", "burn")][5:] == ["(stale)"]
    assert "  not online: the figures below are its last ones (stale)" in lines
    assert not any("(stale)" in row for row in rows[("1", "seat1.up")])
    header = next(line for line in lines if line.strip().startswith("port"))
    assert header.endswith("cards")


def test_the_broker_view_marks_an_offline_readers_figures_stale() -> None:
    """The same for the view from the daemon's topics: the retained stats of a reader
    now offline are marked, an online reader's are not."""
    from table_controller.mqtt.payloads import AntennaStats, ReaderStats, ReaderStatus
    from table_controller.tools.readers_remote import render_remote

    def status(reader: str, state: str) -> ReaderStatus:
        return ReaderStatus(table="t1", hand=None, seq=1, ts=100.0, reader=reader, state=state,
                            reason=None if state == "online" else "port_lost", detail="EIO",
                            last_heartbeat=99.0, frame_errors={}, zones=["burn"])

    def stats(reader: str) -> ReaderStats:
        return ReaderStats(table="t1", ts=90.0, reader=reader, state="online", firmware="1.0.0",
                           heartbeat_age=0.1, frame_errors={},
                           antennas=[AntennaStats(port=0, zone="burn", tags=3, reads_per_s=1.5,
                                                  dropouts=0)])

    lines = render_remote("t1", {"1": status("1", "online"), "10": status("10", "offline")},
                          {"1": stats("1"), "10": stats("10")}, now=100.0)
    text = "\n".join(lines)
    blocks = text.split("reader ")
    online = next(b for b in blocks if b.startswith("1:"))
    offline = next(b for b in blocks if b.startswith("10:"))
    assert "stale" not in online
    assert "not online: the figures below are its last ones (stale)" in offline
    assert offline.count("(stale)") == 2  # the note and the port row
