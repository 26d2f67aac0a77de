"""One hand of stud as data: its phase, its seats and the cards they hold.

A :class:`HandState` is the unit of the engine (issue 10): everything known about
one hand, with a :class:`Phase` saying where it is in its life (docs/engine.md
draws the state machine). The dealing tracker (:mod:`.dealing`) changes it; the
console rules (:mod:`.console`) read it; reports and the daemon read it. Nothing
here emits anything: this module only holds and answers questions about state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.port import CARD_ONLY, ConsoleRules, HandRules
from table_controller.domain.engine.variants import Game
from table_controller.domain.zones import Zone, ZoneKind

__all__ = [
    "CARDS_PER_HAND",
    "DOWN",
    "UP",
    "HandState",
    "HeldCard",
    "Phase",
    "Reshuffle",
    "RoundPicture",
    "RoundUnread",
    "SeatState",
    "SeatStatus",
    "expected_face",
    "street_of_card",
]


class Phase(StrEnum):
    """The phases of a hand (docs/engine.md "The hand's phases").

    Betting rounds are not phases of the hand here: they belong to the console's
    :class:`~table_controller.domain.engine.betting.BettingHand`, and a card-only hand has
    none. "Showdown due" (every live seat has its seven cards) is read off the
    cards, not stored, because a correction can undo it.
    """

    FORMING = "forming"
    """Auto hand (no player list): the first round is being dealt and every seat
    that gets a card joins the hand."""
    DEALING = "dealing"
    """Players known: cards are dealt and checked, streets and bets go on."""
    ENDED = "ended"
    """The hand has its result (showdown, the last seat standing, or closed without
    one). Cards still on the table are being gathered up; they change nothing."""
    CLEARED = "cleared"
    """Auto hands only: ended, and every seat zone emptied; the next card dealt to a
    seat or the burn pile starts the next hand."""


# Module globals, read for every card: on Python 3.11 ``Enum.MEMBER`` goes through
# EnumType.__getattr__ (about 0.1 us; gone in 3.12).
_FORMING, _ENDED, _CLEARED = Phase.FORMING, Phase.ENDED, Phase.CLEARED


class Reshuffle(StrEnum):
    """Rule 15's short deck on 7th street, as far as the burns go."""

    NONE = "none"
    """The burn pile was not gathered."""
    BURN_DUE = "burn_due"
    """Gathered and scrambled: a burn comes before the next card."""
    DONE = "done"
    """Gathered, and the burn after the scramble was made (or its absence flagged)."""


CARDS_PER_HAND = 7
"""A stud hand is seven cards (rule 18)."""

DOWN = ZoneKind.DOWN
UP = ZoneKind.UP


STREET_OF_CARD = (3, 3, 3, 3, 4, 5, 6, 7)
"""Street of the n-th card for n = 0..7 (a table: this is asked for every card)."""


def street_of_card(number: int) -> int:
    """The street on which a seat's ``number``-th card (1-based) is dealt.

    An eighth card or more still belongs to 7th street (rule 18 kills the hand).
    """
    return STREET_OF_CARD[number] if 0 <= number <= CARDS_PER_HAND else (
        3 if number < 0 else CARDS_PER_HAND)


FACE_OF_CARD = (DOWN, DOWN, DOWN, UP, UP, UP, UP, DOWN)
"""The face of the n-th card for n = 0..7 (a table: this is asked for every card)."""


def expected_face(number: int) -> ZoneKind:
    """The face a seat's ``number``-th card is dealt with when nothing went wrong."""
    return FACE_OF_CARD[number] if 0 <= number <= CARDS_PER_HAND else DOWN


class SeatStatus(StrEnum):
    """Status of a seat in the hand (docs/conformance.md report values)."""

    ACTIVE = "active"
    FOLDED = "folded"
    DEAD = "dead"


_ACTIVE = SeatStatus.ACTIVE  # read per seat whenever the live seats change


@dataclass(slots=True)
class HeldCard:
    """A card a seat owns: its face, its deal number, and whether its tag is seen."""

    card: Card
    face: ZoneKind
    number: int
    present: bool = True
    exposed_hole: bool = False


@dataclass(slots=True)
class SeatState:
    """One seat dealt into the hand."""

    seat: int
    status: SeatStatus = SeatStatus.ACTIVE
    cards: list[HeldCard] = field(default_factory=list)
    received: int = 0
    exposed_holes: int = 0
    stack: int | None = None
    unread: int = 0
    """Cards dealt to the seat that no reader read (``unread_stacks``: a deep stack, a
    dead tag): counted in ``received`` and at showdown, unknown to the report."""
    unread_numbers: list[int] = field(default_factory=list)
    """The deal numbers (1-7) of the :attr:`unread` cards."""
    dead_reason: str | None = None
    last_card_exposed: bool = False

    @property
    def down(self) -> list[Card]:
        """Cards held face down, in the order received."""
        return [held.card for held in self.cards if held.face is DOWN]

    @property
    def up(self) -> list[Card]:
        """Cards held face up, in the order received."""
        return [held.card for held in self.cards if held.face is UP]

    @property
    def all_cards(self) -> list[Card]:
        """Every card the seat holds, in the order received."""
        return [held.card for held in self.cards]

    @property
    def unread_down(self) -> int:
        """How many of the :attr:`unread` cards were dealt face down: the public
        count of face-down cards includes them (a count, never a card)."""
        return sum(1 for number in self.unread_numbers
                   if (DOWN if number == 3 and self.exposed_holes == 1
                       else expected_face(number)) is DOWN)

    @property
    def unread_up(self) -> list[int]:
        """The deal numbers of the :attr:`unread` cards dealt face up, ascending: the
        public row shows a slot for each, its face unknown (issue 19)."""
        return sorted(number for number in self.unread_numbers
                      if (DOWN if number == 3 and self.exposed_holes == 1
                          else expected_face(number)) is UP)

    def held(self, card: Card) -> HeldCard | None:
        """The seat's record of ``card``, if the seat owns it."""
        for held in self.cards:
            if held.card == card:
                return held
        return None


class RoundPicture(StrEnum):
    """The two pictures of every live seat's card of one round unread
    (``unread_stacks``) that look like a real error when the next card arrives."""

    DOOR_UP = "door_up"
    """3rd street's 2nd round unread: the first seat's door card looks like its 2nd
    hole card dealt face up (rule 5's ``hole_card_exposed``)."""
    SECOND_BURN = "second_burn"
    """A round of 4th-6th street unread: the next street's burn looks like a second
    burn for that street (rule 13's ``extra_burn``)."""


@dataclass(slots=True)
class RoundUnread:
    """``unread_stacks``: every live seat's card of round :attr:`number` taken as dealt
    unread, a judgement the cards that follow decide (docs/engine.md "Reads that
    fail"): confirmed, the ``card_unread`` notices go out; contradicted, the inference
    is undone and the real error's alert is raised then. Nothing is published before."""

    picture: RoundPicture
    number: int
    """The round (the seats' card number) taken as unread."""
    seats: tuple[int, ...]
    """The live seats when it was taken, in position order (the first one's card
    decided a :attr:`RoundPicture.DOOR_UP`)."""


@dataclass(slots=True)
class HandState:
    """Everything known about the current hand."""

    number: int
    players: tuple[int, ...]
    seats: dict[int, SeatState]
    burns: dict[int, int] = field(default_factory=dict)
    started_streets: set[int] = field(default_factory=set)
    completed_streets: list[int] = field(default_factory=list)
    community: Card | None = None
    bring_in: int | None = None
    first_to_act: dict[int, int] = field(default_factory=dict)
    winners: list[int] = field(default_factory=list)
    game: Game = Game.STUD
    """The game dealt (docs/rules.md "Variants"), from the table settings."""
    winners_high: list[int] = field(default_factory=list)
    """stud8: the seats winning a high half (docs/conformance.md ``winners_high``)."""
    winners_low: list[int] = field(default_factory=list)
    """stud8: the seats winning a low half; empty when no low qualifies."""
    phase: Phase = Phase.DEALING
    """Where the hand is in its life (see :class:`Phase`); the one state that
    decides whether cards still count."""
    auto: bool = False
    """Started without a player list: players learnt from the deal, ends when cleared.
    A fact about how the hand began, true in every phase, so not part of the phase."""
    reshuffle: Reshuffle = Reshuffle.NONE
    """Rule 15's short deck on 7th street: a sub-state of that street only, which
    can happen (or not) whatever the hand's phase, so it is kept apart."""
    second_copies: bool = False
    """A duplicate_card was seen: boards and hands may hold one card twice. An
    independent fact about the cards, kept for the rest of the hand."""
    result: str | None = None
    """The hand result's text once the hand has one (``hand_result`` emitted)."""
    burns_before_gather: int = 0
    """Rule 15: 7th-street burns made before the burn pile was gathered."""
    alerts: list[Alert] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    """What the engine observed that needs no action (alerts.NOTICE_CODES)."""
    where: dict[Card, list[Zone]] = field(default_factory=dict)
    owner: dict[Card, int] = field(default_factory=dict)
    last_zone: dict[Card, Zone] = field(default_factory=dict)
    mucked_by: dict[Card, int] = field(default_factory=dict)
    burned_for: dict[Card, int] = field(default_factory=dict)
    first_deck: dict[Card, str | None] = field(default_factory=dict)
    bare: list[int] = field(default_factory=list)
    """Card-only hands: seats whose every card left their zones unseen elsewhere, in
    the order they went bare: a fold unless a card comes back first (docs/engine.md
    "Reads that fail")."""
    left_at: dict[Card, tuple[int, float]] = field(default_factory=dict)
    """A live seat's card that left its zones -> (:attr:`deal_progress`, the event
    time) at that moment; dropped when it comes back. What is left at the end, or
    gone longer than the peek allowance while the deal went on, is
    ``card_left_table``."""
    missing_reported: set[Card] = field(default_factory=set)
    """Cards ``card_left_table`` was raised for (once per card and hand)."""
    shown: set[int] = field(default_factory=set)
    """Seats that turned a hole card face up once the showdown was due."""
    deal_progress: int = 0
    """Cards dealt so far (first sight of a card at a seat, the burn or the board)."""
    manual: set[Card] = field(default_factory=set)
    """Cards entered by hand for a tag no reader can read: never seen leaving."""
    provisional: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    """``unread_stacks``: seat -> (card number, the seat dealt instead, the
    :attr:`deal_progress` of that card) for a seat passed over and taken as dealt
    unread; its card arriving right after makes it a real ``out_of_order``
    (docs/engine.md "Reads that fail")."""
    burn_owed: tuple[Alert, int, Card] | None = None
    """A ``missing_burn`` raised at a street's first card, held until the next card
    (with its place in :attr:`alerts` and that first card): a burn read right after it
    is that street's burn, read late (docs/engine.md "Reads that fail"); None nearly
    always."""
    round_unread: RoundUnread | None = None
    """``unread_stacks``: a whole round taken as unread until the next cards decide
    (:class:`RoundUnread`); None nearly always."""
    late_hole: tuple[int, HeldCard] | None = None
    """``unread_stacks``: (seat, card) for a face-down card seen in its seat's turn at a
    seat holding an unread hole card, taken provisionally as that hole card read at
    last (its event held) until the next card dealt decides: the seat's own card
    (``HandTracker._settle_late_hole``); None nearly always."""
    joined_unread: dict[int, int] = field(default_factory=dict)
    """``unread_stacks``, auto hands: seat -> the round (2) it joined in, its
    earlier cards unread (a dead tag, a stack), until its next card shows it plays."""
    accounted: bool = False
    """The end-of-hand inventory was taken (``card_left_table`` raised once)."""
    stacks: Mapping[int, int] | None = None
    """Chips behind each seat after the ante, when the hand line gave them."""
    bring_in_moved: bool = False
    """Rules 5 and 8 moved the bring-in left: that seat may fold, bring in or complete.
    A fact about 3rd street's opener, not a phase."""
    console: ConsoleRules | None = field(default=None, repr=False)
    """Betting and the rules needing it, once a console input reached the hand
    (None: a card-only hand). Set by :meth:`attach_console` only; the dealing
    tracker asks :attr:`rules` instead."""
    rules: HandRules = field(default=CARD_ONLY, repr=False)
    """The rules that need betting knowledge: the console's, or the card-only
    defaults (:data:`~.port.CARD_ONLY`). :meth:`attach_console` is the one place
    that decides; a plain field because the tracker asks it for every card."""
    _live: tuple[int, ...] | None = field(default=None, repr=False)
    _live_states: tuple[SeatState, ...] = field(default=(), repr=False)
    """The :class:`SeatState` of each of :attr:`live_seats`, cached with it: the due
    seat is looked for on every card, and a dict lookup per seat was a fifth of that."""

    def attach_console(self, console: ConsoleRules) -> None:
        """The hand's first console input (or a console ``hand``): from now on its
        betting rules answer the tracker (:attr:`rules`)."""
        self.console = console
        self.rules = console

    def detach_console(self) -> None:
        """A card-only hand's first console input was refused: the hand stays
        card-only, as if the input had never been sent (docs/console.md: a rejected
        command changes nothing). The alert the refusal raised for the floor
        (``out_of_turn``, ``illegal_bet``...) stays, as on any hand."""
        self.console = None
        self.rules = CARD_ONLY

    @property
    def finished(self) -> bool:
        """The hand has its result (or was closed without one): cards no longer count."""
        phase = self.phase
        return phase is _ENDED or phase is _CLEARED

    @property
    def forming(self) -> bool:
        """Players are still being learnt from the first round (auto hands)."""
        return self.phase is _FORMING

    @property
    def cleared(self) -> bool:
        """Auto hands: every seat zone emptied after the deal; the next card starts a hand."""
        return self.phase is _CLEARED

    @property
    def reshuffled(self) -> bool:
        """Rule 15: the burn cards were gathered to be scrambled with the last cards."""
        return self.reshuffle is not Reshuffle.NONE

    @property
    def reshuffle_burn_due(self) -> bool:
        """Rule 15: after the scramble a burn comes before the next card is dealt."""
        return self.reshuffle is Reshuffle.BURN_DUE

    @property
    def showdown_due(self) -> bool:
        """The deal is complete (a live seat has its seventh card, or the community
        card is out), so closing the hand now gives its result."""
        return self.community is not None or any(
            self.seats[s].received >= CARDS_PER_HAND for s in self.live_seats
        )

    @property
    def live_seats(self) -> tuple[int, ...]:
        """Seats still contesting the pot, in position order."""
        live = self._live
        if live is None:  # cached: asked for on every card, changed only by folds
            seats = self.seats
            live = self._live = tuple(s for s in self.players if seats[s].status is _ACTIVE)
            self._live_states = tuple(seats[s] for s in live)
        return live

    def set_status(self, seat: int, status: SeatStatus) -> None:
        """Change a seat's status (and forget the cached live seats)."""
        self.seats[seat].status = status
        self._live = None

    def add_player(self, seat: int) -> SeatState:
        """Deal ``seat`` into the hand (auto hands learn players from the deal)."""
        state = self.seats[seat] = SeatState(seat=seat)
        self.players = tuple(sorted((*self.players, seat)))
        self._live = None
        return state

    def remove_player(self, seat: int) -> None:
        """Take ``seat`` out of the hand: it joined on a guess the deal disproved."""
        del self.seats[seat]
        self.players = tuple(s for s in self.players if s != seat)
        self._live = None

    @property
    def street(self) -> int | None:
        """The street being dealt or bet (3..7), or ``None`` before any card."""
        if not self.started_streets:
            return None
        return max(self.started_streets)

    def due_seat(self) -> int | None:
        """The seat whose card is due next: the first live seat with the fewest cards."""
        return self.due_and_alone()[0]

    def due_and_alone(self) -> tuple[int | None, bool]:
        """:meth:`due_seat`, and whether that seat alone has the fewest cards: only
        its card can complete a street (the dealing engine asks for every card)."""
        live = self._live  # (the cache read here: one property call fewer per card)
        if live is None:
            live = self.live_seats
        phase = self.phase  # self.finished inlined: one call fewer per card dealt
        if len(live) < 2 or phase is _ENDED or phase is _CLEARED:
            return None, False
        states = self._live_states  # (cached with the live seats: no dict lookup per seat)
        due, fewest, alone = states[0], CARDS_PER_HAND + 1, False
        for state in states:  # one pass: this runs for every card dealt
            received = state.received
            if received < fewest:
                due, fewest, alone = state, received, True
            elif received == fewest:
                alone = False
        if fewest >= CARDS_PER_HAND or (self.community is not None and fewest >= 6):
            return None, False
        return due.seat, alone

    def withdraw_alerts(self, kept: int) -> list[Alert]:
        """Take back the alerts raised after the first ``kept`` and return them: what
        the engine made of moves that were guessed, not dealt (the daemon's interrupted
        hand, docs/daemon.md "Start-up reconciliation"), is no dealing error."""
        withdrawn = self.alerts[kept:]
        del self.alerts[kept:]
        return withdrawn

    def next_due(self) -> tuple[int, ZoneKind] | None:
        """The seat whose card is due next and the face it should land with."""
        seat = self.due_seat()
        if seat is None:
            return None
        state = self.seats[seat]
        return seat, self.face_due(state, state.received + 1)

    def face_due(self, seat: SeatState, number: int) -> ZoneKind:
        """The face ``seat``'s ``number``-th card should land with (rules 5 and 17b)."""
        if number == 3 and seat.exposed_holes == 1:
            return DOWN  # rule 5: the 3rd card replaces the exposed hole card
        if number == CARDS_PER_HAND and self._second_of_two_after_exposed_last(seat.seat):
            return UP  # rule 17(b)
        return expected_face(number)

    def _second_of_two_after_exposed_last(self, seat: int) -> bool:
        live = self.live_seats
        return len(live) == 2 and live[1] == seat and self.seats[live[0]].last_card_exposed
