"""The floor's view of a table (issue 14): the alert lifecycle and the dealer on duty.

Pure: no I/O, no clock, no MQTT. The daemon (:mod:`table_controller.daemon.core`)
feeds it the alerts it raises and the floor's commands (``ack``, ``resolve``,
``dealer``), each with the wall time it was journaled at, and publishes what it
says. After a restart the same journal records fed again, in order
(:meth:`AlertBook.restore_op`), rebuild the same open set and the same dealer:
the journal is the one truth, this is its projection.

Lifecycle (docs/alerts.md "Lifecycle"): an alert is raised ``open``; a supervisor
*acknowledges* it (seen, someone is on it: by whom, when) and *resolves* it with a
note saying how it was handled ("misdeal called"); a resolved alert leaves the open
set for good. Resolving an open alert directly is allowed (the ack is implied). What
is refused, changing nothing: an id the table does not know, an alert already
resolved, an acknowledgement of an alert already acknowledged.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from table_controller.domain.engine.alerts import AlertCode, Severity, alert_severity
from table_controller.domain.engine.outputs import ReplyCode
from table_controller.domain.events import AlertAck, DealerChange, FloorCommand
from table_controller.records.ops import OpError, parse_floor

MAX_OPEN_ALERTS: Final = 200
"""Open alerts kept at most. Past it the oldest is closed by the table itself (a
journaled, published resolution saying why), so a flood of refused console input
cannot grow the retained ``alerts/open`` without bound; nothing vanishes unseen."""

RESOLVED_MEMORY: Final = 10_000
"""Resolved ids remembered, to answer "already resolved" rather than "unknown"."""

TABLE_ACTOR: Final = "table"
"""``by`` of a resolution the table makes itself (:data:`MAX_OPEN_ALERTS`)."""

UNKNOWN_ALERT: Final = ReplyCode.UNKNOWN_ALERT
"""Reply code: no alert of this table has that id."""
ALERT_RESOLVED: Final = ReplyCode.ALERT_RESOLVED
"""Reply code: the alert is resolved already."""
ALERT_ACKNOWLEDGED: Final = ReplyCode.ALERT_ACKNOWLEDGED
"""Reply code: the alert is acknowledged already (resolve it instead)."""
NO_DEALER: Final = ReplyCode.NO_DEALER
"""Reply code: a sign-out with nobody signed in."""


@dataclass(frozen=True, slots=True)
class Dealer:
    """The dealer on duty: badge id and name (public, like players' names)."""

    id: str
    name: str

    def as_dict(self) -> dict[str, str]:
        """As in the payloads (``{"id", "name"}``)."""
        return {"id": self.id, "name": self.name}


@dataclass(frozen=True, slots=True)
class BookAlert:
    """One alert of the book, with its lifecycle state."""

    id: str
    code: AlertCode
    message: str
    hand: int | None
    raised_ts: float
    dealer: Dealer | None = None
    seat: int | None = None
    street: int | None = None
    rule: int | None = None
    state: str = "open"
    acknowledged_by: str | None = None
    acknowledged_ts: float | None = None

    @property
    def severity(self) -> Severity:
        """Decided by the code (docs/alerts.md)."""
        return alert_severity(self.code)

    def as_open(self) -> dict[str, Any]:
        """The ``alerts/open`` entry (payloads.FloorAlert's fields)."""
        return {
            "id": self.id, "code": self.code.value, "severity": self.severity.value,
            "seat": self.seat, "street": self.street, "rule": self.rule,
            "message": self.message, "hand": self.hand, "raised_ts": self.raised_ts,
            "dealer": self.dealer.as_dict() if self.dealer else None, "state": self.state,
            "acknowledged_by": self.acknowledged_by, "acknowledged_ts": self.acknowledged_ts,
        }

    def as_op(self) -> dict[str, Any]:
        """The journal's ``alert`` op: everything needed to restore it, lifecycle
        state included (a rotated file's header carries the open set this way)."""
        return {"op": "alert", **self.as_open(), "severity": self.severity.value}


@dataclass(frozen=True, slots=True)
class Change:
    """One lifecycle change to publish on ``alerts/changes``."""

    id: str
    state: Literal["acknowledged", "resolved"]
    by: str
    note: str | None
    at_ts: float


def alert_from_op(op: Mapping[str, Any], at: float) -> BookAlert:
    """The :class:`BookAlert` of a journal ``alert`` op (``at``: the record's time,
    used when the op has no ``raised_ts``). Raises ``ValueError`` on a bad op."""
    alert_id = op.get("id")
    if not isinstance(alert_id, str) or not alert_id:
        raise ValueError("alert: id is missing")
    code = AlertCode(str(op.get("code")))
    alert_severity(code)  # a notice's code is refused
    dealer = op.get("dealer")
    state = op.get("state", "open")
    if state not in ("open", "acknowledged"):
        raise ValueError(f"alert: bad state {state!r}")
    return BookAlert(
        id=alert_id, code=code, message=str(op.get("message", "")),
        hand=_int_or_none(op.get("hand")), raised_ts=float(op.get("raised_ts", at)),
        dealer=Dealer(str(dealer["id"]), str(dealer["name"])) if isinstance(dealer, dict)
        else None,
        seat=_int_or_none(op.get("seat")), street=_int_or_none(op.get("street")),
        rule=_int_or_none(op.get("rule")), state=state,
        acknowledged_by=op.get("acknowledged_by") if state == "acknowledged" else None,
        acknowledged_ts=_float_or_none(op.get("acknowledged_ts")) if state == "acknowledged"
        else None,
    )


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


class AlertBook:
    """The open alerts of one table and its dealer on duty (see the module docstring)."""

    def __init__(self, max_open: int = MAX_OPEN_ALERTS) -> None:
        """An empty book: nothing open, no dealer."""
        self._open: dict[str, BookAlert] = {}
        self._resolved: OrderedDict[str, None] = OrderedDict()
        self._max_open = max_open
        self.dealer: Dealer | None = None
        self.dealer_since: float | None = None
        self.highest_number = 0
        """The highest ``<n>`` of an id ``<table>:<n>`` seen (ids never go back)."""

    # ------------------------------------------------------------------ reading

    def open_alerts(self) -> list[BookAlert]:
        """Every alert not yet resolved, oldest first."""
        return sorted(self._open.values(), key=lambda a: (a.raised_ts, a.id))

    def get(self, alert_id: str) -> BookAlert | None:
        """The open alert ``alert_id``, if there is one."""
        return self._open.get(alert_id)

    def refusal(self, command: FloorCommand) -> tuple[str, str] | None:
        """``(code, reason)`` if ``command`` must be refused (it then changes
        nothing), else ``None``."""
        if isinstance(command, DealerChange):
            if command.dealer_id is None and self.dealer is None:
                return NO_DEALER, "dealer: nobody is signed in at this table"
            return None
        name = "ack" if isinstance(command, AlertAck) else "resolve"
        alert = self._open.get(command.alert)
        if alert is None:
            if command.alert in self._resolved:
                return ALERT_RESOLVED, f"{name}: alert {command.alert} is resolved already"
            return UNKNOWN_ALERT, (f"{name}: no open alert of this table has the id"
                                   f" {command.alert!r}")
        if isinstance(command, AlertAck) and alert.state == "acknowledged":
            return ALERT_ACKNOWLEDGED, (f"ack: alert {command.alert} is acknowledged"
                                        f" already (by {alert.acknowledged_by});"
                                        " resolve it when handled")
        return None

    # ------------------------------------------------------------------ changing

    def raise_alert(self, alert: BookAlert) -> list[BookAlert]:
        """Add a newly raised alert; return the alerts pushed out to stay within
        :data:`MAX_OPEN_ALERTS` (oldest first; the caller resolves them visibly)."""
        self._note_id(alert.id)
        if alert.id in self._resolved:
            return []
        self._open[alert.id] = alert
        over = len(self._open) - self._max_open
        return self.open_alerts()[:over] if over > 0 else []

    def apply(self, command: FloorCommand, at: float) -> Change | None:
        """Apply a command :meth:`refusal` accepted, journaled at wall time ``at``;
        return the change to publish (None for the dealer, published whole)."""
        if isinstance(command, DealerChange):
            self.dealer = (Dealer(command.dealer_id, command.name or "")
                           if command.dealer_id is not None else None)
            self.dealer_since = at
            return None
        alert = self._open[command.alert]
        if isinstance(command, AlertAck):
            self._open[alert.id] = replace(alert, state="acknowledged",
                                           acknowledged_by=command.by, acknowledged_ts=at)
            return Change(alert.id, "acknowledged", command.by, None, at)
        del self._open[alert.id]
        self._resolved[alert.id] = None
        while len(self._resolved) > RESOLVED_MEMORY:
            self._resolved.popitem(last=False)
        return Change(alert.id, "resolved", command.by, command.note, at)

    def restore_op(self, op: Mapping[str, Any], at: float) -> None:
        """Replay one journaled ``alert``/``ack``/``resolve``/``dealer`` op (``at``: its
        record's time). A command the book would refuse now is skipped: it was
        refused when it came too (refusals are never journaled), unless the
        records before it were lost, and then skipping is all that can be done."""
        name = op.get("op")
        if name == "alert":
            alert = alert_from_op(op, at)
            self.raise_alert(alert)
            return
        try:
            command = parse_floor(str(name), op, at)  # the console's parser
        except OpError:
            return
        since = op.get("since")
        if isinstance(command, DealerChange) and isinstance(since, int | float):
            # A rotated file's header: the state as it was, with its time.
            self.apply(command, float(since))
        elif self.refusal(command) is None:
            self.apply(command, at)

    def header_ops(self) -> list[dict[str, Any]]:
        """What a journal file begun by rotation must carry so that it alone restores
        the book: the dealer on duty and every open alert with its state."""
        ops: list[dict[str, Any]] = []
        if self.dealer is not None:
            ops.append({"op": "dealer", "action": "in", "id": self.dealer.id,
                        "name": self.dealer.name, "since": self.dealer_since})
        elif self.dealer_since is not None:  # signed out: since when
            ops.append({"op": "dealer", "action": "out", "since": self.dealer_since})
        ops += [alert.as_op() for alert in self.open_alerts()]
        return ops

    def _note_id(self, alert_id: str) -> None:
        _, _, number = alert_id.rpartition(":")
        if number.isdigit():
            self.highest_number = max(self.highest_number, int(number))
