"""Engine state and outputs -> MQTT payload models (pure; docs/mqtt.md).

The public projections are the only place a down card could leak, so they are
built by code paths that never read a down card's identity: public seats get
``down_count``, public events get no card for a down deal or a burn, and a hand
result shows the hands shown down at showdown, winners first (issue 12); a folded
hand never reaches it. The payload
models forbid extra keys, so a secure field in a public payload fails loudly.

Readings and equity (docs/equity.md "Live equity"): a public seat gets only
``showing``, computed by :func:`~table_controller.domain.equity.live.public_readings`
from its up cards alone; a secure seat also gets its ``reading`` and, given a
:class:`~table_controller.domain.equity.live.LiveEquity` for the hand's current spot, its
``equity``, ``win``, ``tie`` and ``outs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.betting import BettingHand, PotAwarded
from table_controller.domain.engine.dealing import HandState
from table_controller.domain.engine.hand import SeatState
from table_controller.domain.engine.outputs import GameEvent, GameEventKind
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.live import (
    EquitySpot,
    LiveEquity,
    public_readings,
)
from table_controller.domain.zones import ZoneKind
from table_controller.mqtt.payloads import (
    PUBLIC_EVENT_ADAPTER,
    SECURE_EVENT_ADAPTER,
    AlertPayload,
    NoticePayload,
    PublicEvent,
    PublicHandRecord,
    PublicState,
    SecureEvent,
    SecureHandRecord,
    SecureState,
)


def _envelope(table: str, hand: HandState | None) -> dict[str, Any]:
    # seq and ts are stamped by the publisher at publication time.
    return {"table": table, "hand": hand.number if hand else None, "seq": 0, "ts": 0.0}


def _alert_fields(alert: Alert | Notice) -> dict[str, Any]:
    # The report's form (an alert with its severity, a notice without): one shape
    # for the replay report, the alerts topic and the state's open alerts.
    return alert.as_dict()


def betting_of(hand: HandState | None) -> BettingHand | None:
    """The hand's betting (chips), or ``None`` on a card-only hand.

    The engine gives a hand its betting at the hand's first console input.
    """
    if hand is None or hand.console is None or not hand.console.betting_known:
        return None
    return hand.console.betting


Names = Mapping[int, tuple[str, str | None]]
"""seat -> (player name, country) from the console's ``cmd/seat`` (public)."""


def _state(table: str, seats: int, hand: HandState | None, game: Game,
           names: Names | None = None) -> dict[str, Any]:
    """The fields common to both snapshots (nothing computed from a down card)."""
    betting = betting_of(hand)
    # Without stacks from the hand command the engine bets from notional chips:
    # the pot and bets are real, the stacks are not, so they stay null (also for
    # a seat the hand's partial stacks left out, ops.py).
    given = hand.stacks if hand and hand.stacks is not None else {}
    stacks = {s: c for s, c in betting.stacks.items() if s in given} if betting else {}
    bets = betting.bets if betting else {}
    # Up cards only: the one reading fit for the public (docs/equity.md "Privacy").
    showing = public_readings(
        {seat_no: seat.up for seat_no, seat in hand.seats.items()} if hand else {}, game
    )
    rows = []
    for seat_no in range(1, seats + 1):
        seat = hand.seats.get(seat_no) if hand else None
        rows.append({
            "seat": seat_no,
            "status": seat.status.value if seat else "empty",
            "up": [card.code for card in seat.up] if seat else [],
            "up_row": _up_row(seat) if seat else [],
            # Down cards no reader read (issue 19) lie there too: counted, never named.
            "down_count": len(seat.down) + seat.unread_down if seat else 0,
            # Chips are public: the console's counts when it runs the hand.
            "stack": stacks.get(seat_no, seat.stack if seat else None),
            "bet": bets.get(seat_no),
            "showing": showing.get(seat_no),
            "name": names[seat_no][0] if names and seat_no in names else None,
            "country": names[seat_no][1] if names and seat_no in names else None,
        })
    return {
        **_envelope(table, hand),
        "seats": rows,
        "street": hand.street if hand else None,
        "bring_in": hand.bring_in if hand else None,
        "community": hand.community.code if hand and hand.community else None,
        "alerts": [_alert_fields(alert) for alert in hand.alerts] if hand else [],
        **_chips(betting),
    }


def _up_row(seat: SeatState) -> list[Any]:
    """The seat's face-up row in deal order, an unread up card (issue 19) as
    ``{"unread": true}`` (``payloads.UnreadCard``): a slot whose face nobody knows, so
    a broadcast does not show the seat a card short, and the producer sees where a
    manual entry is due."""
    # (deal number, order) of each slot: a card filled in late (a read or a manual
    # entry after later cards) still sits where it was dealt; a card held with no
    # deal number (a card the seat should not have) stays after the one before it.
    keyed: list[tuple[int, int, Any]] = []
    number = 0
    ordered = True
    for order, held in enumerate(seat.cards):
        if held.number:
            ordered = ordered and held.number > number
            number = held.number
        if held.face is ZoneKind.UP:
            keyed.append((number, order, held.card.code))
    if ordered and not seat.unread:  # (nearly every seat: the up cards as received)
        return [code for _number, _order, code in keyed]
    keyed.extend((unread, -1, {"unread": True}) for unread in seat.unread_up)
    return [slot for _number, _order, slot in sorted(keyed, key=_deal_order)]


def _deal_order(slot: tuple[int, int, Any]) -> tuple[int, int]:
    return slot[0], slot[1]


def _chips(betting: BettingHand | None) -> dict[str, Any]:
    """Pot, pots, whose turn and the legal actions (all empty without a console)."""
    if betting is None:
        return {"to_act": None, "pot": None, "pots": [], "legal_actions": []}
    return {
        "to_act": betting.to_act,
        "pot": betting.pot_total,
        "pots": [
            {"amount": pot.amount, "eligible": list(pot.eligible)} for pot in betting.pots()
        ],
        "legal_actions": [
            {
                "action": legal.action,
                "min_total": legal.min_total,
                "max_total": legal.max_total,
                "all_in": legal.all_in,
            }
            for legal in betting.legal_actions()
        ],
    }


def public_state(
    table: str, seats: int, hand: HandState | None, game: Game = Game.STUD,
    names: Names | None = None,
) -> PublicState:
    """The retained public snapshot: up cards, the *number* of down cards, what
    the up cards show, and the players' names."""
    return PublicState.model_validate(_state(table, seats, hand, game, names))


def secure_state(
    table: str,
    seats: int,
    hand: HandState | None,
    game: Game = Game.STUD,
    *,
    spot: EquitySpot | None = None,
    equity: LiveEquity | None = None,
    names: Names | None = None,
) -> SecureState:
    """The retained secure snapshot: the public one plus every seat's down cards, and
    the live seats' hands in words and equities of ``spot`` (the hand's current spot,
    ``None`` where equity does not apply) once ``equity`` for that very spot is
    known (both are computed off the engine thread)."""
    state = _state(table, seats, hand, game, names)
    return SecureState.model_validate(_add_secure(state, hand, spot, equity))


def state_payloads(
    table: str,
    seats: int,
    hand: HandState | None,
    game: Game = Game.STUD,
    *,
    spot: EquitySpot | None = None,
    equity: LiveEquity | None = None,
    names: Names | None = None,
) -> tuple[PublicState, SecureState]:
    """Both snapshots after a card, equal to :func:`public_state` and
    :func:`secure_state` of the same arguments, from one pass over the hand (the
    fields they share are computed once: issue 20, the per-card cost)."""
    state = _state(table, seats, hand, game, names)
    # Validated before the secure fields are added to the same rows: the public
    # model forbids extra keys, so a down card can never ride along.
    public = PublicState.model_validate(state)
    return public, SecureState.model_validate(_add_secure(state, hand, spot, equity))


def _add_secure(state: dict[str, Any], hand: HandState | None, spot: EquitySpot | None,
                equity: LiveEquity | None) -> dict[str, Any]:
    """``state`` (from :func:`_state`) with the secure fields added in place."""
    if equity is not None and equity.spot != spot:
        equity = None  # numbers of another position are never shown (no stale equity)
    readings = equity.readings if equity is not None else {}
    shares = equity.seats if equity is not None else {}
    outs = equity.outs if equity is not None else None
    for row in state["seats"]:
        seat_no = row["seat"]
        seat = hand.seats.get(seat_no) if hand else None
        share = shares.get(seat_no)
        row["down"] = [card.code for card in seat.down] if seat else []
        row["reading"] = readings.get(seat_no)
        row["equity"] = share.equity if share else None
        row["win"] = share.win if share else None
        row["tie"] = share.tie if share else None
        row["stderr"] = share.stderr if share else None
        row["outs"] = ([card.code for card in outs[1]]
                       if outs is not None and outs[0] == seat_no else None)
    state["equity_info"] = _equity_info(spot, equity)
    return state


def _equity_info(spot: EquitySpot | None, equity: LiveEquity | None) -> dict[str, Any] | None:
    if spot is None:
        return None
    if equity is None:
        return {"ready": False}
    return {
        "ready": True,
        "exact": equity.exact if equity.problem is None else None,
        "runouts": equity.runouts if equity.problem is None else None,
        "seed": equity.seed,
        "community": equity.community if equity.problem is None else None,
        "problem": equity.problem,
    }


def alert_payload(table: str, hand: HandState | None, alert: Alert) -> AlertPayload:
    """One alert for the ``alerts`` topic."""
    return AlertPayload.model_validate({**_envelope(table, hand), **_alert_fields(alert)})


def notice_payloads(
    table: str, hand: HandState | None, notice: Notice
) -> tuple[NoticePayload | None, NoticePayload]:
    """(public, secure) payloads of a notice. The public one is ``None`` when the
    notice is computed from down cards (``Notice.secret``): production room only."""
    payload = NoticePayload.model_validate({**_envelope(table, hand), **_alert_fields(notice)})
    return (None if notice.secret else payload), payload


def _event_fields(
    hand: HandState | None, event: GameEvent
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(public fields, secure fields) of ``event``, or ``None`` if it stays internal."""
    kind = event.kind
    card = event.card.code if event.card else None
    if kind is GameEventKind.HAND_STARTED:
        fields: dict[str, Any] = {"players": list(hand.players) if hand else []}
    elif kind is GameEventKind.CARD_DEALT_UP:
        fields = {"seat": event.seat, "card": card, "manual": event.manual}
    elif kind is GameEventKind.CARD_DEALT_DOWN:
        return {"kind": kind.value, "seat": event.seat, "manual": event.manual}, {
            "kind": kind.value, "seat": event.seat, "card": card, "manual": event.manual,
        }
    elif kind is GameEventKind.CARD_BURNED:
        return {"kind": kind.value}, {"kind": kind.value, "card": card}
    elif kind is GameEventKind.COMMUNITY_CARD:
        fields = {"card": card}
    elif kind is GameEventKind.STREET_STARTED:
        fields = {"street": event.street}
    elif kind is GameEventKind.ANNOUNCEMENT:
        fields = {"text": event.text, "seat": event.seat}
    elif kind is GameEventKind.HAND_DEAD:
        return _both(
            "announcement",
            {"text": f"Seat {event.seat}'s hand is dead ({event.text}).", "seat": event.seat},
        )
    elif kind is GameEventKind.FOLD:
        fields = {"seat": event.seat}
    elif kind is GameEventKind.ACTION:
        # The engine names what the action amounted to in ``text`` (an all-in
        # call is a "call") and the seat's total bet this round in ``amount``.
        fields = {"seat": event.seat, "action": event.text, "amount": event.amount}
    elif kind is GameEventKind.HAND_RESULT:
        fields = {
            "winners": list(event.winners),
            "shown": [
                {"seat": shown.seat, "cards": [c.code for c in shown.cards],
                 "description": shown.description}
                # Every hand shown down, winners first (issue 12): at the table
                # they were turned up. Folded hands never reach event.shown.
                for shown in event.shown
            ],
        }
    else:
        return None  # nothing else is published
    return _both(kind.value, fields)


def _both(kind: str, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    both = {"kind": kind, **fields}
    return both, dict(both)


def event_payloads(
    table: str, hand: HandState | None, event: GameEvent
) -> tuple[PublicEvent, SecureEvent] | None:
    """The public and secure payloads of a game event, or ``None`` if not published."""
    fields = _event_fields(hand, event)
    if fields is None:
        return None
    env = _envelope(table, hand)
    public, secure = fields
    return (
        PUBLIC_EVENT_ADAPTER.validate_python({**env, **public}),
        SECURE_EVENT_ADAPTER.validate_python({**env, **secure}),
    )


# --------------------------------------------------------------------------- hand record


@dataclass(slots=True)
class HandFacts:
    """What the hand record needs beyond the engine's hand, gathered by the daemon as
    the hand goes (and again from the journal at a restart): when it started (the
    journal time of its ``hand`` record), the dealer then, the betting actions, the
    alerts raised (with their ids) and notices, the hands shown down."""

    number: int
    started_ts: float
    dealer: Mapping[str, str] | None = None
    actions: list[tuple[int | None, int, str, int | None]] = field(default_factory=list)
    alerts: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, code, severity) of each alert raised in the hand."""
    notices: list[tuple[str, str, bool]] = field(default_factory=list)
    """(code, message, secret) of each notice."""
    shown: dict[int, list[str]] = field(default_factory=dict)
    up: dict[int, list[str]] = field(default_factory=dict)
    """seat -> up cards as dealt (a folded hand's cards leave its seat: the record
    keeps what the table saw)."""
    down: dict[int, list[str]] = field(default_factory=dict)
    """seat -> down cards as dealt: for the secure record only."""
    interrupted: bool = False

    def note_outputs(self, outputs: Sequence[object]) -> None:
        """Take the actions, notices and shown hands from engine outputs."""
        for output in outputs:
            if isinstance(output, Notice):
                self.notices.append((output.code.value, output.message, output.secret))
            elif isinstance(output, GameEvent):
                if output.kind is GameEventKind.ACTION and output.seat is not None:
                    self.actions.append((output.street, output.seat, output.text or "",
                                         output.amount))
                elif output.kind is GameEventKind.FOLD and output.seat is not None:
                    # A console fold comes as its action and this event; a fold
                    # by picking up the up cards (rule 10) as this event alone.
                    last = self.actions[-1] if self.actions else None
                    if last is None or last[1:3] != (output.seat, "fold"):
                        self.actions.append((output.street, output.seat, "fold", None))
                elif (output.kind is GameEventKind.CARD_DEALT_UP and output.seat is not None
                      and output.card is not None):
                    self.up.setdefault(output.seat, []).append(output.card.code)
                elif (output.kind is GameEventKind.CARD_DEALT_DOWN and output.seat is not None
                      and output.card is not None):
                    self.down.setdefault(output.seat, []).append(output.card.code)
                elif output.kind is GameEventKind.HAND_RESULT:
                    for shown in output.shown:
                        self.shown[shown.seat] = [card.code for card in shown.cards]


def hand_id(table: str, number: int, started_ts: float) -> str:
    """``<table>:<hand number>:<start in ms>``: unique per hand (hand numbers never go
    back on a table, and the start time tells apart a table whose journal was
    lost), and the same every time the hand is published: the archive's key."""
    return f"{table}:{number}:{round(started_ts * 1000)}"


def hand_records(
    table: str, hand: HandState, facts: HandFacts, ended_ts: float, *,
    game: Game = Game.STUD, names: Names | None = None,
) -> tuple[PublicHandRecord, SecureHandRecord]:
    """The finished hand's record: (public, secure). Pure.

    The public record's down cards are ``null``; its ``shown`` holds only the cards
    turned up at showdown (``hand_result``), which the table saw. A notice computed
    from down cards (rule 19) is in the secure record only.
    """
    betting = betting_of(hand)
    given = hand.stacks or {}
    stacks_end = betting.stacks if betting is not None else {}
    paid = ([op for op in betting.log if isinstance(op, PotAwarded)]
            if betting is not None else [])
    if facts.interrupted:
        ended = "interrupted"
    elif facts.shown:
        ended = "showdown"
    elif hand.winners:
        ended = "fold"
    else:
        ended = "killed"
    players = [
        {"seat": seat, "name": names[seat][0] if names and seat in names else None,
         "stack_start": given.get(seat),
         "stack_end": stacks_end.get(seat) if seat in given else None}
        for seat in hand.players
    ]
    common: dict[str, Any] = {
        **_envelope(table, hand),
        "hand_id": hand_id(table, hand.number, facts.started_ts),
        "game": str(game.value),
        "dealer": dict(facts.dealer) if facts.dealer else None,
        "started_ts": facts.started_ts,
        "ended_ts": ended_ts,
        "players": players,
        "actions": [{"street": street, "seat": seat, "action": action, "amount": amount}
                    for street, seat, action, amount in facts.actions],
        "up_cards": {str(s): list(facts.up.get(s, ())) for s in hand.players},
        "shown": {str(s): cards for s, cards in sorted(facts.shown.items())},
        "pot": sum(award.amount for award in paid) if betting is not None else None,
        "winners": list(hand.winners),
        "winners_high": list(hand.winners_high),
        "winners_low": list(hand.winners_low),
        "alerts": [{"id": i, "code": c, "severity": v} for i, c, v in facts.alerts],
        "ended": ended,
    }
    public = PublicHandRecord.model_validate({
        **common, "down_cards": None,
        "notices": [{"code": c, "message": m} for c, m, secret in facts.notices if not secret],
    })
    secure = SecureHandRecord.model_validate({
        **common,
        "down_cards": {str(s): list(facts.down.get(s, ())) for s in hand.players},
        "notices": [{"code": c, "message": m} for c, m, _ in facts.notices],
    })
    return public, secure
