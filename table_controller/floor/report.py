"""Search of past hands and alerts, and the shift report: pure functions over hand records.

The records are the contract's finished-hand records (``hands`` topic, public part:
``hand_id``, ``game``, ``dealer``, ``started_ts``, ``ended_ts``, ``players``, ``pot``,
``winners``, ``alerts`` [{id, code, severity}], ``notices``, ``ended``...). Where they
come from is the caller's business: the archive store's query API when the floor is
configured with one, else :class:`MemoryArchive`, the hands and alerts this dashboard
has seen since it started (bounded).

No I/O, no clock: the report's window is given.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

HOUR: Final = 3600.0
ERROR_SEVERITIES: Final = ("critical", "error")
"""What the report counts as an error (docs/alerts.md); warnings are listed apart."""
MAX_RESULTS: Final = 500
"""Rows a search returns (newest first); the page says when there were more."""


class SearchError(ValueError):
    """A search or report request that cannot be answered; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class Query:
    """What a supervisor searches by; ``None``: any."""

    table: str | None = None
    since: float | None = None
    until: float | None = None
    dealer: str | None = None
    """A dealer id (exact) or part of a name (any case)."""
    code: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        """From a page's query string (``table``, ``since``, ``until``, ``dealer``, ``code``;
        times as epoch seconds). :class:`SearchError` says what is wrong."""
        def number(key: str) -> float | None:
            raw = params.get(key, "").strip()
            if not raw:
                return None
            try:
                value = float(raw)
            except ValueError:
                raise SearchError(f"{key}: {raw[:40]!r} is not a time (epoch seconds)") from None
            if not math.isfinite(value):
                raise SearchError(f"{key}: not a finite time")
            return value

        def text(key: str) -> str | None:
            raw = params.get(key, "").strip()
            if len(raw) > 64:
                raise SearchError(f"{key}: longer than 64 characters")
            return raw or None

        query = cls(text("table"), number("since"), number("until"), text("dealer"),
                    text("code"))
        if query.since is not None and query.until is not None and query.until < query.since:
            raise SearchError("until is before since")
        return query


def hand_table(record: Mapping[str, Any]) -> str:
    """The table of a hand record (its ``table``, else the ``hand_id``'s first part)."""
    table = record.get("table")
    if isinstance(table, str):
        return table
    return str(record.get("hand_id", "")).split(":", 1)[0]


def _dealer_matches(dealer: Any, wanted: str) -> bool:
    if not isinstance(dealer, Mapping):
        return False
    return dealer.get("id") == wanted or wanted.casefold() in str(
        dealer.get("name", "")).casefold()


def _ts(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def hand_matches(record: Mapping[str, Any], q: Query) -> bool:
    """True if the hand record fits the query (time: its end)."""
    ended = _ts(record.get("ended_ts"))
    if q.table is not None and hand_table(record) != q.table:
        return False
    if q.since is not None and (ended is None or ended < q.since):
        return False
    if q.until is not None and (ended is None or ended >= q.until):
        return False
    if q.dealer is not None and not _dealer_matches(record.get("dealer"), q.dealer):
        return False
    codes = {a.get("code") for a in record.get("alerts") or () if isinstance(a, Mapping)}
    return q.code is None or q.code in codes


def alert_matches(alert: Mapping[str, Any], q: Query) -> bool:
    """True if the alert (live form, :mod:`.live`) fits the query (time: raised)."""
    raised = _ts(alert.get("raised_ts"))
    if q.table is not None and alert.get("table") != q.table:
        return False
    if q.since is not None and (raised is None or raised < q.since):
        return False
    if q.until is not None and (raised is None or raised >= q.until):
        return False
    if q.dealer is not None and not _dealer_matches(alert.get("dealer"), q.dealer):
        return False
    return q.code is None or alert.get("code") == q.code


def hand_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """A search result line: what a supervisor scans (no card)."""
    dealer = record.get("dealer")
    return {
        "hand_id": record.get("hand_id"), "table": hand_table(record),
        "game": record.get("game"), "dealer": dealer if isinstance(dealer, Mapping) else None,
        "started_ts": record.get("started_ts"), "ended_ts": record.get("ended_ts"),
        "players": len(record.get("players") or ()), "pot": record.get("pot"),
        "ended": record.get("ended"),
        "alerts": [a.get("code") for a in record.get("alerts") or () if isinstance(a, Mapping)],
    }


def _rate(errors: int, hands: int) -> float | None:
    return round(100.0 * errors / hands, 2) if hands else None


def _group() -> dict[str, Any]:
    return {"hands": 0, "errors": 0, "warnings": 0, "manual_cards": 0}


def shift_report(records: Iterable[Mapping[str, Any]], since: float,
                 until: float) -> dict[str, Any]:
    """The shift report over the hands that ended in ``[since, until)``.

    * ``hours``: hands per clock hour (epoch hour starts; the page labels them);
    * ``codes``: per alert code, its severity, count and count per 100 hands;
    * ``dealers`` / ``tables``: hands, errors (critical + error alerts), warnings and
      errors per 100 hands; ``manual_cards``: cards entered by hand at the console
      (a table's dead tags to replace, issue 19; 0 for dealers).
    """
    if not until > since:
        raise SearchError("the report's end must be after its start")
    if until - since > 31 * 24 * HOUR:
        raise SearchError("a report covers at most 31 days")
    first = math.floor(since / HOUR) * HOUR
    hours: dict[float, int] = {first + i * HOUR: 0
                               for i in range(math.ceil((until - first) / HOUR))}
    codes: Counter[str] = Counter()
    severities: dict[str, str] = {}
    dealers: dict[str, dict[str, Any]] = {}
    tables: dict[str, dict[str, Any]] = {}
    total = 0
    for record in records:
        ended = _ts(record.get("ended_ts"))
        if ended is None or not since <= ended < until:
            continue
        total += 1
        hours[math.floor(ended / HOUR) * HOUR] += 1
        dealer = record.get("dealer")
        if isinstance(dealer, Mapping) and dealer.get("id"):
            key, label = str(dealer["id"]), f"{dealer.get('name') or ''} ({dealer['id']})"
        else:
            key, label = "", "(no dealer signed in)"
        d = dealers.setdefault(key, {**_group(), "dealer": label})
        t = tables.setdefault(hand_table(record), {**_group(), "table": hand_table(record)})
        for group in (d, t):
            group["hands"] += 1
        manual = sum(1 for notice in record.get("notices") or ()
                     if isinstance(notice, Mapping) and notice.get("code") == "manual_card")
        t["manual_cards"] += manual  # issue 19: dead tags entered by hand, to replace
        for alert in record.get("alerts") or ():
            if not isinstance(alert, Mapping):
                continue
            code, severity = str(alert.get("code", "?")), str(alert.get("severity", "?"))
            codes[code] += 1
            severities[code] = severity
            field = "errors" if severity in ERROR_SEVERITIES else "warnings"
            for group in (d, t):
                group[field] += 1
    for group in (*dealers.values(), *tables.values()):
        group["errors_per_100"] = _rate(group["errors"], group["hands"])
    return {
        "since": since, "until": until, "hands": total,
        "errors": sum(n for c, n in codes.items() if severities[c] in ERROR_SEVERITIES),
        "hours": [{"hour": h, "hands": n} for h, n in sorted(hours.items())],
        "codes": sorted(({"code": c, "severity": severities[c], "count": n,
                          "per_100": _rate(n, total)} for c, n in codes.items()),
                        key=lambda r: (-r["count"], r["code"])),
        "dealers": sorted(dealers.values(), key=lambda r: r["dealer"]),
        "tables": sorted(tables.values(), key=lambda r: r["table"]),
    }


class Archive(Protocol):
    """What the floor asks of an archive (the archive store's query API, or memory)."""

    source: str
    """``memory`` or ``archive`` (the page says which)."""

    def search_hands(self, q: Query) -> list[dict[str, Any]]:
        """Hands fitting ``q`` as :func:`hand_row` rows, newest first, at most
        :data:`MAX_RESULTS`."""
        ...

    def search_alerts(self, q: Query) -> list[dict[str, Any]]:
        """Alerts fitting ``q`` with their lifecycle state, newest first."""
        ...

    def hand(self, hand_id: str) -> dict[str, Any] | None:
        """One hand record by its id."""
        ...

    def report(self, since: float, until: float) -> dict[str, Any]:
        """The :func:`shift_report` of the window."""
        ...


class MemoryArchive:
    """The hands and alerts seen since the dashboard started, oldest dropped first.

    Bounded (``hands_kept`` hands, four times as many alerts): a dashboard left
    open for weeks does not grow without end. Says so on the page: for a shift's
    history across restarts, configure the archive.
    """

    source = "memory"

    def __init__(self, hands_kept: int) -> None:
        self.hands_kept = hands_kept
        self._hands: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._alerts: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()

    def add_hand(self, record: Mapping[str, Any]) -> None:
        """Keep a finished hand (a redelivery replaces the same ``hand_id``)."""
        hand_id = record.get("hand_id")
        if not isinstance(hand_id, str) or not hand_id:
            return
        self._hands[hand_id] = {k: v for k, v in record.items() if k != "down_cards"}
        self._hands.move_to_end(hand_id)
        while len(self._hands) > self.hands_kept:
            self._hands.popitem(last=False)

    def note_alert(self, alert: Mapping[str, Any]) -> None:
        """Keep (or update) an alert as the live view last showed it."""
        key = (str(alert["table"]), str(alert["id"]))
        self._alerts[key] = {**self._alerts.get(key, {}), **alert}
        while len(self._alerts) > 4 * self.hands_kept:
            self._alerts.popitem(last=False)

    def change_alert(self, table: str, change: Mapping[str, Any]) -> None:
        """Apply an ``alerts/changes`` message to a kept alert."""
        key = (table, str(change.get("id")))
        alert = self._alerts.get(key)
        if alert is None:
            return
        state = change.get("state")
        if state == "acknowledged":
            alert.update(state="acknowledged", acknowledged_by=change.get("by"),
                         acknowledged_ts=change.get("at_ts"))
        elif state == "resolved":
            alert.update(state="resolved", resolved_by=change.get("by"),
                         note=change.get("note"), resolved_ts=change.get("at_ts"))

    def search_hands(self, q: Query) -> list[dict[str, Any]]:
        """See :class:`Archive`."""
        out = [hand_row(h) for h in reversed(self._hands.values()) if hand_matches(h, q)]
        return out[:MAX_RESULTS]

    def search_alerts(self, q: Query) -> list[dict[str, Any]]:
        """See :class:`Archive`."""
        out = [a for a in reversed(self._alerts.values()) if alert_matches(a, q)]
        return out[:MAX_RESULTS]

    def hand(self, hand_id: str) -> dict[str, Any] | None:
        """See :class:`Archive`."""
        return self._hands.get(hand_id)

    def report(self, since: float, until: float) -> dict[str, Any]:
        """See :class:`Archive`."""
        return shift_report(self._hands.values(), since, until)
