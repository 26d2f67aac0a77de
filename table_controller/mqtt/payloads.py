"""Pydantic models of every MQTT payload, and their JSON Schema export.

Every payload carries the same envelope (:class:`Envelope`):

* ``table``: the table id;
* ``hand``: the hand number, or ``null`` between hands / before the first;
* ``seq``: per-table sequence number, stamped by the publisher in publication
  order across *all* topics of the table, persisted so it never goes backwards
  across restarts (a restart may skip numbers: a gap means "resynchronise from
  the retained topics", see docs/mqtt.md);
* ``ts``: publication time as Unix epoch seconds (UTC), a JSON number with
  sub-millisecond precision. Chosen over ISO-8601 strings because consumers
  compare and subtract timestamps, and a number needs no parsing or zone rules.

Public and secure models are *separate* classes (siblings, never subclasses),
every model forbids extra keys, and no public model has a field that could hold
a down card's identity: putting a secure seat or event into a public payload is
a validation error, not a convention. Tag UIDs appear in no model at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

from table_controller.domain.engine.alerts import (
    NOTICE_CODES,
    VOCABULARY,
    AlertCode,
    Severity,
    alert_severity,
)
from table_controller.domain.events import BetAction
from table_controller.domain.zones import MAX_SEATS

CardCode = Annotated[str, StringConstraints(pattern=r"^[2-9TJQKA][cdhs]$")]
"""A card as its two-character code (docs/conformance.md), e.g. ``Kd``."""

Seat = Annotated[int, Field(ge=1, le=MAX_SEATS)]
"""A seat number, 1..8."""

Street = Annotated[int, Field(ge=3, le=7)]
"""A street number, 3..7."""

ZoneName = Annotated[
    str, StringConstraints(pattern=r"^(seat[1-8]\.(down|up)|burn|muck|board)$")
]
"""A zone name from docs/conformance.md."""

SeatStatus = Literal["active", "folded", "dead", "empty"]
"""``empty``: nobody dealt in at that seat this hand."""


class _Model(BaseModel):
    # Frozen so a payload held for republishing cannot be changed under the
    # publisher; extra="forbid" so nothing sneaks in (above all, no down cards).
    # revalidate_instances="always" so a model instance of the wrong class (a
    # secure seat in a public state) is rejected instead of passed through.
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        revalidate_instances="always",
        # Every key is always present in what we publish, defaults included.
        json_schema_serialization_defaults_required=True,
    )


class Envelope(_Model):
    """Fields common to every payload (see the module docstring)."""

    table: str = Field(description="Table id.")
    hand: int | None = Field(description="Hand number, or null outside a hand.")
    seq: int = Field(ge=0, description="Per-table sequence number; stamped by the publisher.")
    ts: float = Field(description="Publication time, Unix epoch seconds (UTC).")


# --------------------------------------------------------------------------- status


DaemonStatus = Literal["online", "degraded", "failed", "offline", "lost"]
"""``degraded``: running, but something needs a person (``reason`` says what,
e.g. the journal cannot be written); ``failed``: the daemon cannot run and is
exiting (``reason`` says why)."""


class StatusPayload(Envelope):
    """``status`` topic: whether the daemon is connected, and healthy.

    ``lost`` is the MQTT will, registered when the connection is made, so its
    ``seq``/``ts`` are those of that moment, not of the loss.
    """

    status: DaemonStatus
    reason: str | None = Field(
        default=None, description="What is wrong, for degraded and failed; else null."
    )


class ClaimPayload(_Model):
    """``secure/claim`` (retained): which running daemon publishes as this table
    (issue 21 item 6; docs/mqtt.md "One daemon per table"). A daemon publishes its
    claim with every ``status``; a starting one first sends a ``probe`` (not
    retained) that a live daemon answers with its claim."""

    table: str = Field(description="Table id.")
    seq: int = Field(ge=0, description="Per-table sequence number; stamped by the publisher.")
    ts: float = Field(description="Publication time, Unix epoch seconds (UTC).")
    instance: str = Field(description="Random id of the daemon process (new at each start).")
    pid: int = Field(description="Process id of the daemon on its host.")
    host: str = Field(description="Host name of the daemon's machine.")
    since: float = Field(description="When the daemon started, Unix epoch seconds (UTC).")
    probe: bool = Field(description="A starting daemon asking whether one is live already.")


# --------------------------------------------------------------------------- alerts


class AlertFields(_Model):
    """One alert or notice (docs/conformance.md alert codes; docs/alerts.md)."""

    code: AlertCode = Field(description="Stable code, e.g. missing_burn (docs/alerts.md).")
    seat: Seat | None = None
    street: Street | None = None
    rule: int | None = Field(default=None, description="Rule number in docs/rules.md, or null.")
    message: str = Field(description="Readable text for the floor.")


_ALERT_SEVERITY: Final = {
    code.value: info.severity for code, info in VOCABULARY.items() if info.severity is not None
}


class _Severe(AlertFields):
    """An alert's fields plus its ``severity``, which the code decides (issue 10).

    Builders pass ``severity=alert_severity(code)``, the one vocabulary's entry
    (engine.alerts.VOCABULARY), or no severity at all from a dict (it is filled
    in); any other severity, or a notice's code (it has none), is a validation
    error, so no call site can pick its own.
    """

    severity: Severity = Field(
        description="critical (hand dead or feed not trustworthy), error (a dealing or"
        " daemon error to fix) or warning (check this); decided by the code."
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_severity(cls, data: Any) -> Any:
        # A payload built from a dict without severity (tests, a consumer's own
        # tools) gets the code's; the check below refuses a disagreeing one.
        if isinstance(data, dict) and "severity" not in data:
            code = data.get("code")
            if code in NOTICE_CODES:
                raise ValueError(f"{code} is a notice, not an alert")
            if isinstance(code, str) and code in _ALERT_SEVERITY:
                return {**data, "severity": _ALERT_SEVERITY[code]}
        return data

    @model_validator(mode="after")
    def _severity_of_code(self) -> _Severe:
        expected = alert_severity(self.code)  # a notice's code is refused here
        if self.severity is not expected:
            raise ValueError(
                f"severity of {self.code.value} is {expected.value}, not {self.severity.value}"
            )
        return self


class OpenAlert(_Severe):
    """An alert still open in the current hand, as listed inside a state snapshot."""


class DealerInfo(_Model):
    """The dealer on duty (issue 14): a badge id and a name, both public."""

    id: str = Field(description="Dealer id, e.g. D17.")
    name: str = Field(description="Dealer's name as signed in.")


class AlertPayload(_Severe, Envelope):
    """``alerts`` topic: one alert as it happens (issue 14: with its id, the dealer on
    duty and its state, always ``open`` when raised)."""

    id: str = Field(default="", description="Stable alert id, unique per table and never"
                    " reused: <table>:<number> (docs/alerts.md \"Lifecycle\").")
    dealer: DealerInfo | None = Field(default=None, description="Dealer on duty, or null.")
    state: Literal["open"] = "open"


AlertState = Literal["open", "acknowledged"]
"""States of an alert still on ``alerts/open`` (a resolved one leaves the list)."""


class FloorAlert(_Severe):
    """One alert not yet resolved, as listed on ``alerts/open``."""

    id: str = Field(description="The alert's id (as on ``alerts``).")
    hand: int | None = Field(description="Hand it was raised in, or null.")
    raised_ts: float = Field(description="When it was raised, Unix epoch seconds.")
    dealer: DealerInfo | None = Field(description="Dealer on duty when it was raised.")
    state: AlertState
    acknowledged_by: str | None = Field(description="Who acknowledged it, or null.")
    acknowledged_ts: float | None = Field(description="When it was acknowledged, or null.")


class OpenAlertsPayload(Envelope):
    """``alerts/open`` (retained): every alert of the table not yet resolved, oldest
    first; republished on every change."""

    alerts: list[FloorAlert]


class AlertChangePayload(Envelope):
    """``alerts/changes``: one lifecycle change of an alert."""

    id: str = Field(description="The alert's id.")
    state: Literal["acknowledged", "resolved"]
    by: str = Field(description="Who acknowledged or resolved it.")
    note: str | None = Field(description="How it was resolved (resolve only), else null.")
    at_ts: float = Field(description="When, Unix epoch seconds.")


class DealerPayload(Envelope):
    """``dealer`` (retained): the dealer on duty, or null, since when."""

    dealer: DealerInfo | None
    since: float | None = Field(description="Sign-in (or sign-out) time; null if never.")


class NoticePayload(AlertFields, Envelope):
    """``notices`` / ``secure/notices`` topics: what the engine observed that needs
    no action (rule 15's community card, a rule-19 call into a hand beaten on
    board...), with the same fields as an alert. A notice computed from a down
    card (``beaten_on_board``) goes to ``secure/notices`` only."""


# --------------------------------------------------------------------------- state


class UnreadCard(_Model):
    """A card slot of a seat's face-up row whose face nobody knows: the engine knows
    the seat was dealt an up card there that no reader read (issue 19; docs/engine.md
    "Reads that fail"). A later read or a manual entry (``cmd/card``) fills it."""

    unread: Literal[True] = Field(
        default=True, description="Always true: the slot's card was dealt, never read.")


UpSlot = CardCode | UnreadCard
"""One slot of a seat's face-up row: the card read, or :class:`UnreadCard`."""


class _SeatBase(_Model):
    seat: Seat
    status: SeatStatus
    up: list[CardCode] = Field(
        description="Face-up cards read, in the order received (an up card no reader"
        " read is not here: see up_row).")
    up_row: list[UpSlot] = Field(
        default_factory=list,
        description="The face-up row in deal order: each card read as its code, each up"
        " card dealt that no reader read as {\"unread\": true} (its face unknown to"
        " everyone) until a read or a manual entry gives it.")
    down_count: int = Field(ge=0, description="Number of face-down cards held.")
    stack: int | None = Field(default=None, description="Chips behind, when known.")
    bet: int | None = Field(
        default=None,
        description="Chips in front of the seat this betting round (null without a console).",
    )
    showing: str | None = Field(
        default=None,
        description="What the up cards show, in words ('Pair of nines showing'); null"
        " without an up card. Computed from the up cards only.",
    )
    name: str | None = Field(
        default=None, description="The player's name from the console's cmd/seat, or null."
    )
    country: str | None = Field(
        default=None, description="The player's ISO 3166 country code (cmd/seat), or null."
    )


class PublicSeat(_SeatBase):
    """A seat as the public sees it: up cards and only the *number* of down cards."""


Share = Annotated[float, Field(ge=0.0, le=1.0)]
"""A share of the pot, 0..1."""


class SecureSeat(_SeatBase):
    """A seat for the production room: also the down cards, in the order received,
    and what is computed from them (its hand in words, its pot equity, its outs)."""

    down: list[CardCode] = Field(description="Face-down cards in the order received.")
    reading: str | None = Field(
        default=None,
        description="The seat's best hand now, down cards included ('Two pair, kings and"
        " fives'); null for a seat not in the hand or folded.",
    )
    equity: Share | None = Field(
        default=None,
        description="Expected share of the pot if every live seat went to showdown; null"
        " while it is computed or where it does not apply (see the state's equity_info).",
    )
    win: Share | None = Field(
        default=None, description="Share of run-outs where the seat takes the whole pot."
    )
    tie: Share | None = Field(
        default=None, description="What the seat gets from divided pots (equity - win)."
    )
    stderr: float | None = Field(
        default=None, ge=0.0, description="Standard error of equity (Monte Carlo only)."
    )
    outs: list[CardCode] | None = Field(
        default=None,
        description="Heads-up, 5th and 6th street: the unseen cards that would put this"
        " seat (the one behind) ahead; null otherwise.",
    )


ConsoleActionName = BetAction
"""A betting action as the console names it (the one enum, ``events.BetAction``)."""


class LegalActionPayload(_Model):
    """An action the seat to act may take now, with the bet totals it leads to.

    ``min_total``/``max_total`` are the seat's total bet this round after the
    action (equal, except for the open-pair bet of rule 4: small or big bet).
    """

    action: ConsoleActionName
    min_total: int = Field(ge=0)
    max_total: int = Field(ge=0)
    all_in: bool = Field(default=False, description="The action takes the whole stack.")


class PotPayload(_Model):
    """One pot from the finished betting rounds: main pot first, then side pots."""

    amount: int = Field(ge=0)
    eligible: list[Seat] = Field(description="Seats that can win this pot.")


class _StateBase(Envelope):
    street: Street | None = Field(description="Street being dealt or bet, or null.")
    bring_in: Seat | None = Field(description="Seat that must bring it in, once known.")
    to_act: Seat | None = Field(description="Seat due to act, when known (needs a console).")
    community: CardCode | None = Field(description="Community card of rule 15, or null.")
    alerts: list[OpenAlert] = Field(description="Alerts open in this hand, oldest first.")
    pot: int | None = Field(
        default=None,
        description="Total chips in play: the pots plus the bets in front (null without a"
        " console).",
    )
    pots: list[PotPayload] = Field(
        default_factory=list,
        description="Main and side pots of the finished rounds (bets in front not included).",
    )
    legal_actions: list[LegalActionPayload] = Field(
        default_factory=list, description="What the seat in to_act may do now."
    )


class PublicState(_StateBase):
    """``state`` topic: retained public snapshot. Never a live down card's identity."""

    seats: list[PublicSeat]


class EquityInfo(_Model):
    """How the seats' equities of a secure state were computed (docs/equity.md).

    ``ready`` false: the numbers for this position are being computed (the seats'
    ``equity`` are null); a newer ``secure/state`` brings them. ``problem``: the
    position has no equity (e.g. a card seen twice), and why.
    """

    ready: bool
    exact: bool | None = Field(default=None, description="Enumerated (true) or sampled.")
    runouts: int | None = Field(default=None, ge=0, description="Run-outs counted or sampled.")
    seed: int | None = Field(default=None, description="Monte Carlo seed, or null when exact.")
    community: bool | None = Field(
        default=None, description="The last card is (or was) rule 15's community card."
    )
    problem: str | None = Field(default=None, description="Why there are no numbers.")


class SecureState(_StateBase):
    """``secure/state`` topic: the same snapshot with every seat's down cards, and the
    equities and readings computed from them."""

    seats: list[SecureSeat]
    equity_info: EquityInfo | None = Field(
        default=None,
        description="How the equities were computed; null where equity does not apply"
        " (fewer than two live seats, 3rd street not yet dealt to every seat).",
    )


# --------------------------------------------------------------------------- events


class HandStartedEvent(Envelope):
    """A new hand: the seats that anted in."""

    kind: Literal["hand_started"] = "hand_started"
    players: list[Seat]


class CardDealtUpEvent(Envelope):
    """A card landed face up at a seat."""

    kind: Literal["card_dealt_up"] = "card_dealt_up"
    seat: Seat
    card: CardCode
    manual: bool = Field(
        default=False,
        description="Entered by hand at the console for a tag no reader can read (a dead"
        " tag); false for a card the readers saw.")


class PublicCardDealtDownEvent(Envelope):
    """A card landed face down at a seat; the public learns only that it did."""

    kind: Literal["card_dealt_down"] = "card_dealt_down"
    seat: Seat
    manual: bool = Field(
        default=False,
        description="Entered by hand at the console for a tag no reader can read (a dead"
        " tag); false for a card the readers saw.")


class SecureCardDealtDownEvent(Envelope):
    """A card landed face down at a seat, with its identity (secure stream only)."""

    kind: Literal["card_dealt_down"] = "card_dealt_down"
    seat: Seat
    card: CardCode
    manual: bool = Field(
        default=False,
        description="Entered by hand at the console for a tag no reader can read (a dead"
        " tag); false for a card the readers saw.")


class PublicCardBurnedEvent(Envelope):
    """The dealer burned a card; its identity stays hidden."""

    kind: Literal["card_burned"] = "card_burned"


class SecureCardBurnedEvent(Envelope):
    """The dealer burned a card, with its identity (secure stream only)."""

    kind: Literal["card_burned"] = "card_burned"
    card: CardCode


class CommunityCardEvent(Envelope):
    """The community card of rule 15 was turned up in the centre."""

    kind: Literal["community_card"] = "community_card"
    card: CardCode


class StreetStartedEvent(Envelope):
    """Dealing of a street began."""

    kind: Literal["street_started"] = "street_started"
    street: Street


class AnnouncementEvent(Envelope):
    """What the dealer announces under rule 12 (low card, high hand, pairs, raises)."""

    kind: Literal["announcement"] = "announcement"
    text: str
    seat: Seat | None = None


class ActionEvent(Envelope):
    """A betting action entered at the dealer's console."""

    kind: Literal["action"] = "action"
    seat: Seat
    action: ConsoleActionName = Field(
        description="What the action amounted to (an all-in is named for what it was)."
    )
    amount: int | None = Field(
        default=None, description="The seat's total bet this round after the action."
    )


class FoldEvent(Envelope):
    """A seat folded (from the console or its cards reaching the muck)."""

    kind: Literal["fold"] = "fold"
    seat: Seat


class ShownHand(_Model):
    """A hand shown at showdown: its seven (or fewer) cards and their description."""

    seat: Seat
    cards: list[CardCode]
    description: str = Field(description="e.g. 'two pair, kings and nines'.")


class HandResultEvent(Envelope):
    """The hand ended: winners, and the hands shown at showdown (public by then)."""

    kind: Literal["hand_result"] = "hand_result"
    winners: list[Seat]
    shown: list[ShownHand]


PublicEvent = Annotated[
    HandStartedEvent
    | CardDealtUpEvent
    | PublicCardDealtDownEvent
    | PublicCardBurnedEvent
    | CommunityCardEvent
    | StreetStartedEvent
    | AnnouncementEvent
    | ActionEvent
    | FoldEvent
    | HandResultEvent,
    Field(discriminator="kind"),
]
"""One message of the ``events`` topic, told apart by ``kind``."""

SecureEvent = Annotated[
    HandStartedEvent
    | CardDealtUpEvent
    | SecureCardDealtDownEvent
    | SecureCardBurnedEvent
    | CommunityCardEvent
    | StreetStartedEvent
    | AnnouncementEvent
    | ActionEvent
    | FoldEvent
    | HandResultEvent,
    Field(discriminator="kind"),
]
"""One message of the ``secure/events`` topic, told apart by ``kind``."""

PUBLIC_EVENT_ADAPTER: Final[TypeAdapter[PublicEvent]] = TypeAdapter(PublicEvent)
"""Validates/parses a public event payload (``PUBLIC_EVENT_ADAPTER.validate_json(b)``)."""

SECURE_EVENT_ADAPTER: Final[TypeAdapter[SecureEvent]] = TypeAdapter(SecureEvent)
"""Validates/parses a secure event payload."""


# --------------------------------------------------------------------------- readers


ReaderProblem = Literal[
    "port_missing", "permission_denied", "port_busy", "open_failed", "port_lost",
    "no_hello", "wrong_reader", "incompatible", "silent",
]
"""Why a reader is not being read (``firmware_bridge.link.LinkProblem``)."""


class ReaderStatus(Envelope):
    """``readers/<reader>`` topic: one reader's link health. Never a tag UID.

    Retained, and republished only when what it shows changes (state, reason,
    firmware, heartbeat, error counters): a reader retrying every 2 s does not
    flap it."""

    reader: str = Field(description="Reader id from the layout file.")
    state: str = Field(
        description="Connection state: online, stale, offline, connecting, handshake,"
        " wrong_reader, incompatible, stopped."
    )
    reason: ReaderProblem | None = Field(
        default=None, description="Why the reader is not being read, or null while it is."
    )
    detail: str = Field(
        default="", description="One line about the reason (the OS error, the id that answered)."
    )
    firmware: str | None = Field(
        default=None, description="Firmware version from the reader's HELLO (major.minor.patch)."
    )
    last_heartbeat: float | None = Field(
        description="Unix epoch seconds of the last heartbeat frame, or null if none yet."
    )
    frame_errors: dict[str, int] = Field(
        description="Counters of rejected frames by reason (e.g. crc, framing, oversize)."
    )
    zones: list[ZoneName] = Field(description="Zones this reader's antennas cover.")


class AntennaStats(_Model):
    """One antenna port's figures on ``readers/<reader>/stats``: counts only."""

    port: int = Field(ge=0, le=15, description="Antenna port on the reader, 0..15.")
    zone: ZoneName | None = Field(description="The zone the layout maps it to, or null.")
    tags: int = Field(ge=0, description="How many tags the antenna sees now (never which).")
    reads_per_s: float = Field(
        ge=0, description="Tag reports per second over the last 5 s (arrivals and inventories)."
    )
    dropouts: int = Field(
        ge=0, description="Tags gone and back within 1.5 s since the daemon started."
    )


class ReaderStats(_Model):
    """``readers/<reader>/stats`` topic (not retained, every 5 s): one reader's
    figures for the producer and floor pages. Counts only: never a tag UID, and
    nothing that tells which card lies in a zone.

    Not an :class:`Envelope`: an observation beside the table's sequenced stream,
    not part of it, so it takes no ``seq`` (a consumer that does not follow it
    sees no gap) and no ``hand``."""

    table: str = Field(description="Table id.")
    ts: float = Field(description="Publication time, Unix epoch seconds (UTC).")
    reader: str = Field(description="Reader id from the layout file.")
    state: str = Field(description="Connection state, as on readers/<reader>.")
    firmware: str | None = Field(description="Firmware version from HELLO, or null.")
    heartbeat_age: float | None = Field(
        description="Seconds since the last heartbeat, or null if none yet."
    )
    frame_errors: dict[str, int] = Field(
        description="The same counters as readers/<reader>; missed counts sequence gaps."
    )
    antennas: list[AntennaStats] = Field(description="Every port of the reader, in port order.")


# --------------------------------------------------------------------------- console


class ConsoleReply(_Model):
    """The answer to a console command, published on the request's response topic
    with its correlation data (MQTT 5). Not an :class:`Envelope`: it is not part
    of the table's sequenced stream.
    """

    table: str = Field(description="Table id.")
    command: str = Field(description="The command answered (the <name> of cmd/<name>).")
    accepted: bool
    code: str | None = Field(
        description="Why the command was rejected (stable code), or null when accepted."
    )
    reason: str = Field(description="Readable reason of a rejection; empty when accepted.")
    hand: int | None = Field(description="Hand number after the command, or null.")
    to_act: Seat | None = Field(description="Seat due to act after the command, or null.")
    pot: int | None = Field(description="Total chips in play after the command, or null.")


# --------------------------------------------------------------------------- hand record


class HandPlayer(_Model):
    """A player of a finished hand."""

    seat: Seat
    name: str | None = Field(description="Player's name from cmd/seat, or null.")
    stack_start: int | None = Field(description="Chips behind after the ante, if given.")
    stack_end: int | None = Field(description="Chips behind at the end, if known.")


class HandAction(_Model):
    """A betting action of a finished hand, in order."""

    street: Street | None
    seat: Seat
    action: str = Field(description="bring_in, complete, bet, raise, call, check, fold...")
    amount: int | None = Field(description="The seat's total bet this round after it.")


class HandAlertRef(_Model):
    """An alert raised during the hand (details: ``alerts``, by id)."""

    id: str
    code: AlertCode
    severity: Severity


class HandNoticeRef(_Model):
    """A notice of the hand."""

    code: AlertCode
    message: str


HandEnd = Literal["showdown", "fold", "killed", "interrupted"]
"""How a hand ended: shown down; one player left; closed without a result (every
other hand dead, or closed at the console first); ended while the daemon was down."""


class _HandRecordBase(Envelope):
    hand_id: str = Field(description="<table>:<hand number>:<start ms>: unique, the"
                         " archive's idempotency key.")
    game: str = Field(description="stud, razz or stud8.")
    dealer: DealerInfo | None = Field(description="Dealer on duty at the hand's start.")
    started_ts: float
    ended_ts: float
    players: list[HandPlayer]
    actions: list[HandAction]
    up_cards: dict[str, list[CardCode]] = Field(description="seat -> face-up cards.")
    shown: dict[str, list[CardCode]] = Field(
        description="seat -> the cards shown at showdown (winners and callers).")
    pot: int | None = Field(description="Chips paid out, or null on a card-only table.")
    winners: list[Seat]
    winners_high: list[Seat]
    winners_low: list[Seat]
    alerts: list[HandAlertRef]
    notices: list[HandNoticeRef]
    ended: HandEnd


class PublicHandRecord(_HandRecordBase):
    """``hands``: a finished hand, with no down card that was not shown."""

    down_cards: None = Field(default=None, description="Always null on the public topic.")


class SecureHandRecord(_HandRecordBase):
    """``secure/hands``: the same record plus every seat's down cards."""

    down_cards: dict[str, list[CardCode]] = Field(description="seat -> face-down cards.")


# --------------------------------------------------------------------------- schemas

SCHEMAS: Final[dict[str, TypeAdapter[Any]]] = {
    "status": TypeAdapter(StatusPayload),
    "claim": TypeAdapter(ClaimPayload),
    "state": TypeAdapter(PublicState),
    "secure-state": TypeAdapter(SecureState),
    "event": PUBLIC_EVENT_ADAPTER,
    "secure-event": SECURE_EVENT_ADAPTER,
    "alert": TypeAdapter(AlertPayload),
    "notice": TypeAdapter(NoticePayload),
    "reader": TypeAdapter(ReaderStatus),
    "reader-stats": TypeAdapter(ReaderStats),
    "console-reply": TypeAdapter(ConsoleReply),
    "alerts-open": TypeAdapter(OpenAlertsPayload),
    "alert-change": TypeAdapter(AlertChangePayload),
    "dealer": TypeAdapter(DealerPayload),
    "hand": TypeAdapter(PublicHandRecord),
    "secure-hand": TypeAdapter(SecureHandRecord),
}
"""Schema file stem -> the payload type it describes."""


def render_json_schemas() -> dict[str, str]:
    """Return ``{file name: JSON text}`` for every payload schema (deterministic)."""
    return {
        f"{name}.schema.json": json.dumps(adapter.json_schema(mode="serialization"), indent=2)
        + "\n"
        for name, adapter in SCHEMAS.items()
    }


def export_json_schemas(directory: Path | str) -> list[Path]:
    """Write one JSON Schema per payload into ``directory``; return the paths written."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_json_schemas().items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def to_json(payload: BaseModel) -> bytes:
    """Serialize a payload as compact JSON bytes, the form published on MQTT."""
    return payload.model_dump_json().encode("utf-8")
