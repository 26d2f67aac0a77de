"""Alerts and notices: stable codes, the seed rule each comes from, dealer messages.

An **alert** is for a person who must act: something went wrong at the table
(a dealing error, a console input refused) and the dealer or the floor has to
look at it. A **notice** is what the engine observed that needs no action: a
legal procedure the dealer announces (rule 15's community card), a legal but
noteworthy play (rule 19: a call into a hand already beaten on board, rule 10:
a fold by picking up the up cards). A legal hand dealt and played correctly
raises no alert; it may raise notices (docs/conformance.md).

One vocabulary (issue 10): :class:`AlertCode` holds every code the table
publishes, the engine's and the daemon's own (reader offline, journal damaged,
MQTT backlog...), and :data:`VOCABULARY` gives each its severity (None: a
notice), seed rule and meaning. docs/alerts.md is that table for people.

Codes are a public contract (docs/conformance.md): consumers match on them, so a
code is never renamed. Messages are for people and may improve over time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final


class AlertCode(StrEnum):
    """Every alert or notice code of the table: the engine's and the daemon's.

    Values are the stable wire codes. What each one means, how severe it is and
    which rule it comes from is in :data:`VOCABULARY` (and docs/alerts.md).
    """

    TOO_MANY_CARDS = "too_many_cards"
    SHORT_HAND = "short_hand"
    HOLE_CARD_EXPOSED = "hole_card_exposed"
    BOTH_HOLE_CARDS_EXPOSED = "both_hole_cards_exposed"
    UPCARD_DEALT_DOWN = "upcard_dealt_down"
    LAST_CARD_EXPOSED = "last_card_exposed"
    MISSING_BURN = "missing_burn"
    EXTRA_BURN = "extra_burn"
    PREMATURE_DEAL = "premature_deal"
    OUT_OF_ORDER = "out_of_order"
    CARD_TO_INACTIVE_SEAT = "card_to_inactive_seat"
    UNKNOWN_CARD = "unknown_card"
    DUPLICATE_CARD = "duplicate_card"
    CARD_FROM_MUCK = "card_from_muck"
    COMMUNITY_CARD = "community_card"
    WRONG_BRING_IN = "wrong_bring_in"
    OUT_OF_TURN = "out_of_turn"
    ILLEGAL_BET = "illegal_bet"
    # Beyond the contract's minimum list:
    MISDEAL = "misdeal"
    """Tournament profile: a down card dealt face up is a misdeal (rule 5)."""
    ILLEGAL_ACTION = "illegal_action"
    """A console action the betting state does not allow (e.g. check facing a bet)."""
    UPCARDS_LIFTED = "upcards_lifted"
    """Rule 10: a player picked up the up cards while facing a bet: a fold."""
    BEATEN_ON_BOARD = "beaten_on_board"
    """Rule 19: a call into a hand already beaten by an opponent's board."""
    UNEXPECTED_BOARD_CARD = "unexpected_board_card"
    """A card lands in the centre when no community card belongs there (rule 15)."""
    CARD_LEFT_TABLE = "card_left_table"
    """A card left a live seat and was not seen again while the seat played on."""
    FOLD_UNREAD = "fold_unread"
    """A seat's cards all left the table unseen by the muck: a fold, inferred."""
    MANUAL_CARD = "manual_card"
    """A card entered by hand for a tag no reader can read (a dead tag)."""
    CARD_UNREAD = "card_unread"
    CROSS_READ_TIE = "cross_read_tie"
    """A seat was dealt a down card no reader read (a stack too deep): inferred."""
    # The daemon's own (readers, journal, MQTT, console edge): no rule number.
    READER_OFFLINE = "reader_offline"
    WRONG_READER = "wrong_reader"
    READER_FAULT = "reader_fault"
    ENGINE_ERROR = "engine_error"
    JOURNAL_WRITE_FAILED = "journal_write_failed"
    JOURNAL_BACKLOG_FULL = "journal_backlog_full"
    JOURNAL_DAMAGED = "journal_damaged"
    JOURNAL_MISSING = "journal_missing"
    SEQUENCE_FILE_DAMAGED = "sequence_file_damaged"
    HAND_INTERRUPTED = "hand_interrupted"
    DAEMON_CANNOT_START = "daemon_cannot_start"
    CONSOLE_REJECTED = "console_rejected"
    ALERT_QUEUE_OVERFLOW = "alert_queue_overflow"
    MQTT_BACKLOG = "mqtt_backlog"
    MQTT_SESSION_TAKEN_OVER = "mqtt_session_taken_over"
    MQTT_LINK_UNSTABLE = "mqtt_link_unstable"
    TABLE_CLAIMED_TWICE = "table_claimed_twice"


class Severity(StrEnum):
    """How urgent an alert is, for the floor to sort by (notices have none).

    Ordered: :data:`SEVERITY_ORDER` lists them most urgent first.
    """

    CRITICAL = "critical"
    """The hand is dead or void, or the table's feed cannot be trusted right now
    (cards not read, not journaled, lost): stop and look."""
    ERROR = "error"
    """A dealing error (or a daemon fault) a person must correct."""
    WARNING = "warning"
    """Check this: an input was refused, or the link is struggling; nothing is
    wrong with the cards."""


SEVERITY_ORDER: Final = (Severity.CRITICAL, Severity.ERROR, Severity.WARNING)
"""Severities, most urgent first (a floor view sorts by the index)."""


class Source(StrEnum):
    """Who raises a code: the pure rules engine, or the daemon around it."""

    ENGINE = "engine"
    DAEMON = "daemon"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One row of the vocabulary: severity (None: a notice), seed rule, meaning."""

    severity: Severity | None
    rule: int | None
    meaning: str
    source: Source = Source.ENGINE

    @property
    def notice(self) -> bool:
        """Nobody must act: reported as a notice, not an alert."""
        return self.severity is None


_C, _E, _W = Severity.CRITICAL, Severity.ERROR, Severity.WARNING
_D = Source.DAEMON

VOCABULARY: Final[Mapping[AlertCode, CodeInfo]] = MappingProxyType({
    # -- the engine: dealing errors (docs/conformance.md's codes and ours)
    AlertCode.TOO_MANY_CARDS: CodeInfo(
        _C, 18, "a seat received an 8th card: the hand is dead"),
    AlertCode.SHORT_HAND: CodeInfo(
        _C, 18, "a seat reached showdown with fewer than seven cards: dead unless ruled live"),
    AlertCode.BOTH_HOLE_CARDS_EXPOSED: CodeInfo(
        _C, 5, "both hole cards landed face up: the hand is dead, the ante returned"),
    AlertCode.MISDEAL: CodeInfo(
        _C, 5, "tournament profile: a down card dealt face up is a misdeal"),
    AlertCode.HOLE_CARD_EXPOSED: CodeInfo(
        _E, 5, "a 1st or 2nd card landed face up: deal the 3rd card face down"),
    AlertCode.UPCARD_DEALT_DOWN: CodeInfo(
        _E, None, "a card that should be face up landed face down"),
    AlertCode.LAST_CARD_EXPOSED: CodeInfo(
        _E, 17, "a 7th-street card landed face up (rules 16, 17)"),
    AlertCode.MISSING_BURN: CodeInfo(_E, 13, "a street was dealt without a burn"),
    AlertCode.EXTRA_BURN: CodeInfo(_E, 13, "more than one card was burned for a street"),
    AlertCode.PREMATURE_DEAL: CodeInfo(
        _E, 14, "a card was dealt before the betting round was complete"),
    AlertCode.OUT_OF_ORDER: CodeInfo(
        _E, None, "a card went to a seat other than the next one due"),
    AlertCode.CARD_TO_INACTIVE_SEAT: CodeInfo(
        _E, 7, "a card went to a seat not (or no longer) in the hand"),
    AlertCode.UNKNOWN_CARD: CodeInfo(
        _E, None, "a tag that is not a registered card is on the table"),
    AlertCode.DUPLICATE_CARD: CodeInfo(
        _E, None, "a card appeared while it is already on the table (a second deck?)"),
    AlertCode.CARD_FROM_MUCK: CodeInfo(
        _E, None, "a card left the muck and landed at a seat"),
    AlertCode.UNEXPECTED_BOARD_CARD: CodeInfo(
        _E, 15, "a card landed in the centre where no community card belongs"),
    AlertCode.CARD_LEFT_TABLE: CodeInfo(
        _E, None, "a card left a live seat and was not seen on the table again while the"
        " seat played on: a palmed or lost card"),
    AlertCode.WRONG_BRING_IN: CodeInfo(
        _E, 9, "the console named a bring-in other than the low card"),
    # -- the engine: console inputs refused (nothing changed)
    AlertCode.OUT_OF_TURN: CodeInfo(
        _W, None, "a console action from a seat that is not due to act (refused)"),
    AlertCode.ILLEGAL_BET: CodeInfo(
        _W, 3, "a bet or raise of a size the structure does not allow (refused; rules 3, 4)"),
    AlertCode.ILLEGAL_ACTION: CodeInfo(
        _W, None, "a console action the betting does not allow now (refused)"),
    # -- the engine: notices (nobody must act)
    AlertCode.COMMUNITY_CARD: CodeInfo(
        None, 15, "the deck is short: a community card is used (announced, rule 12)"),
    AlertCode.UPCARDS_LIFTED: CodeInfo(
        None, 10, "up cards picked up facing a bet: a fold, applied"),
    AlertCode.BEATEN_ON_BOARD: CodeInfo(
        None, 19, "a call into a hand already beaten on board (secret: production only)"),
    AlertCode.FOLD_UNREAD: CodeInfo(
        None, None, "a seat's cards all left the table without the muck reading them:"
        " a fold, inferred"),
    AlertCode.MANUAL_CARD: CodeInfo(
        None, None, "a card was entered by hand for a tag no reader reads (replace the tag)"),
    AlertCode.CARD_UNREAD: CodeInfo(
        None, None, "a seat was dealt a card no reader read (a deep stack, a row of up"
        " cards, a dead tag): inferred from the deal order; enter it by hand to show it"),
    # -- the daemon
    AlertCode.CROSS_READ_TIE: CodeInfo(
        None, None, "two neighbouring antennas read one card alike and the deal order did"
        " not tell which it lies on: taken as the first read (look if it matters)", _D),
    AlertCode.READER_OFFLINE: CodeInfo(
        _C, None, "a reader is unplugged, silent or unusable: its zones are not read", _D),
    AlertCode.WRONG_READER: CodeInfo(
        _C, None, "another reader answers on a reader's port: its zones are not read", _D),
    AlertCode.ENGINE_ERROR: CodeInfo(
        _C, None, "the table controller failed on an input and skipped it", _D),
    AlertCode.JOURNAL_WRITE_FAILED: CodeInfo(
        _C, None, "the journal cannot be written: nothing new is published", _D),
    AlertCode.JOURNAL_BACKLOG_FULL: CodeInfo(
        _C, None, "too many cards wait for the journal: newer ones are lost", _D),
    AlertCode.JOURNAL_DAMAGED: CodeInfo(
        _C, None, "the journal was damaged at start: records were lost", _D),
    AlertCode.JOURNAL_MISSING: CodeInfo(
        _C, None, "the journal is gone: the hand in progress was not restored", _D),
    AlertCode.DAEMON_CANNOT_START: CodeInfo(
        _C, None, "the table controller cannot run: a person must fix it", _D),
    AlertCode.TABLE_CLAIMED_TWICE: CodeInfo(
        _C, None, "another daemon publishes (or tried to) as this table on the broker", _D),
    AlertCode.READER_FAULT: CodeInfo(
        _E, None, "a reader reports a hardware fault on an antenna", _D),
    AlertCode.HAND_INTERRUPTED: CodeInfo(
        _E, None, "a hand ended while the daemon was down: check its result", _D),
    AlertCode.ALERT_QUEUE_OVERFLOW: CodeInfo(
        _E, None, "alerts were dropped while the broker was unreachable", _D),
    AlertCode.MQTT_SESSION_TAKEN_OVER: CodeInfo(
        _E, None, "another client connected with the daemon's MQTT client id", _D),
    AlertCode.CONSOLE_REJECTED: CodeInfo(
        _W, None, "a console command was refused before the engine (malformed)", _D),
    AlertCode.MQTT_BACKLOG: CodeInfo(
        _W, None, "outgoing messages pile up for the broker: the feed lags", _D),
    AlertCode.MQTT_LINK_UNSTABLE: CodeInfo(
        _W, None, "the broker connection keeps dropping", _D),
    AlertCode.SEQUENCE_FILE_DAMAGED: CodeInfo(
        _W, None, "the sequence file was unreadable: seq goes on from the clock", _D),
})
"""The one table of codes: severity (None for a notice), seed rule (docs/rules.md), the
one-line meaning and who raises it. docs/alerts.md is this table for people; a test
keeps the two equal."""

del _C, _E, _W, _D

RULE_OF: Final[Mapping[AlertCode, int | None]] = MappingProxyType(
    {code: info.rule for code, info in VOCABULARY.items()})
"""The seed rule number (docs/rules.md) each alert comes from by default."""


def severity_of(code: AlertCode) -> Severity | None:
    """The severity of ``code`` (None: a notice, nobody must act)."""
    return VOCABULARY[code].severity


def alert_severity(code: AlertCode) -> Severity:
    """The severity of alert ``code``; ``ValueError`` if it is a notice's code."""
    severity = VOCABULARY[code].severity
    if severity is None:
        raise ValueError(f"{code.value} is a notice, not an alert")
    return severity


NOTICE_CODES: Final = frozenset(code for code, info in VOCABULARY.items() if info.notice)
"""Codes reported as notices, not alerts: nobody must act on them. The engine's, and
one of the daemon's (``cross_read_tie``, below).

* ``community_card`` (rule 15): the deck is short and the dealer announces a
  community card (rule 12): a correct procedure, not a mistake.
* ``beaten_on_board`` (rule 19): a legal call; the rule only says the caller has
  no claim to the money back.
* ``upcards_lifted`` (rule 10): picking up the up cards facing a bet *is* a fold;
  the engine has folded the hand already, as the rule says.
* ``fold_unread``: a seat's cards all left its zones and the muck did not read
  them (most muck piles cannot be read): the engine folded the seat, as a dealer
  would see it; nothing is wrong with the deal.
* ``manual_card``: the dealer entered a card a reader cannot read; counted so
  the floor can replace the tag.
* ``cross_read_tie`` (the daemon, from presence, issue 19): two neighbouring
  antennas read one card alike and neither strength nor the deal order told which
  it lies on; it was taken as the first read (docs/presence.md rule 1).
"""

SECRET_CODES: Final = frozenset({AlertCode.BEATEN_ON_BOARD})
"""Notices computed from a seat's down cards (rule 19 compares the caller's whole
hand with a board): they may go to the production room only, never to a public
topic or an info log."""


@dataclass(frozen=True, slots=True)
class _Finding:
    """What alerts and notices share: code, where, the seed rule and a message."""

    code: AlertCode
    seat: int | None
    street: int | None
    rule: int | None
    message: str
    at: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """As in the docs/conformance.md report (``code`` as its string)."""
        return {
            "code": self.code.value,
            "seat": self.seat,
            "street": self.street,
            "rule": self.rule,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Alert(_Finding):
    """One error at the table, for the dealer or floor supervisor who must act on it."""

    @property
    def severity(self) -> Severity:
        """How urgent (:data:`VOCABULARY`); an alert's code is never a notice's."""
        return alert_severity(self.code)

    def as_dict(self) -> dict[str, object]:
        """As in the docs/conformance.md report, with the extra ``severity`` field."""
        return {**_Finding.as_dict(self), "severity": self.severity.value}


@dataclass(frozen=True, slots=True)
class Notice(_Finding):
    """What the engine observed that needs no action (see :data:`NOTICE_CODES`).

    A sibling of :class:`Alert`, not a subclass: code that picks alerts out of
    the engine's outputs (``isinstance(output, Alert)``) never counts a notice.
    """

    @property
    def secret(self) -> bool:
        """Computed from down cards: production room only (:data:`SECRET_CODES`)."""
        return self.code in SECRET_CODES


def vocabulary_markdown() -> str:
    """:data:`VOCABULARY` as the Markdown table of docs/alerts.md (a test keeps the
    committed table equal to this): alerts by severity, then notices, in order."""
    rank = {severity: index for index, severity in enumerate(SEVERITY_ORDER)}
    rows = sorted(
        VOCABULARY.items(),
        key=lambda item: (rank.get(item[1].severity, len(rank)) if item[1].severity
                          else len(rank), item[1].source != Source.ENGINE),
    )
    lines = [
        "| code | severity | rule | raised by | meaning |",
        "|---|---|---|---|---|",
    ]
    for code, info in rows:
        severity = info.severity.value if info.severity else "notice"
        rule = str(info.rule) if info.rule is not None else "—"
        lines.append(f"| `{code.value}` | {severity} | {rule} | {info.source.value} |"
                     f" {info.meaning} |")
    return "\n".join(lines) + "\n"
