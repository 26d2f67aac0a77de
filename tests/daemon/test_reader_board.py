"""The reader board alone (daemon/reader_board.py): no broker, no thread, no clock."""

from __future__ import annotations

from firmware_bridge.link import ConnectionState, LinkProblem, LinkStats
from firmware_bridge.messages import Heartbeat, ReaderFault, TagArrived
from table_controller.daemon.reader_board import ReaderBoard, reader_down, shown_state
from table_controller.domain.engine.alerts import AlertCode
from table_controller.table.layout import load_layout
from table_controller.testing.daemon_rig import LAYOUT

LAYOUT_8 = load_layout(LAYOUT)
MISSING = LinkStats(problem=LinkProblem.PORT_MISSING, problem_detail="no such file")


def board() -> ReaderBoard:
    return ReaderBoard("t1", LAYOUT_8)


def test_an_outage_is_alerted_once_whatever_the_retries() -> None:
    readers = board()
    assert readers.state_change(3, ConnectionState.CONNECTING, LinkStats()).lost is None
    lost = readers.state_change(3, ConnectionState.CONNECTING, MISSING).lost
    assert lost is not None
    assert lost.code is AlertCode.READER_OFFLINE
    assert "its port does not exist" in lost.message
    for state in (ConnectionState.DISCONNECTED, ConnectionState.CONNECTING,
                  ConnectionState.DISCONNECTED):
        verdict = readers.state_change(3, state, MISSING)
        assert verdict.lost is None
        assert not verdict.online
    back = readers.state_change(3, ConnectionState.ONLINE, LinkStats())
    assert back.online
    assert back.back
    # Online at start is no "back".
    assert not readers.state_change(1, ConnectionState.ONLINE, LinkStats()).back


def test_a_wrong_reader_is_its_own_alert() -> None:
    stats = LinkStats(problem=LinkProblem.WRONG_READER, problem_detail="reader 9 answered")
    lost = board().state_change(2, ConnectionState.WRONG_READER, stats).lost
    assert lost is not None
    assert lost.code is AlertCode.WRONG_READER
    assert "wrong USB port" in lost.message


def test_the_status_is_returned_only_when_what_it_shows_changes() -> None:
    readers = board()
    first = readers.status(3, hand=None, wall=1000.0, mono=10.0)
    assert first is not None
    assert first.state == "connecting"
    assert readers.status(3, hand=None, wall=1005.0, mono=15.0) is None  # a refresh: no news
    assert readers.status(3, hand=4, wall=1005.0, mono=15.0, force=True) is not None
    readers.state_change(3, ConnectionState.DISCONNECTED, MISSING)
    offline = readers.status(3, hand=None, wall=1006.0, mono=16.0)
    assert offline is not None
    assert offline.state == "offline"
    assert offline.reason == "port_missing"
    readers.state_change(3, ConnectionState.DISCONNECTED, MISSING)  # a retry, same cause
    assert readers.status(3, hand=None, wall=1007.0, mono=17.0) is None


def test_the_last_heartbeat_is_shown_in_wall_time() -> None:
    readers = board()
    readers.state_change(1, ConnectionState.ONLINE, LinkStats(last_heartbeat=8.0))
    status = readers.status(1, hand=None, wall=1000.0, mono=10.0)
    assert status is not None
    assert status.last_heartbeat == 998.0


def test_figures_count_tags_per_antenna_and_never_name_one() -> None:
    readers = board()
    readers.state_change(1, ConnectionState.ONLINE, LinkStats())
    readers.feed(1, Heartbeat(0, 0), 1.0)
    readers.feed(1, TagArrived(0, "04A1B2C3D4E5F6"), 1.5)
    figures = readers.stats(1, 2.0)
    assert figures.state == "online"
    by_port = {a.port: a for a in figures.antennas}
    assert by_port[0].tags == 1
    assert "04A1B2C3D4E5F6" not in figures.model_dump_json()


def test_a_fault_names_the_zone_and_seat() -> None:
    readers = board()
    alert = readers.fault_alert(1, ReaderFault(2, 0, "antenna open circuit"))
    assert alert.code is AlertCode.READER_FAULT
    zone = LAYOUT_8.zone_for(1, 0)
    assert zone is not None
    assert zone.name in alert.message
    assert alert.seat == zone.seat
    whole = readers.fault_alert(1, ReaderFault(2, None, ""))
    assert "the reader itself: no details" in whole.message


def test_the_refresh_comes_once_per_period() -> None:
    readers = board()
    assert readers.refresh_due(0.0)
    assert not readers.refresh_due(4.9)
    assert readers.refresh_due(5.0)


def test_shown_state_and_down() -> None:
    assert shown_state(ConnectionState.DISCONNECTED, LinkStats()) == "offline"
    wrong = LinkStats(problem=LinkProblem.WRONG_READER)
    assert shown_state(ConnectionState.HANDSHAKE, wrong) == "wrong_reader"
    assert reader_down(ConnectionState.HANDSHAKE, LinkStats(problem=LinkProblem.NO_HELLO))
    assert not reader_down(ConnectionState.HANDSHAKE, LinkStats())
    assert reader_down(ConnectionState.STALE, LinkStats())
