"""The bridge between raised alerts and the floor's alert book (issue 14), without I/O.

An alert reaches the book from three places: the engine (a dealing error), the
daemon itself (a reader offline, the journal), the MQTT side (a backlog, a
takeover: published there, *adopted* here). The bridge turns each into the
book's entry and the payloads the floor's topics carry: it gives a raised alert
its id (never reused) and the dealer on duty, books it and says which of the
oldest alerts the bounded open set pushed out (the core closes those, visibly);
it builds ``alerts/open``, ``alerts/changes`` and ``dealer`` from the book. The
core journals and publishes what the bridge returns, in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from table_controller.daemon.floor import (
    MAX_OPEN_ALERTS,
    TABLE_ACTOR,
    AlertBook,
    BookAlert,
    Change,
)
from table_controller.domain.events import AlertResolve
from table_controller.mqtt.payloads import (
    AlertChangePayload,
    AlertPayload,
    DealerInfo,
    DealerPayload,
    FloorAlert,
    OpenAlertsPayload,
)


@dataclass(frozen=True, slots=True)
class Raised:
    """A raised alert as the book keeps it and as ``alerts`` publishes it."""

    entry: BookAlert
    payload: AlertPayload


class AlertBridge:
    """Alerts in, book entries and floor payloads out (see the module docstring)."""

    def __init__(self, table_id: str, book: AlertBook,
                 alert_ids: Callable[[], str] | None = None) -> None:
        """A bridge to ``book``; ``alert_ids`` hands out ids that are never reused
        (the daemon's persistent counter; without it ids count on from the highest
        the book saw)."""
        self.table_id = table_id
        self.book = book
        self._alert_ids = alert_ids

    def raise_alert(self, payload: AlertPayload, raised_ts: float) -> Raised:
        """Give ``payload`` its id and the dealer on duty; the entry to book."""
        alert_id = self._new_id()
        payload = payload.model_copy(update={"id": alert_id, "dealer": self.dealer_info()})
        entry = BookAlert(
            id=alert_id, code=payload.code, message=payload.message, hand=payload.hand,
            raised_ts=raised_ts, dealer=self.book.dealer, seat=payload.seat,
            street=payload.street, rule=payload.rule,
        )
        return Raised(entry, payload)

    def adopt(self, payload: AlertPayload) -> BookAlert | None:
        """The entry of an alert the MQTT side raised and published (None: it has no
        id, so the floor could never acknowledge it)."""
        if not payload.id:
            return None
        return BookAlert(
            id=payload.id, code=payload.code, message=payload.message, hand=payload.hand,
            raised_ts=payload.ts, seat=payload.seat, street=payload.street, rule=payload.rule,
            dealer=None if payload.dealer is None else self.book.dealer,
        )

    def keep(self, entry: BookAlert) -> list[AlertResolve]:
        """Book ``entry``; the closings of the oldest alerts it pushed out of the
        bounded open set (:data:`MAX_OPEN_ALERTS`), for the core to apply."""
        return [
            AlertResolve(old.id, TABLE_ACTOR, f"closed by the table: more than"
                         f" {MAX_OPEN_ALERTS} alerts were open (the oldest are closed first)")
            for old in self.book.raise_alert(entry)
        ]

    def dealer_info(self) -> DealerInfo | None:
        """The dealer on duty as payloads name them."""
        dealer = self.book.dealer
        return DealerInfo(id=dealer.id, name=dealer.name) if dealer is not None else None

    def open_alerts(self, hand: int | None) -> OpenAlertsPayload:
        """``alerts/open``: every open alert."""
        return OpenAlertsPayload(
            table=self.table_id, hand=hand, seq=0, ts=0.0,
            alerts=[FloorAlert.model_validate(a.as_open()) for a in self.book.open_alerts()],
        )

    def dealer(self, hand: int | None) -> DealerPayload:
        """``dealer``: who deals, since when."""
        return DealerPayload(table=self.table_id, hand=hand, seq=0, ts=0.0,
                             dealer=self.dealer_info(), since=self.book.dealer_since)

    def change(self, change: Change, hand: int | None) -> AlertChangePayload:
        """``alerts/changes``: one acknowledgement or resolution."""
        return AlertChangePayload(table=self.table_id, hand=hand, seq=0, ts=0.0, id=change.id,
                                  state=change.state, by=change.by, note=change.note,
                                  at_ts=change.at_ts)

    def _new_id(self) -> str:
        if self._alert_ids is not None:
            return self._alert_ids()
        return f"{self.table_id}:{self.book.highest_number + 1}"

