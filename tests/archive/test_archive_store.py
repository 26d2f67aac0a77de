"""The archive store on a real SQLite file and a real PostgreSQL server (every test runs
on both): schema and migration, idempotent writes, down cards kept only by a secure
archive, alerts merged in any arrival order, and the query API the floor uses."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
import sqlalchemy as sa
from feed import alert_message, change_message, hand_record
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.archive.store import (
    SCHEMA_VERSION,
    ArchiveStore,
    Item,
    RecordError,
    SchemaError,
    WriteResult,
    parse_item,
)

NOW = 1_800_000_000.0


def hand(store: ArchiveStore, record: dict[str, Any]) -> Item:
    return parse_item("hand", record["table"], record, secure=store.secure, now=NOW)


def alert(payload: dict[str, Any]) -> Item:
    return parse_item("alert", payload["table"], payload, secure=False, now=NOW)


def change(payload: dict[str, Any]) -> Item:
    return parse_item("change", payload["table"], payload, secure=False, now=NOW)


def test_schema_created_at_version_and_reopened_unchanged(db_url: str) -> None:
    first = ArchiveStore(db_url)
    first.write([hand(first, hand_record("t1", 1))])
    first.close()
    again = ArchiveStore(db_url)  # opening again migrates nothing and keeps the rows
    assert again.schema_version() == SCHEMA_VERSION
    assert again.migrate() == SCHEMA_VERSION
    assert again.counts()["hands"] == 1
    again.close()


def test_a_newer_schema_is_refused(store: ArchiveStore, db_url: str) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE schema_version SET version = 99"))
    with pytest.raises(SchemaError, match="version 99, newer"):
        ArchiveStore(db_url)


def test_a_foreign_hands_table_is_refused(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE hands (x INTEGER)"))
    engine.dispose()
    with pytest.raises(SchemaError, match="not an archive of this program"):
        ArchiveStore(db_url)


def test_a_hand_delivered_twice_is_stored_once(store: ArchiveStore) -> None:
    record = hand_record("t1", 7, alerts=[{"id": "t1:70", "code": "missing_burn",
                                            "severity": "error"}],
                         notices=[{"code": "community_card", "message": "rule 15"}])
    first = store.write([hand(store, record)])
    # Redelivered (QoS 1), replayed, and once more inside a batch with a new hand.
    second = store.write([hand(store, record)])
    third = store.write([hand(store, record), hand(store, hand_record("t1", 8))])
    assert (first.hands, first.duplicates) == (1, 0)
    assert (second.hands, second.duplicates) == (0, 1)
    assert (third.hands, third.duplicates) == (1, 1)
    assert store.counts() == {"hands": 2, "hand_players": 6, "alerts": 1, "notices": 1}
    # The same new hand twice in one batch (two deliveries queued together).
    twice = hand(store, hand_record("t1", 9))
    assert store.write([twice, twice]) == WriteResult(hands=1, duplicates=1)
    assert store.counts()["hand_players"] == 9


def test_full_record_returned_for_export(store: ArchiveStore) -> None:
    record = hand_record("t1", 3, ended="showdown")
    store.write([hand(store, record)])
    assert store.hand(record["hand_id"]) == record
    assert store.hand("t1:404:0") is None


@pytest.mark.parametrize("secure", [False, True])
def test_down_cards_kept_only_by_a_secure_archive(db_url: str, secure: bool) -> None:
    store = ArchiveStore(db_url, secure=secure)
    # Even a record carrying down cards (a misrouted secure one) loses them in public.
    record = hand_record("t1", 1, secure=True, ended="fold")
    store.write([hand(store, record)])
    kept = store.hand(record["hand_id"])
    assert kept is not None
    assert kept["down_cards"] == (record["down_cards"] if secure else None)
    with store.engine.connect() as conn:
        raw = conn.execute(sa.text("SELECT record FROM hands")).scalar_one()
    text = raw if isinstance(raw, str) else json.dumps(raw)
    assert ('"9c"' in text) is secure  # seat 1's folded hole card: nowhere in public
    store.close()


ORDERINGS = list(itertools.permutations(["hand", "alert", "ack", "resolve"]))


def test_alert_rows_merge_in_any_order(store: ArchiveStore) -> None:
    """However the alert, its hand and its changes arrive (several instances, QoS 1
    redelivery), the row ends the same: what the alert says, acknowledged by the first
    acknowledgement, resolved with the note, state resolved. Every one of the 24
    orders, each followed by redeliveries of some of its messages."""
    for n, order in enumerate(ORDERINGS):
        seq = 1000 + 10 * n
        alert_id = f"t9:{seq}"
        messages = {
            "hand": hand(store, hand_record("t9", seq, alerts=[{
                "id": alert_id, "code": "missing_burn", "severity": "error"}])),
            "alert": alert(alert_message("t9", seq, hand=seq, ts=NOW + 5)),
            "ack": change(change_message("t9", alert_id, "acknowledged", seq=seq + 1,
                                         ts=NOW + 10, by="Sam")),
            "resolve": change(change_message("t9", alert_id, "resolved", seq=seq + 2,
                                             ts=NOW + 20, by="Kim", note="misdeal called")),
        }
        redelivered = [order[i % 4] for i in range(n % 3, n % 3 + n % 4)]
        for name in [*order, *redelivered]:
            store.write([messages[name]])
        [row] = [a for a in store.search_alerts(table="t9", limit=10_000)
                 if a["id"] == alert_id]
        assert row["state"] == "resolved", order
        assert (row["code"], row["severity"], row["message"]) == (
            "missing_burn", "error", "no burn card before 4th street"), order
        assert (row["acknowledged_by"], row["acknowledged_ts"]) == ("Sam", NOW + 10), order
        assert (row["resolved_by"], row["resolved_note"]) == ("Kim", "misdeal called"), order
        assert row["raised_ts"] == NOW + 5, order  # the alert's own time, not its hand's end
        assert row["dealer"] == {"id": "D17", "name": "Ann"}, order
    assert store.counts()["alerts"] == len(ORDERINGS)


def test_acknowledged_never_goes_back_from_resolved(store: ArchiveStore) -> None:
    store.write([alert(alert_message("t1", 5))])
    store.write([change(change_message("t1", "t1:5", "resolved", seq=7, ts=NOW, note="ok"))])
    store.write([change(change_message("t1", "t1:5", "acknowledged", seq=6, ts=NOW - 1))])
    [row] = store.search_alerts()
    assert row["state"] == "resolved"
    assert row["acknowledged_by"] == "Sam"  # late, but still who acknowledged


def _room(store: ArchiveStore) -> None:
    """Two tables, two dealers and one hand without a dealer, over two hours."""
    ann, bob = {"id": "D17", "name": "Ann"}, {"id": "D22", "name": "Bob"}
    items = []
    for n in range(1, 11):  # table t1, Ann: hands 1-10, 120 s apart from NOW+120
        items.append(hand(store, hand_record("t1", n, start=NOW, dealer=ann)))
    for n in range(1, 6):  # table t2, Bob
        items.append(hand(store, hand_record("t2", n, start=NOW, dealer=bob)))
    record = hand_record("t2", 6, start=NOW)
    record["dealer"] = None
    items.append(hand(store, record))
    items += [alert(alert_message("t1", 100 + i, ts=NOW + 300 + i, dealer=ann))
              for i in range(3)]
    items.append(alert(alert_message("t2", 200, ts=NOW + 400, code="too_many_cards",
                                     severity="critical", dealer=bob)))
    items.append(alert(alert_message("t2", 300, ts=NOW + 7300, dealer=bob)))  # after shift
    store.write(items)


def test_search_hands_filters_and_order(store: ArchiveStore) -> None:
    _room(store)
    every = store.search_hands()
    assert len(every) == 16
    assert [h["ended_ts"] for h in every] == sorted((h["ended_ts"] for h in every),
                                                     reverse=True)
    assert {h["hand_id"] for h in store.search_hands(table="t2")} == {
        h["hand_id"] for h in every if h["table"] == "t2"}
    by_id, by_name = store.search_hands(dealer="D22"), store.search_hands(dealer="Bob")
    assert by_id == by_name
    assert len(by_id) == 5
    window = store.search_hands(since=NOW + 120 * 3 + 90, until=NOW + 120 * 5 + 90)
    assert sorted((h["table"], h["hand"]) for h in window) == [
        ("t1", 3), ("t1", 4), ("t2", 3), ("t2", 4)]
    assert len(store.search_hands(limit=3)) == 3
    first = store.search_hands(table="t1", limit=1)[0]
    assert first["players"] == [{"seat": 1, "name": "p1"}, {"seat": 4, "name": "p4"},
                                {"seat": 6, "name": "p6"}]
    assert (first["dealer"], first["pot"], first["winners"]) == (
        {"id": "D17", "name": "Ann"}, 120, [4])
    with pytest.raises(ValueError, match="limit"):
        store.search_hands(limit=0)


def test_search_alerts_filters(store: ArchiveStore) -> None:
    _room(store)
    assert len(store.search_alerts()) == 5
    assert [a["id"] for a in store.search_alerts(severity="critical")] == ["t2:200"]
    assert len(store.search_alerts(table="t1", code="missing_burn")) == 3
    assert len(store.search_alerts(dealer="Bob")) == 2
    assert len(store.search_alerts(since=NOW + 350, until=NOW + 7200)) == 1


def test_shift_report(store: ArchiveStore) -> None:
    _room(store)
    report = store.shift_report(NOW, NOW + 7200)  # a two-hour shift
    assert (report["hands"], report["alerts"], report["hours"]) == (16, 4, 2.0)
    assert report["hands_per_hour"] == 8.0
    assert report["errors_per_100_hands"] == {"missing_burn": 3 * 100 / 16,
                                              "too_many_cards": 100 / 16}
    t1, t2 = report["per_table"]["t1"], report["per_table"]["t2"]
    assert (t1["hands"], t1["alerts"], t1["hands_per_hour"]) == (10, 3, 5.0)
    assert t1["errors_per_100_hands"] == {"missing_burn": 30.0}
    assert (t2["hands"], t2["by_code"]) == (6, {"too_many_cards": 1})
    ann = report["per_dealer"]["D17"]
    assert (ann["name"], ann["hands"], ann["alerts"]) == ("Ann", 10, 3)
    # Ann dealt from NOW+120 to NOW+1290: 10 hands in 1170 s.
    assert ann["hands_per_hour"] == pytest.approx(10 / (1170 / 3600))
    assert report["per_dealer"]["-"]["hands"] == 1  # nobody signed in
    with pytest.raises(ValueError, match="after since"):
        store.shift_report(NOW, NOW)


def test_shift_report_counts_the_cards_entered_by_hand(store: ArchiveStore) -> None:
    """Issue 19: manual_card notices are the table's dead tags to replace."""
    manual = {"code": "manual_card", "message": "A card at seat 4 up was entered by hand"}
    other = {"code": "fold_unread", "message": "Seat 1 folded"}
    store.write([
        hand(store, hand_record("t1", 1, start=NOW, notices=[manual, other, manual])),
        hand(store, hand_record("t1", 2, start=NOW, notices=[other])),
        hand(store, hand_record("t2", 1, start=NOW, notices=[manual])),
        hand(store, hand_record("t3", 1, start=NOW)),
        hand(store, hand_record("t3", 90, start=NOW, notices=[manual])),  # after the shift
    ])
    report = store.shift_report(NOW, NOW + 3600)
    assert {t: e["manual_cards"] for t, e in report["per_table"].items()} == {
        "t1": 2, "t2": 1, "t3": 0}
    # Each hand's row says how many of its cards were entered by hand.
    assert {(h["table"], h["hand"]): h["manual_cards"] for h in store.search_hands()} == {
        ("t1", 1): 2, ("t1", 2): 0, ("t2", 1): 1, ("t3", 1): 0, ("t3", 90): 1}


def test_empty_shift_report(store: ArchiveStore) -> None:
    report = store.shift_report(NOW, NOW + 3600)
    assert (report["hands"], report["hands_per_hour"], report["per_table"]) == (0, 0.0, {})


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kind", "payload", "problem"), [
    ("hand", [], "not a JSON object"),
    ("hand", {"table": "t2", "hand_id": "t2:1:0", "ended_ts": 1.0}, "not the topic's table"),
    ("hand", {"table": "t1", "ended_ts": 1.0}, "hand_id must be a non-empty string"),
    ("hand", {"table": "t1", "hand_id": "t2:1:0", "ended_ts": 1.0}, "is not of table"),
    ("hand", {"table": "t1", "hand_id": "t1:1:0"}, "ended_ts must be a finite number"),
    ("hand", {"table": "t1", "hand_id": "t1:1:0", "ended_ts": float("nan")}, "finite"),
    ("hand", {"table": "t1", "hand_id": "t1:1:0", "ended_ts": 1, "players": [{"seat": 1},
                                                                            {"seat": 1}]},
     "a seat is listed twice"),
    ("hand", {"table": "t1", "hand_id": "t1:1:0", "ended_ts": 1, "dealer": "Ann"},
     "dealer must be an object"),
    ("alert", {"table": "t1", "ts": 1.0, "id": "t1:3"}, "code must be a non-empty string"),
    ("change", {"table": "t1", "id": "t1:3", "state": "open", "by": "x", "at_ts": 1},
     "state must be"),
    ("change", {"table": "t1", "id": "t1:3", "state": "resolved", "by": "x", "at_ts": 1},
     "note must be a non-empty string"),
])
def test_bad_messages_refused_with_the_reason(kind: Any, payload: Any, problem: str) -> None:
    with pytest.raises(RecordError, match=problem):
        parse_item(kind, "t1", payload, secure=False, now=NOW)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=6), max_leaves=20)
KEYS = st.sampled_from(["table", "hand_id", "ended_ts", "players", "dealer", "alerts",
                        "notices", "winners", "id", "code", "state", "by", "note", "at_ts",
                        "ts", "seq", "hand"])


@settings(max_examples=100)
@given(kind=st.sampled_from(["hand", "alert", "change"]),
       payload=st.dictionaries(KEYS, JSON, max_size=10) | JSON)
def test_any_json_is_an_item_or_a_record_error(kind: Any, payload: Any) -> None:
    """A hostile publisher's message never raises anything but RecordError."""
    if isinstance(payload, dict):
        payload = {"table": "t1", **payload} if "table" not in payload else payload
    try:
        item = parse_item(kind, "t1", payload, secure=False, now=time.time())
    except RecordError:
        return
    assert item.table == "t1"
