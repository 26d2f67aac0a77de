"""The floor's pure core: the live view, the command checker, search and the shift report
(no broker, no clock). Hypothesis drives the view with arbitrary message sequences."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.floor import service as floor_service
from table_controller.floor.live import SEVERITY_RANK, LiveView, route, sort_key
from table_controller.floor.report import (
    MemoryArchive,
    Query,
    SearchError,
    hand_matches,
    shift_report,
)
from table_controller.floor.service import COMMANDS, CommandError, build_command
from table_controller.mqtt.console_commands import FLOOR_COMMANDS, parse_command
from table_controller.mqtt.console_commands import CommandError as ConsoleCommandError
from table_controller.records.ops import FLOOR_OPS

KINDS = ["status", "state", "alert", "alerts_open", "alert_change", "dealer", "reader", "hand"]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
ALERT = st.fixed_dictionaries({
    "id": st.sampled_from(["a", "b", "c", "d", "e"]),
    "code": st.sampled_from(["missing_burn", "too_many_cards", "illegal_bet"]),
    "severity": st.sampled_from([*SEVERITY_RANK, "bogus"]),
    "ts": st.floats(0, 1e10), "raised_ts": st.floats(0, 1e10) | st.none(),
    "state": st.sampled_from(["open", "acknowledged"]),
})
MESSAGE = st.tuples(st.sampled_from(["t1", "t2", "t3"]), st.sampled_from(KINDS),
                    st.one_of(
                        st.dictionaries(st.sampled_from(
                            ["id", "state", "alerts", "seats", "dealer", "reader", "hand",
                             "ts", "status", "game", "by"]), JSON, max_size=5),
                        ALERT,
                        st.fixed_dictionaries({"alerts": st.lists(ALERT | JSON, max_size=4)}),
                        st.fixed_dictionaries({"id": st.sampled_from(["a", "b", "c"]),
                                               "state": st.sampled_from(
                                                   ["acknowledged", "resolved", "x"]),
                                               "by": st.text(max_size=5)})))


@settings(max_examples=100)
@given(st.lists(MESSAGE, max_size=30))
def test_any_messages_never_raise_and_alerts_stay_sorted(messages: list[Any]) -> None:
    """Whatever the tables (or a hostile client) publish, the view folds it without an
    exception, and the open alerts are always most severe first, then oldest first."""
    view = LiveView()
    for table, kind, payload in messages:
        view.take(table, kind, payload)
        snap = view.snapshot()
        keys = [sort_key(a) for a in snap["alerts"]]
        assert keys == sorted(keys)
        ranks = [SEVERITY_RANK.get(a["severity"], 3) for a in snap["alerts"]]
        assert ranks == sorted(ranks)


def test_resolved_alert_is_not_brought_back_by_a_late_redelivery() -> None:
    """QoS 1 may deliver ``alerts`` again after the resolution: it stays resolved."""
    view = LiveView()
    alert = {"id": "t1:5", "code": "missing_burn", "severity": "error", "ts": 10.0}
    view.take("t1", "alert", alert)
    view.take("t1", "alert_change", {"id": "t1:5", "state": "resolved", "by": "M"})
    view.take("t1", "alert", alert)
    assert view.alerts() == []
    view.take("t1", "alerts_open", {"alerts": [{**alert, "raised_ts": 10.0}]})
    assert [a["id"] for a in view.alerts()] == ["t1:5"]  # the table's own set wins


def test_severity_then_age() -> None:
    """critical before error before warning; within one, the oldest first."""
    view = LiveView()
    for ident, severity, ts in (("w", "warning", 1.0), ("e2", "error", 30.0),
                                ("c", "critical", 50.0), ("e1", "error", 20.0)):
        view.take("t1", "alert", {"id": ident, "severity": severity, "ts": ts, "code": "x"})
    assert [a["id"] for a in view.alerts()] == ["c", "e1", "e2", "w"]


def test_route_never_takes_secure_topics() -> None:
    """The floor has no business with ``secure/``; it routes by the one topic parser."""
    assert route("stud/v1/t1/alerts/open") == ("t1", "alerts_open")
    assert route("stud/v1/t1/readers/r1") == ("t1", "reader")
    assert route("stud/v1/t1/state") == ("t1", "state")
    for topic in ("stud/v1/t1/secure/hands", "stud/v1/t1/secure/state",
                  "stud/v1/t1/events", "stud/v1/t1/readers/r1/stats", "stud/v1/t1/cmd/ack",
                  "stud/v1/t1/reply/x", "stud/v1/t+/state", "stud/v2/t1/state", "stud/v1/t1"):
        assert route(topic) is None, topic


def test_what_changed_since_is_the_tables_that_changed_latest_first() -> None:
    """A page is sent what changed after its last view (issue 25): each table once,
    at the version of its last change, and nothing for a version already seen."""
    view = LiveView()
    for table in ("t1", "t2", "t3"):
        view.take(table, "state", {"ts": 1.0})
    seen = view.version
    view.take("t2", "state", {"ts": 2.0})
    view.take("t1", "reader", {"ts": 2.0, "reader": "r1", "state": "online"})
    view.take("t2", "dealer", {"ts": 3.0, "dealer": {"id": "D1", "name": "Ann"}})
    assert view.changed_since(seen) == [("t2", seen + 3), ("t1", seen + 2)]
    assert view.changed_since(view.version) == []
    assert [t for t, _ in view.changed_since(0)] == ["t2", "t1", "t3"]
    assert view.alerts_changed_since(0) == []
    view.take("t3", "alert", {"id": "t3:1", "code": "x", "severity": "error", "ts": 4.0})
    view.take("t1", "alert", {"id": "t1:1", "code": "x", "severity": "critical", "ts": 5.0})
    assert view.alerts_changed_since(0) == [("t1", 2), ("t3", 1)]
    assert view.alerts_changed_since(1) == [("t1", 2)]
    assert [a["id"] for a in view.open_alerts("t1")] == ["t1:1"]
    assert view.open_alerts("nowhere") == []


@settings(max_examples=100)
@given(st.lists(MESSAGE, max_size=30), st.integers(0, 30))
def test_deltas_replayed_on_an_old_view_give_the_view_now(messages: list[Any],
                                                          cut: int) -> None:
    """A page holding the view at any point, given the cards changed since and the
    open alerts of the tables whose alerts changed since, holds the view now."""
    view = LiveView()
    for table, kind, payload in messages[:cut]:
        view.take(table, kind, payload)
    old = view.snapshot()
    version, alert_version = view.version, view.alert_version
    for table, kind, payload in messages[cut:]:
        view.take(table, kind, payload)
    cards = {t["table"]: t for t in old["tables"]}
    cards.update((t, view.tables[t].summary()) for t, _ in view.changed_since(version))
    open_by: dict[str, list[dict[str, Any]]] = {}
    for alert in old["alerts"]:
        open_by.setdefault(alert["table"], []).append(alert)
    open_by.update((t, view.open_alerts(t)) for t, _ in view.alerts_changed_since(
        alert_version))
    now = view.snapshot()
    assert [cards[t] for t in sorted(cards)] == now["tables"]
    assert sorted((a for v in open_by.values() for a in v), key=sort_key) == now["alerts"]


def test_build_command_sets_by_and_refuses_a_forged_one() -> None:
    """``by`` is the login's, never the page's."""
    assert build_command("ack", {"table": "t1", "alert": "t1:4"}, "Maria") == (
        "t1", {"alert": "t1:4", "by": "Maria"})
    with pytest.raises(CommandError, match="by is set by the dashboard"):
        build_command("ack", {"table": "t1", "alert": "t1:4", "by": "Eve"}, "Maria")


PAGE_TEXT = st.text(st.characters(codec="utf-8"), max_size=140) | st.sampled_from(
    ["t1:4", "D17", "D 17", "Ann Lee", " Ann ", "x" * 40, "x" * 41, "x" * 100, "x" * 101])


@settings(max_examples=300)
@given(name=st.sampled_from(COMMANDS), body=st.fixed_dictionaries(
    {"table": st.just("t1")},
    optional={"alert": PAGE_TEXT, "note": PAGE_TEXT, "id": PAGE_TEXT, "name": PAGE_TEXT,
              "action": st.sampled_from(["in", "out", "sideways"])}))
def test_the_floor_sends_exactly_what_the_table_takes(name: str, body: dict[str, Any]) -> None:
    """Issue 20: a page's command is built through the table's own parser, so a body the
    dashboard accepts is one the table accepts (no more 128-character alert ids, 64-
    character dealer names or two-word dealer ids that the table then refused), and
    what the dashboard refuses the table would have refused too."""
    with_by = {k: v for k, v in body.items() if k != "table"}
    if name != "dealer":
        with_by["by"] = "Maria"
    try:
        parsed = parse_command(name, json.dumps(with_by).encode(), seats=8)
    except ConsoleCommandError:
        parsed = None
    try:
        table, payload = build_command(name, body, "Maria")
    except CommandError:
        assert parsed is None, body
        return
    assert parsed is not None, body
    assert table == "t1"
    # What is sent is what the table journals, and the table takes it as it is.
    assert parse_command(name, json.dumps(payload).encode(), seats=8) == parsed


def test_the_floor_commands_are_the_registry_and_the_journal_ops() -> None:
    """One console-command registry (issue 20): the dashboard's commands are the
    registry's floor commands, which are the journal's floor ops, and the page's
    buttons send exactly those."""
    assert COMMANDS == FLOOR_COMMANDS == FLOOR_OPS
    script = (Path(floor_service.__file__).parent / "static" / "floor.js").read_text()
    assert set(re.findall(r'send\("(\w+)"', script)) == set(COMMANDS)


def hand(table: str, n: int, ended: float, dealer: str, codes: list[tuple[str, str]]
         ) -> dict[str, Any]:
    """A minimal public hand record."""
    return {"table": table, "hand_id": f"{table}:{n}:{int(ended)}", "ended_ts": ended,
            "dealer": {"id": dealer, "name": f"Name {dealer}"}, "players": [],
            "alerts": [{"id": f"{table}:{n}:{c}", "code": c, "severity": s} for c, s in codes]}


def test_shift_report_arithmetic() -> None:
    """Hands per hour, per-code rates, errors vs warnings per dealer and table (rule-free
    arithmetic over the records; the window is half-open)."""
    records = [hand("t1", 1, 3600 * 10 + 5, "D1", [("missing_burn", "error")]),
               hand("t1", 2, 3600 * 10 + 50, "D1", [("illegal_bet", "warning")]),
               hand("t2", 1, 3600 * 11 + 5, "D2", [("too_many_cards", "critical"),
                                                   ("missing_burn", "error")]),
               hand("t2", 2, 3600 * 12, "D2", [])]  # at `until`: outside
    report = shift_report(records, 3600 * 10, 3600 * 12)
    assert report["hands"] == 3
    assert report["errors"] == 3
    assert [h["hands"] for h in report["hours"]] == [2, 1]
    assert {c["code"]: (c["count"], c["per_100"]) for c in report["codes"]} == {
        "missing_burn": (2, 66.67), "illegal_bet": (1, 33.33), "too_many_cards": (1, 33.33)}
    assert {d["dealer"]: (d["hands"], d["errors"], d["warnings"], d["errors_per_100"])
            for d in report["dealers"]} == {"Name D1 (D1)": (2, 1, 1, 50.0),
                                            "Name D2 (D2)": (1, 2, 0, 200.0)}
    with pytest.raises(SearchError):
        shift_report(records, 10, 10)


def test_shift_report_lists_the_tags_to_replace() -> None:
    """Issue 19: cards entered by hand at the console are counted per table."""
    one, two = hand("t1", 1, 3600 * 10 + 5, "D1", []), hand("t2", 1, 3600 * 10 + 9, "D1", [])
    one["notices"] = [{"code": "manual_card", "message": "entered by hand"},
                      {"code": "fold_unread", "message": "folded"}]
    report = shift_report([one, two], 3600 * 10, 3600 * 11)
    assert {t["table"]: t["manual_cards"] for t in report["tables"]} == {"t1": 1, "t2": 0}
    assert all(d["manual_cards"] == 0 for d in report["dealers"])


@given(st.lists(st.tuples(st.sampled_from(["t1", "t2"]), st.floats(0, 20 * 3600),
                          st.sampled_from(["D1", "D2"]),
                          st.lists(st.sampled_from([("missing_burn", "error"),
                                                    ("illegal_bet", "warning")]),
                                   max_size=3)), max_size=40))
def test_report_counts_every_hand_in_the_window_once(rows: list[Any]) -> None:
    """Hours, dealers and tables each add up to the hands in the window."""
    records = [hand(t, i, e, d, c) for i, (t, e, d, c) in enumerate(rows)]
    report = shift_report(records, 3600.0, 15 * 3600.0)
    inside = [r for r in records if 3600 <= r["ended_ts"] < 15 * 3600]
    assert report["hands"] == len(inside)
    assert sum(h["hands"] for h in report["hours"]) == len(inside)
    assert sum(d["hands"] for d in report["dealers"]) == len(inside)
    assert sum(t["hands"] for t in report["tables"]) == len(inside)
    assert all(not math.isnan(d["errors_per_100"] or 0) for d in report["dealers"])


def test_query_and_memory_archive() -> None:
    """Query parsing refuses what it cannot use; the memory archive is bounded."""
    with pytest.raises(SearchError, match="since"):
        Query.from_params({"since": "yesterday"})
    with pytest.raises(SearchError, match="until is before since"):
        Query.from_params({"since": "20", "until": "10"})
    q = Query.from_params({"table": "t1", "dealer": "name d1", "code": "missing_burn"})
    record = hand("t1", 1, 5.0, "D1", [("missing_burn", "error")])
    assert hand_matches(record, q)
    assert not hand_matches(record, Query(code="illegal_bet"))
    memory = MemoryArchive(hands_kept=100)
    for n in range(150):
        memory.add_hand({**hand("t1", n, float(n), "D1", []), "down_cards": {"1": ["As"]}})
    rows = memory.search_hands(Query())
    assert len(rows) == 100
    assert rows[0]["hand_id"] == "t1:149:149"
    kept = memory.hand("t1:149:149")
    assert kept is not None
    assert "down_cards" not in kept


def test_tables_past_the_limit_are_ignored_and_counted() -> None:
    """A flood of made-up table ids stops at MAX_TABLES; the known tables go on."""
    from table_controller.floor.live import MAX_TABLES

    view = LiveView()
    for n in range(MAX_TABLES + 50):
        view.take(f"t{n}", "status", {"status": "online", "ts": 1.0})
    assert len(view.tables) == MAX_TABLES
    assert view.ignored == 50
    view.take("t0", "status", {"status": "offline", "ts": 2.0})
    assert view.tables["t0"].status == "offline"
