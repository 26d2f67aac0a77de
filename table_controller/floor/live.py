"""The floor's live view of every table: a pure fold of the tables' MQTT messages.

No I/O and no clock: :class:`LiveView` takes ``(table, kind, payload)`` triples (the
service routes topics to kinds) and answers :meth:`LiveView.snapshot`, the JSON the
dashboard draws. The open alerts come from three topics of the issue-14 contract:

* ``alerts/open`` (retained): the table's full set of unresolved alerts; it replaces
  what the view had for that table (it is the truth after every change);
* ``alerts`` (as raised): added at once, so a new alert reaches the floor without
  waiting for the next ``alerts/open``;
* ``alerts/changes``: an acknowledgement updates the alert, a resolution removes it.

Sorting (docs/floor.md): most severe first (critical, error, warning, anything
else), then the oldest first within a severity: the alert that has waited longest
for a supervisor is the one to walk to.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from table_controller.mqtt.topics import TableTopics, TopicKind

SEVERITY_RANK: Final = {"critical": 0, "error": 1, "warning": 2}
"""docs/alerts.md severities, most urgent first; an unknown one sorts after them."""

KINDS: Final = frozenset({"status", "state", "alert", "alerts_open", "alert_change",
                          "dealer", "reader", "hand"})
"""The message kinds the view takes (see :func:`route`)."""

ALERT_KINDS: Final = frozenset({"alert", "alerts_open", "alert_change"})
"""The kinds that may change the open alerts."""

MAX_OPEN: Final = 500
"""Open alerts kept per table: a runaway table cannot exhaust the dashboard's memory."""

MAX_TABLES: Final = 1000
"""Tables followed at most: a client publishing under endless made-up table ids (the
ACL should forbid it) cannot exhaust the dashboard's memory."""

MAX_READERS: Final = 32
"""Readers kept per table (a layout has a handful)."""

_ANY: Final = TableTopics("_")  # the topic builder's names, read after the table level


def _suffix(topic: str) -> str:
    return topic[len(_ANY.base) + 1:]


_KIND_OF: Final = {
    TopicKind.STATUS: "status", TopicKind.STATE: "state", TopicKind.ALERTS: "alert",
    TopicKind.ALERTS_OPEN: "alerts_open", TopicKind.ALERTS_CHANGES: "alert_change",
    TopicKind.DEALER: "dealer", TopicKind.HANDS: "hand", TopicKind.READER: "reader",
}
"""The view's kind of each topic kind the floor follows; never a ``secure/`` one."""

FOLLOWED: Final = (_suffix(_ANY.status), _suffix(_ANY.state), _suffix(_ANY.alerts),
                   _suffix(_ANY.alerts_open), _suffix(_ANY.alerts_changes),
                   _suffix(_ANY.dealer), _suffix(_ANY.hands), _suffix(_ANY.readers_filter))
"""What the floor follows of every table (``stud/v1/+/<suffix>``); never ``secure/``."""

ALERT_FOLLOWED: Final = frozenset({_suffix(_ANY.alerts), _suffix(_ANY.alerts_open),
                                   _suffix(_ANY.alerts_changes)})
"""The followed topics of the open alerts: the floor takes them on a connection of their
own, so that no state of any table is ahead of them (issue 25)."""

LATEST_ONLY: Final = frozenset({_suffix(_ANY.state), _suffix(_ANY.readers_filter)})
"""Followed topics whose every message is the whole retained snapshot, superseded by
the next (a busy table's ``state`` ten times a second): the floor takes them at QoS 0.
A lost one is made good by the next, and they stay out of the broker's window of
unacknowledged QoS 1 messages (Mosquitto's ``max_inflight_messages``, 20), where ten
states for every alert made the alerts wait (issue 25)."""


def route(topic: str) -> tuple[str, str] | None:
    """``(table, kind)`` of a topic name, else ``None`` (not a topic the floor shows).

    The one topic parser (:meth:`TableTopics.parse`) says what the topic is; ``secure/...``
    is never routed (the floor has no business with down cards, and its broker role
    cannot read them), nor are ``events``, ``notices``, reader stats, commands and replies.
    """
    parsed = TableTopics.parse(topic)
    if parsed is None:
        return None
    kind = _KIND_OF.get(parsed.kind)
    return (parsed.table, kind) if kind else None


def _journal(log: dict[str, int], table: str, version: int) -> None:
    log.pop(table, None)  # re-inserted last: the journal stays in the order of change
    log[table] = version


def _since(log: dict[str, int], version: int) -> list[tuple[str, int]]:
    changed = []
    for table in reversed(log):
        at = log[table]
        if at <= version:
            break
        changed.append((table, at))
    return changed


def _text(value: Any, limit: int = 300) -> str | None:
    if value is None:
        return None
    return str(value)[:limit]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _dealer(value: Any) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    ident, name = value.get("id"), value.get("name")
    if ident is None and name is None:
        return None
    return {"id": _text(ident, 64) or "", "name": _text(name, 64) or ""}


def alert_entry(table: str, p: Mapping[str, Any], *, raised: bool) -> dict[str, Any] | None:
    """One open alert as the page draws it, from ``alerts`` (``raised``) or one element
    of ``alerts/open``; ``None`` if it has no id (an alert from before issue 14)."""
    ident = p.get("id")
    if not isinstance(ident, str) or not ident:
        return None
    state = p.get("state", "open")
    return {
        "table": table,
        "id": ident[:128],
        "code": _text(p.get("code"), 64) or "?",
        "severity": _text(p.get("severity"), 16) or "?",
        "message": _text(p.get("message")) or "",
        "hand": p.get("hand") if isinstance(p.get("hand"), int) else None,
        "seat": p.get("seat") if isinstance(p.get("seat"), int) else None,
        "raised_ts": _number(p.get("ts") if raised else p.get("raised_ts")),
        "dealer": _dealer(p.get("dealer")),
        "state": "acknowledged" if state == "acknowledged" else "open",
        "acknowledged_by": _text(p.get("acknowledged_by"), 64),
        "acknowledged_ts": _number(p.get("acknowledged_ts")),
    }


def sort_key(alert: Mapping[str, Any]) -> tuple[int, float, str, str]:
    """Most severe first, then oldest first (an alert without a time last), then stable."""
    ts = alert.get("raised_ts")
    return (SEVERITY_RANK.get(alert.get("severity", ""), len(SEVERITY_RANK)),
            ts if isinstance(ts, float) else math.inf, alert["table"], alert["id"])


@dataclass
class TableView:
    """What the floor knows of one table."""

    table: str
    status: str | None = None
    status_reason: str | None = None
    hand: int | None = None
    street: int | None = None
    pot: int | None = None
    players: int = 0
    game: str | None = None
    dealer: dict[str, str] | None = None
    readers: dict[str, dict[str, Any]] = field(default_factory=dict)
    open: dict[str, dict[str, Any]] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    """Ids resolved since the last ``alerts/open``: a late ``alerts`` redelivery of
    one of them must not bring it back."""
    hands_seen: int = 0
    last_ts: float | None = None

    def summary(self) -> dict[str, Any]:
        """The table's card on the page."""
        readers = sorted(self.readers.values(), key=lambda r: r["reader"])
        return {
            "table": self.table, "status": self.status, "status_reason": self.status_reason,
            "hand": self.hand, "street": self.street, "pot": self.pot,
            "players": self.players, "game": self.game, "dealer": self.dealer,
            "readers": readers,
            "readers_ok": all(r["state"] == "online" for r in readers),
            "open_alerts": len(self.open), "hands_seen": self.hands_seen,
            "last_ts": self.last_ts,
        }


class LiveView:
    """Every table's view; :meth:`take` folds one message in, :attr:`version` counts changes."""

    def __init__(self) -> None:
        self.tables: dict[str, TableView] = {}
        self.version = 0
        self.alert_version = 0
        """Counts the changes of some table's open alerts (pages get those at once)."""
        self.ignored = 0
        """Messages of tables past :data:`MAX_TABLES` (shown on the page)."""
        # table -> the version (alert version) of its last change, oldest change first:
        # what changed since a page's last view is read from the end, so telling a page
        # costs what changed, not every table (issue 25: 100 tables).
        self._changed: dict[str, int] = {}
        self._alerts_changed: dict[str, int] = {}

    def table(self, table: str) -> TableView:
        """The view of ``table`` (created when first seen: discovery)."""
        view = self.tables.get(table)
        if view is None:
            view = self.tables[table] = TableView(table)
        return view

    def take(self, table: str, kind: str, p: Mapping[str, Any]) -> None:
        """Fold one checked message (a JSON object) of ``table`` into the view."""
        if table not in self.tables and len(self.tables) >= MAX_TABLES:
            self.ignored += 1
            return
        view = self.table(table)
        # Whether this message changed the table's open alerts: only then is it an alert
        # change that every page is sent at once. A table publishes each alert twice
        # (``alerts``, then the retained ``alerts/open`` holding it) and each resolution
        # twice: the second changes nothing, and was a second send to every page.
        alerts_changed = False
        ts = _number(p.get("ts"))
        if ts is not None and (view.last_ts is None or ts > view.last_ts):
            view.last_ts = ts
        if kind == "status":
            view.status = _text(p.get("status"), 16)
            view.status_reason = _text(p.get("reason"))
        elif kind == "state":
            view.hand = p.get("hand") if isinstance(p.get("hand"), int) else None
            view.street = p.get("street") if isinstance(p.get("street"), int) else None
            view.pot = p.get("pot") if isinstance(p.get("pot"), int) else None
            raw_seats = p.get("seats")
            seats: list[Any] = raw_seats if isinstance(raw_seats, list) else []
            view.players = sum(1 for s in seats if isinstance(s, Mapping)
                               and s.get("status") not in (None, "empty"))
            if isinstance(p.get("game"), str):
                view.game = p["game"][:16]
        elif kind == "dealer":
            view.dealer = _dealer(p.get("dealer"))
        elif kind == "reader":
            reader = _text(p.get("reader"), 64)
            if reader and (reader in view.readers or len(view.readers) < MAX_READERS):
                view.readers[reader] = {"reader": reader,
                                        "state": _text(p.get("state"), 16) or "?",
                                        "last_heartbeat": _number(p.get("last_heartbeat"))}
        elif kind == "alerts_open":
            raw_items = p.get("alerts")
            items: list[Any] = raw_items if isinstance(raw_items, list) else []
            fresh: dict[str, dict[str, Any]] = {}
            for item in items[:MAX_OPEN]:
                entry = alert_entry(table, item, raised=False) if isinstance(
                    item, Mapping) else None
                if entry is not None:
                    fresh[entry["id"]] = entry
            alerts_changed = fresh != view.open
            view.open = fresh
            view.resolved.clear()
        elif kind == "alert":
            entry = alert_entry(table, p, raised=True)
            if (entry is not None and entry["id"] not in view.open
                    and entry["id"] not in view.resolved and len(view.open) < MAX_OPEN):
                view.open[entry["id"]] = entry
                alerts_changed = True
        elif kind == "alert_change":
            ident, state = p.get("id"), p.get("state")
            if isinstance(ident, str) and state == "resolved":
                alerts_changed = view.open.pop(ident, None) is not None
                if len(view.resolved) < MAX_OPEN:
                    view.resolved.add(ident)
            elif isinstance(ident, str) and state == "acknowledged" and ident in view.open:
                acked = {**view.open[ident], "state": "acknowledged",
                         "acknowledged_by": _text(p.get("by"), 64),
                         "acknowledged_ts": _number(p.get("at_ts"))}
                alerts_changed = acked != view.open[ident]
                view.open[ident] = acked
        elif kind == "hand":
            view.hands_seen += 1
            if isinstance(p.get("game"), str):
                view.game = p["game"][:16]
            if view.dealer is None:
                view.dealer = _dealer(p.get("dealer"))
        if alerts_changed:
            self.alert_version += 1
            _journal(self._alerts_changed, table, self.alert_version)
        self.touch(table)

    def touch(self, table: str) -> None:
        """Count a change of ``table``'s card (also one made outside :meth:`take`)."""
        self.version += 1
        if table in self.tables:
            _journal(self._changed, table, self.version)

    def changed_since(self, version: int) -> list[tuple[str, int]]:
        """``(table, version of its last change)`` of each table whose card changed
        after :attr:`version` was ``version``, the latest change first."""
        return _since(self._changed, version)

    def alerts_changed_since(self, alert_version: int) -> list[tuple[str, int]]:
        """``(table, alert version of its last change)`` of each table whose open alerts
        may have changed after ``alert_version``, the latest change first."""
        return _since(self._alerts_changed, alert_version)

    def open_alerts(self, table: str) -> list[dict[str, Any]]:
        """``table``'s open alerts, most severe then oldest first."""
        view = self.tables.get(table)
        return [] if view is None else sorted(view.open.values(), key=sort_key)

    def alerts(self) -> list[dict[str, Any]]:
        """Every open alert across the tables, most severe then oldest first."""
        return sorted((a for v in self.tables.values() for a in v.open.values()), key=sort_key)

    def snapshot(self) -> dict[str, Any]:
        """What the dashboard draws: every table (by id) and the sorted open alerts."""
        return {"version": self.version, "ignored": self.ignored,
                "tables": [self.tables[t].summary() for t in sorted(self.tables)],
                "alerts": self.alerts()}
