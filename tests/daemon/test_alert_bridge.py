"""The alert bridge alone (daemon/alert_bridge.py): alerts in, book entries and payloads out."""

from __future__ import annotations

from table_controller.daemon.alert_bridge import AlertBridge
from table_controller.daemon.floor import TABLE_ACTOR, AlertBook
from table_controller.domain.engine.alerts import AlertCode, alert_severity
from table_controller.domain.events import AlertAck, DealerChange
from table_controller.mqtt.payloads import AlertPayload


def alert(message: str = "card to an inactive seat", alert_id: str = "") -> AlertPayload:
    code = AlertCode.CARD_TO_INACTIVE_SEAT
    return AlertPayload(table="t1", hand=3, seq=0, ts=100.0, code=code,
                        severity=alert_severity(code), seat=2, street=3, rule=None,
                        message=message, id=alert_id)


def test_a_raised_alert_gets_its_id_and_the_dealer_on_duty() -> None:
    book = AlertBook()
    book.apply(DealerChange("d7", "Ann", at=0.0), 50.0)
    ids = iter(["t1:41", "t1:42"])
    bridge = AlertBridge("t1", book, lambda: next(ids))
    raised = bridge.raise_alert(alert(), raised_ts=123.0)
    assert raised.payload.id == "t1:41"
    assert raised.payload.dealer is not None
    assert raised.payload.dealer.id == "d7"
    assert raised.entry.id == "t1:41"
    assert raised.entry.raised_ts == 123.0
    assert bridge.keep(raised.entry) == []
    [listed] = bridge.open_alerts(hand=3).alerts
    assert listed.id == "t1:41"
    assert bridge.dealer(hand=3).dealer == raised.payload.dealer


def test_without_an_id_source_ids_count_on_from_the_book() -> None:
    bridge = AlertBridge("t1", AlertBook())
    first = bridge.raise_alert(alert(), 1.0)
    bridge.keep(first.entry)
    second = bridge.raise_alert(alert(), 2.0)
    assert first.entry.id != second.entry.id


def test_an_alert_published_elsewhere_is_adopted_unless_it_has_no_id() -> None:
    bridge = AlertBridge("t1", AlertBook())
    assert bridge.adopt(alert()) is None
    entry = bridge.adopt(alert(alert_id="t1:7"))
    assert entry is not None
    assert entry.id == "t1:7"


def test_the_bounded_open_set_asks_to_close_the_oldest() -> None:
    bridge = AlertBridge("t1", AlertBook(max_open=2))
    closings = []
    entries = []
    for n in range(3):
        entries.append(bridge.raise_alert(alert(f"a{n}"), float(n)).entry)
        closings.append(bridge.keep(entries[-1]))
    assert closings[:2] == [[], []]
    [closing] = closings[2]
    assert closing.alert == entries[0].id
    assert closing.by == TABLE_ACTOR


def test_a_change_becomes_its_payload() -> None:
    book = AlertBook()
    bridge = AlertBridge("t1", book, lambda: "t1:9")
    entry = bridge.raise_alert(alert(), 1.0).entry
    bridge.keep(entry)
    change = book.apply(AlertAck("t1:9", "floor", at=0.0), 5.0)
    assert change is not None
    payload = bridge.change(change, hand=3)
    assert (payload.id, payload.state, payload.by, payload.at_ts) == (
        "t1:9", "acknowledged", "floor", 5.0)
