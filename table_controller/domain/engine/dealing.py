"""The dealing tracker: what a dealer and a floor supervisor know, from cards alone.

Theory of operation
-------------------
The engine consumes :mod:`table_controller.domain.events` one at a time
(:meth:`DealingEngine.apply`) and returns what they caused: :class:`Alert`
records and :class:`GameEvent` records. It never raises on table reality: a
physical mistake is flagged and the best reconstruction of the truth is kept.

Deal order is tracked by *cards received* per seat. Card ``k`` of a seat
(1..7) belongs to round ``k``: rounds 1-3 make 3rd street (down, down, up),
rounds 4-6 are 4th-6th street (up) and round 7 is the river (down). The seat
due next is the live seat, in position order (seat 1 is at the dealer's left),
with the fewest cards; a card anywhere else is ``out_of_order``. Burns are
counted per street; the first card of a street checks that its burn happened.

Ownership and location are separate: a card dealt to a seat belongs to that
seat until it lands somewhere else (the muck: a fold; another seat or the burn
pile: a correction). A tag that merely leaves its antenna (a player lifting a
hole card to look at it) is still that seat's card.

Seed rules implemented here (docs/rules.md): 5, 7 (card-only reading), 8 (when
stacks are known), 11 (a card off the table shows up as an exposed card),
12 (announcements), 13, 15, 16/17 (the face of the last card), 18.
Rules that need betting knowledge (6, 9, 10, 14, 19 and the betting parts of
7, 16 and 17) belong to the console layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from table_controller.domain._hand_tables import CATEGORY_SHIFT
from table_controller.domain.cards import DECK, Card
from table_controller.domain.engine.alerts import NOTICE_CODES, RULE_OF, Alert, AlertCode, Notice
from table_controller.domain.engine.console import TableConsole
from table_controller.domain.engine.due import face_up_holes
from table_controller.domain.engine.hand import (
    CARDS_PER_HAND,
    DOWN,
    FACE_OF_CARD,
    STREET_OF_CARD,
    UP,
    HandState,
    HeldCard,
    Phase,
    Reshuffle,
    RoundPicture,
    RoundUnread,
    SeatState,
    SeatStatus,
    expected_face,
    street_of_card,
)
from table_controller.domain.engine.outputs import (
    ConsoleResult,
    EngineOutput,
    GameEvent,
    GameEventKind,
    ReplyCode,
    ShownHand,
)
from table_controller.domain.engine.port import CARD_ONLY
from table_controller.domain.engine.settings import TableSettings, stacks_problem
from table_controller.domain.engine.variants import (
    Variant,
    bring_in_card,
    bring_in_of,
    describe_hand,
    describe_showing,
    key_has_pair,
    low_value_of,
    primary_value,
    variant,
)
from table_controller.domain.events import (
    BetAction,
    CardPlaced,
    CardRemoved,
    ConsoleAction,
    FloorRuling,
    HandEnded,
    HandStarted,
    SeatName,
    TableEvent,
    UnknownTag,
)
from table_controller.domain.hands import (
    HandCategory,
    HandValue,
    ShowingValue,
    low_showing,
    showing_strength,
    showing_value,
)
from table_controller.domain.zones import Zone, ZoneKind

__all__ = [  # the hand's data lives in engine/hand.py; these names stay importable here
    "CARDS_PER_HAND",
    "DealingEngine",
    "HandState",
    "HandTracker",
    "HeldCard",
    "NoHandError",
    "Phase",
    "SeatState",
    "SeatStatus",
    "expected_face",
    "replay_events",
    "street_of_card",
]

LATE_BURN_READ = 1.0
"""Seconds of event time after a street's first card within which a burn read next is
that street's burn read late (rule 13; a scan or a few missed by flicker or the
dealer's hand, 0.15 s each): the next street's burn comes after a betting round, so
the street's other cards all unread then do not make it this one's. Event times
decide (the engine reads no clock): a script without ``at`` has them all at 0."""

PEEK_ALLOWANCE = 12.0
"""Seconds a live seat's card may be away while the deal goes on before it is
``card_left_table`` (issue 19): players look at their hole cards for 0.5-10 s, a
card held longer while other cards are dealt is palmed or lost. Event times
decide (the engine reads no clock): a script without ``at`` never reaches it and
reports missing cards when the hand ends."""

_PAIR_FLOOR = int(HandCategory.PAIR) << CATEGORY_SHIFT
"""The least strength of a board showing a pair or more (rule 12 announces it)."""


class NoHandError(LookupError):
    """Asked for the current hand before the first hand started."""


class DealingEngine:
    """Applies zone events to the table, one hand at a time.

    Create one per table; feed every event through :meth:`apply`, which returns
    what the event caused; call :meth:`finish_hand` when the hand is over (a new
    ``hand`` does it too). The engine itself holds only what lasts across hands
    (settings, the roster, the hand count); each hand is a :class:`HandTracker`
    around its :class:`HandState`. Between the first input and the first hand
    there is no tracker: :meth:`current_hand` says so with :class:`NoHandError`.
    """

    def __init__(self, settings: TableSettings | None = None) -> None:
        self.settings = settings or TableSettings()
        self.variant: Variant = variant(self.settings.game)
        """The game's choices (bring-in, first to act, open pair, showdown)."""
        self._tracker: HandTracker | None = None
        self._at = 0.0
        """The time of the last input: ``finish_hand`` (no event of its own) uses it."""
        self.hands_played = 0
        self.changes = 0
        """Counts the calls that may change the hand (:meth:`apply`, :meth:`finish_hand`):
        a reader of the hand caches what it derives from it per value (issue 20: the
        daemon's deal expectation is asked for at every report and tick)."""
        self.names: dict[int, tuple[str, str | None]] = {}
        """seat -> (player name, country code) from the console (issue 12); kept across
        hands until changed or cleared. Public: shown on ``state`` and every page."""

    # ----------------------------------------------------------------- public

    @property
    def hand(self) -> HandState | None:
        """The hand in progress, or the last one once it ended; None before the first.

        Readers (reports, the daemon's state) use this; code that needs a hand
        asks :meth:`current_hand`.
        """
        tracker = self._tracker
        return None if tracker is None else tracker.hand

    def current_hand(self) -> HandState:
        """The hand in progress or the last one; :class:`NoHandError` before the first."""
        tracker = self._tracker
        if tracker is None:
            raise NoHandError("no hand has started on this table yet")
        return tracker.hand

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        """Apply one event; return the alerts, notices, game events and console
        result it caused."""
        self.changes += 1
        self._at = event.at
        if type(event) is CardPlaced and (not self.settings.auto_hands
                                          or not self.starts_hand(event)):
            # Nearly every event: straight to the hand, past the dispatch below.
            tracker = self._tracker
            if tracker is None:
                return []
            return tracker.place(event.card, event.zone, event.deck, event.at,
                                 event.manual)  # (positional: cheaper per card)
        if type(event) is CardRemoved:  # the next most common: no hand starts on it
            tracker = self._tracker
            if tracker is None:
                return []
            return tracker.remove(event.card, event.zone, at=event.at)
        if isinstance(event, SeatName):  # the roster: no hand needed, no rule involved
            if event.name:
                self.names[event.seat] = (event.name, event.country)
            else:
                self.names.pop(event.seat, None)
            return [ConsoleResult(True, message=f"seat {event.seat}: "
                                  + (event.name or "name cleared"))]
        if isinstance(event, HandStarted):
            refusal = self.refuse_hand(event)
            if refusal is not None:
                return [refusal]
            out: list[EngineOutput] = []
            closed = ""
            tracker = self._tracker
            if tracker is not None and not tracker.hand.finished:
                closed, closing = tracker.close_hand(by_console=event.console, at=event.at)
                out += closing
            out += self._start_hand(event)
            started = f"hand {self.current_hand().number} started"
            out.append(ConsoleResult(True, message=f"{closed}; {started}" if closed
                                     else started))
            return out
        if isinstance(event, ConsoleAction | FloorRuling | HandEnded):
            return self._console_input(event)
        auto_start = (
            self._start_hand(HandStarted((), at=event.at)) if self.starts_hand(event) else None
        )
        tracker = self._tracker
        if tracker is None:
            return []  # a card before any hand (no auto hands): nothing to apply it to
        if isinstance(event, CardPlaced):
            out = tracker.place(event.card, event.zone, event.deck, at=event.at,
                                manual=event.manual)
        elif isinstance(event, CardRemoved):
            out = tracker.remove(event.card, event.zone, at=event.at)
        elif isinstance(event, UnknownTag):
            out = tracker.unknown(event.zone, at=event.at)
        else:
            out = []  # an unknown tag leaving, or another edge-only event
        return out if auto_start is None else auto_start + out

    def _console_input(self, event: ConsoleAction | FloorRuling | HandEnded
                       ) -> list[EngineOutput]:
        tracker = self._tracker
        hand = tracker.hand if tracker is not None else None
        confirms_fold = (  # the fold that ended the hand reached the muck first
            isinstance(event, ConsoleAction)
            and event.action is BetAction.FOLD
            and hand is not None
            and hand.console is not None
            and event.seat in hand.seats
            and event.seat not in hand.live_seats
        )
        if tracker is None or (
            tracker.hand.finished and not isinstance(event, HandEnded) and not confirms_fold
        ):
            return [ConsoleResult(False, ReplyCode.HAND_OVER, "no hand is in progress")]
        return tracker.console_input(event)

    def starts_hand(self, event: TableEvent) -> bool:
        """Whether ``event`` opens a new auto hand (card-only tables, ``auto_hands``).

        The first card dealt to a seat or the burn pile on a clear table does;
        the daemon asks first so that the journal records the hand start
        (``{"op":"hand","players":[]}``) before the card.
        """
        if not self.settings.auto_hands or not isinstance(event, CardPlaced):
            return False  # checked first: this runs for every event
        tracker = self._tracker
        return event.zone.kind not in (_MUCK_PILE, _BOARD) and (
            tracker is None or tracker.hand.cleared
        )

    def refuse_hand(self, event: HandStarted) -> ConsoleResult | None:
        """Why the console's ``hand`` cannot start a hand now, or ``None`` if it can.

        A console ``hand`` (``event.console``) never drops a hand in progress
        without its result: while cards of the current hand are being dealt and
        its result is not due yet, it is refused (``hand_in_progress``, nothing
        changes); ``end`` closes such a hand first. A hand whose showdown is due
        (its last card dealt, no betting round open) or that has no card yet is
        closed by the new ``hand``, visibly (docs/console.md). A script's
        ``hand`` line (not from the console) always starts the next hand, as
        docs/conformance.md says. The daemon asks before journaling the command.
        """
        if event.console:
            problem = stacks_problem(event.stacks, self.settings.ante)
            if problem is not None:
                return ConsoleResult(False, ReplyCode.BAD_STACKS, problem)
        hand = self.hand
        if not event.console or hand is None or hand.finished or not hand.where:
            return None
        card_only = hand.console is None  # only the wording differs
        kind = "card-only " if card_only else ""
        what = f"{kind}hand {hand.number} is in progress"
        open_round = hand.rules.open_round()
        if open_round is not None:
            return ConsoleResult(
                False,
                ReplyCode.HAND_IN_PROGRESS,
                f"{what}: the betting on {_street_name(open_round)} is not complete; finish"
                " it, then `end` the hand before starting the next",
            )
        if hand.showdown_due:
            return None
        street = _street_name(hand.street) if hand.street is not None else "its first street"
        how = (
            "let the dealer finish and clear the table (the hand then ends by itself)"
            if card_only and hand.auto
            else "finish dealing it"
        )
        return ConsoleResult(
            False,
            ReplyCode.HAND_IN_PROGRESS,
            f"{what} ({street} being dealt): {how}, or send `end` to close it without a"
            " result first",
        )

    def finish_hand(self) -> list[EngineOutput]:
        """Close the current hand: showdown checks (rule 18) and the winners."""
        self.changes += 1
        tracker = self._tracker
        return [] if tracker is None else tracker.finish(at=self._at)

    # ------------------------------------------------------------ hand start

    def _start_hand(self, event: HandStarted) -> list[EngineOutput]:
        out = self.finish_hand()
        self.hands_played += 1
        number = event.hand_id if event.hand_id is not None else self.hands_played
        players = tuple(sorted(set(event.players)))
        stacks = event.stacks or {}
        seats = {s: SeatState(seat=s, stack=stacks.get(s)) for s in players}
        hand = HandState(
            number=number,
            players=players,
            seats=seats,
            phase=Phase.DEALING if players else Phase.FORMING,
            auto=not players,
            stacks=dict(stacks) if event.stacks is not None else None,
            game=self.variant.game,
        )
        tracker = self._tracker = HandTracker(hand, self.settings, self.variant)
        return out + tracker.started(console=event.console, at=event.at)


class HandTracker:
    """One hand being dealt: applies card events and console inputs to its
    :class:`HandState` and returns what each caused.

    It is the dealing side of the rules (docs/rules.md numbers in the module doc) and
    the :class:`~table_controller.domain.engine.console.HandPort` the console rules talk
    to. Every public entry point returns the outputs of that one input; the
    console's calls during an input add to that input's outputs.
    """

    def __init__(self, hand: HandState, settings: TableSettings, game: Variant) -> None:
        self.hand = hand
        self.settings = settings
        self.variant: Variant = game
        """The game's choices (bring-in, first to act, open pair, showdown)."""
        self._unread_stacks = settings.unread_stacks  # asked per card dealt
        self._redealing = False  # a late-hole judgement undone: the card is dealt now
        self._out: list[EngineOutput] = []
        self._at = 0.0

    # -------------------------------------------------------- entry points

    def _begin(self, at: float) -> list[EngineOutput]:
        """Start one input: its time, and a fresh list of what it causes."""
        self._at = at
        out: list[EngineOutput] = []
        self._out = out
        return out

    def started(self, *, console: bool, at: float) -> list[EngineOutput]:
        """The hand begins: ``hand_started``; a console hand gets its betting now."""
        out = self._begin(at)
        hand = self.hand
        self._emit(GameEventKind.HAND_STARTED, text=f"hand {hand.number}")
        if console and len(hand.players) >= 2:
            # Started at the console: chips and turn are tracked from the first card.
            hand.attach_console(TableConsole(self, hand, self.settings))
        return out

    def place(self, card: Card, zone: Zone, deck: str | None, at: float,
              manual: bool = False) -> list[EngineOutput]:
        """A card's tag was seen in ``zone`` (or, ``manual``, the dealer entered it)."""
        self._at = at  # _begin inlined: this runs for every card
        out: list[EngineOutput] = []
        self._out = out
        if manual:
            self._manual(card, zone)
        hand = self.hand
        if hand.late_hole is not None and zone.kind is not _MUCK_PILE and (
                card not in hand.where):
            # A card dealt decides the held card before anything else reads the table
            # (a seat going bare folds at this card: the held card was dealt before).
            self._settle_late_hole(zone.seat)
        if hand.burn_owed is not None:
            self._settle_burn_owed(zone)
        if hand.bare:
            self._settle_bare(card, zone)
        if hand.left_at and not hand.finished:
            self._check_peeks(at)
        if card in hand.where:
            self._place_seen(card, zone, deck)
            return out
        # First sight of the card this hand, nearly every event of a deal: no copy,
        # owner, muck or burn history to look at. Routed here rather than in a
        # routing call of its own: one Python call fewer per card (issue 25).
        hand.where[card] = [zone]
        hand.first_deck[card] = deck
        hand.last_zone[card] = zone
        kind = zone.kind
        if kind is not _MUCK_PILE:
            hand.deal_progress += 1
        if kind is _BURN:
            self._burn(card)
        elif kind is _BOARD:
            self._board(card)
        elif zone.seat is not None:
            self._deal(card, zone.seat, kind)
        return out

    def remove(self, card: Card, zone: Zone, *, at: float) -> list[EngineOutput]:
        """A card's tag left ``zone``."""
        out = self._begin(at)
        owed = self.hand.burn_owed
        if owed is not None and owed[2] == card:
            self._raise_burn_owed()  # the street's first card taken back: not a late read
        self._remove(card, zone)
        return out

    def unknown(self, zone: Zone, *, at: float) -> list[EngineOutput]:
        """A tag that is no registered card was seen in ``zone``."""
        out = self._begin(at)
        if self.hand.burn_owed is not None:
            self._raise_burn_owed()
        self._unknown(zone)
        return out

    def console_input(self, event: ConsoleAction | FloorRuling | HandEnded
                      ) -> list[EngineOutput]:
        """A console action, floor ruling or ``end``: exactly one console result."""
        out = self._begin(event.at)
        hand = self.hand
        if hand.burn_owed is not None:
            self._raise_burn_owed()
        console = hand.console
        if console is None:  # a console hand is born here (or in ``started``)
            if isinstance(event, HandEnded):
                self.reply(ConsoleResult(True, message=self._close()))
                return out
            if len(hand.players) < 2:
                self.reply(ConsoleResult(False, ReplyCode.NO_BETTING_ROUND,
                                         "the hand has no players yet"))
                return out
            # A floor ruling alone starts no betting (issue 24: `kill` on a card-only table).
            console = TableConsole(self, hand, self.settings,
                                   betting=not isinstance(event, FloorRuling))
            hand.attach_console(console)
            console.apply(event)
            if isinstance(out[-1], ConsoleResult) and not out[-1].accepted:
                hand.detach_console()  # refused: still a card-only hand (issue 24)
            return out
        console.apply(event)
        return out

    def close_hand(self, *, by_console: bool, at: float) -> tuple[str, list[EngineOutput]]:
        """Close the hand for the next one: what the reply says, and the outputs."""
        out = self._begin(at)
        if self.hand.burn_owed is not None:
            self._raise_burn_owed()
        return self._close(by_console=by_console), out

    def finish(self, *, at: float) -> list[EngineOutput]:
        """Showdown checks (rule 18) and the winners."""
        out = self._begin(at)
        if self.hand.burn_owed is not None:
            self._raise_burn_owed()
        self._finish()
        return out

    # ------------------------------------------- the HandPort of the console

    def alert(self, code: AlertCode, seat: int | None, street: int | None,
              message: str) -> None:
        """Raise ``code`` for the input being applied (a notice when nobody must act)."""
        self._alert(code, seat, street, message)

    def emit(self, kind: GameEventKind, *, seat: int | None = None,
             street: int | None = None, text: str | None = None,
             amount: int | None = None) -> None:
        """Emit a game event for the input being applied."""
        self._emit(kind, seat=seat, street=street, text=text, amount=amount)

    def fold(self, seat: int) -> None:
        """The console folded ``seat`` (its betting knows already)."""
        self._fold(seat, by_console=True)

    def kill(self, seat: int, reason: str) -> None:
        """The floor ruled ``seat``'s hand dead."""
        self._kill(seat, reason)

    def award(self, winners: list[int]) -> None:
        """The betting ended the hand: ``winners`` took the pot without a showdown."""
        if self.hand.finished:
            return  # the result is decided once: ENDED is final (a late kill or fold)
        self._award(winners, showdown=False)

    def close(self) -> str:
        """The console's ``end``: close the hand; what the reply says about it."""
        return self._close()

    def reply(self, result: ConsoleResult) -> None:
        """The console's answer to the input being applied."""
        self._out.append(result)

    # ------------------------------------------------------------ closing

    def _close(self, *, by_console: bool = True) -> str:
        """Close the current hand: the console's ``end`` or a new ``hand`` (a
        script's ``hand`` line: ``by_console`` false).

        With its result when it has one (the showdown, or the seat left); a hand
        closed before that gets a ``hand_result`` with no winners after an
        announcement saying why, so nobody watching sees a hand just vanish.
        Returns what the console's reply says about it.
        """
        hand = self.hand
        number = hand.number
        if hand.finished:
            return f"hand {number} closed"
        if by_console:
            # Closed at the console (the dealer's `end`, or the daemon closing a hand
            # that ended while it was down): where its cards went is not known, so
            # there is no end-of-hand inventory (no card_left_table).
            hand.accounted = True
        self._finish()
        if hand.result is not None:
            return f"hand {number} closed: {hand.result}"
        if not hand.where:
            where = "before any card was dealt"
        else:
            street = _street_name(hand.street) if hand.street is not None else "3rd street"
            where = f"on {street}, before its showdown"
        self._emit(
            _ANNOUNCEMENT,
            street=hand.street,
            text=f"Hand {number} was closed{' at the console' if by_console else ''} {where}:"
            " it has no result.",
        )
        self._award([], showdown=False)
        return f"hand {number} closed {where}, without a result"

    def _finish(self) -> None:
        hand = self.hand
        if hand.late_hole is not None:
            self._settle_late_hole(None)  # no card of the seat's own followed
        if hand.round_unread is not None:
            # The hand ends before the cards that would tell the round unread from a
            # real error (docs/engine.md "Reads that fail"): the reading costing no
            # alert on a correct deal stands.
            self._confirm_round()
        if hand.finished:
            self._take_inventory()
            return
        for seat_no in list(hand.bare):
            # The hand ends with these seats' cards gone: they folded (docs/conformance.md
            # "Reads that fail"), in the order they went, so the last seat whose
            # cards are gathered is the one left standing.
            self._fold_unread(seat_no)
        if hand.shown and hand.rules.folds_from_cards:
            # Some seats turned their hole cards up at the showdown: a seat whose cards
            # all went without being shown mucked them (a river fold, or a loser
            # declining to show), which an unread muck cannot tell us otherwise.
            for seat_no in hand.live_seats:
                if seat_no not in hand.shown and not any(
                        held.present for held in hand.seats[seat_no].cards):
                    self._fold_unread(seat_no)
        self._take_inventory()
        if hand.finished:  # the unread folds left one seat: it has won
            return
        live = hand.live_seats
        reached_seventh = hand.community is not None or any(
            hand.seats[s].received >= CARDS_PER_HAND for s in live
        )
        rules = hand.rules
        if self.settings.unread_stacks and rules.folds_from_cards and not reached_seventh:
            # A seat that folded on 7th street after its river was read, or the 7th
            # street's burn (rule 13), shows the river was dealt: the live seats'
            # rivers lay unread on their stacks.
            reached_seventh = hand.burns.get(7, 0) > 0 or any(
                hand.seats[s].received >= CARDS_PER_HAND for s in hand.players)
        if (self.settings.unread_stacks and rules.folds_from_cards and reached_seventh
                and hand.community is None):
            for seat_no in live:  # the last seat's river card on a stack no reader read
                seat = hand.seats[seat_no]
                sixth = next((h for h in seat.cards if h.number == CARDS_PER_HAND - 1), None)
                if (seat.received == CARDS_PER_HAND - 1
                        and (sixth is None or sixth.face is UP)):
                    # (a 6th card read down was the river itself; none read: unread too)
                    self._unread(seat, CARDS_PER_HAND)
                    self._after_change()
        if (len(live) >= 2 or rules.pays_pots) and reached_seventh:
            for seat_no in live:
                seat = hand.seats[seat_no]
                count = (len(seat.cards) + seat.unread
                         + (1 if hand.community is not None else 0))
                if count < CARDS_PER_HAND and not rules.is_ruled_live(seat_no):
                    self._alert(
                        AlertCode.SHORT_HAND,
                        seat_no,
                        7,
                        f"Seat {seat_no} reached showdown with {count} cards instead of seven:"
                        " the hand is dead unless the floor rules it live.",
                    )
                    self._kill(seat_no, "short hand at showdown")
            if not hand.finished:  # killing a short hand can leave one seat: already won
                self._showdown()
        self._end()

    # --------------------------------------------------------------- routing

    def _unknown(self, zone: Zone) -> None:
        hand = self.hand
        self._alert(
            AlertCode.UNKNOWN_CARD,
            zone.seat,
            hand.street,
            f"A card that is not in the registered deck appeared at {_where(zone)}:"
            " remove it from the table.",
        )

    def _place_seen(self, card: Card, zone: Zone, deck: str | None) -> None:
        """A card already seen this hand shows up in ``zone``: a copy, a move, a card
        back from the muck or the burn pile, or a turn at its seat (:meth:`place` took
        the first sights)."""
        hand = self.hand
        present = hand.where[card]
        # Presence names the deck of each tag: another deck's copy of a card on the
        # table is a second physical card even where the first one lies.
        first_deck = hand.first_deck.setdefault(card, deck)
        second_copy = bool(present) and deck != first_deck  # None: a script's one deck
        if zone in present and not second_copy:
            return  # already seen there: nothing new
        owner = hand.owner.get(card)
        from_muck = (hand.last_zone.get(card) == _MUCK or _MUCK in present
                     # A folded seat's card that left unread (fold_unread: a muck no
                     # reader reads), now at another seat: it came from the muck.
                     or (not present and owner is None
                         and hand.mucked_by.get(card, zone.seat) != zone.seat))
        if present:
            if not second_copy and (
                zone.kind is _MUCK_PILE
                or all(z.kind in _DEALER_PILES for z in present)
                or all(z.seat == zone.seat for z in present)  # turned over at its seat
            ):
                # A card dropped on the muck, or taken from the muck or burn pile, is
                # moving (the remove was not seen): a second copy would need a second
                # deck, and presence tells decks apart before the engine.
                for old in list(present):
                    self._leave(card, old, landing=zone)
                owner = hand.owner.get(card)  # leaving may take it out of play (rule 14)
            else:
                self._alert(
                    AlertCode.DUPLICATE_CARD,
                    zone.seat,
                    hand.street,
                    f"{_public_name(card, zone, present[0])} appeared at {_where(zone)} while"
                    f" it is already at {_where(present[0])}: two copies of one card are on"
                    " the table.",
                )
                owner = None  # the new copy belongs to nobody yet
                hand.second_copies = True
        present.append(zone)
        hand.last_zone[card] = zone
        if owner is not None and zone.seat != owner:
            self._detach(card, owner, zone)
        if zone.kind is _MUCK_PILE:
            return
        if zone.kind is _BURN:
            self._burn(card)
        elif zone.kind is _BOARD:
            self._board(card)
        else:
            assert zone.seat is not None
            if owner == zone.seat:
                self._return_to_seat(card, zone)
                return
            burned_for = hand.burned_for.pop(card, None)
            if burned_for is not None:
                # Rule 13/15: a burn card dealt after all (a correction, or the
                # reshuffled burn cards of a short deck) is no longer a burn.
                hand.burns[burned_for] -= 1
            if from_muck:
                mucker = hand.mucked_by.get(card)
                self._alert(
                    AlertCode.CARD_FROM_MUCK,
                    zone.seat,
                    hand.street,
                    f"{_public_name(card, zone)} came back from the muck to seat"
                    f" {zone.seat}: a mucked card is dead and cannot be played.",
                )
                if mucker == zone.seat:
                    # A player taking back their own folded cards: still folded.
                    self._hold(hand.seats[zone.seat], card, zone.kind, number=0)
                    hand.owner[card] = zone.seat
                    return
            self._deal(card, zone.seat, zone.kind)

    def _remove(self, card: Card, zone: Zone) -> None:
        hand = self.hand
        present = hand.where.get(card)
        if not present or zone not in present:
            return
        self._leave(card, zone)
        seventh = (
            7 in hand.started_streets or hand.burns.get(7, 0) > 0 or 6 in hand.completed_streets
        )
        if zone.kind is _BURN and seventh and not hand.reshuffled and not hand.finished:
            # Rule 15: burn cards picked up to be scrambled with the last card;
            # the dealer then "scrambles, cuts, burns and deals the rest".
            hand.reshuffle = Reshuffle.BURN_DUE
            hand.burns_before_gather = hand.burns.get(7, 0)
            unread = sum(seat.unread for seat in hand.seats.values())  # dealt, never read
            if hand.burns.get(7, 0) == 0 and len(DECK) - len(hand.where) - unread >= 2:
                # Two fresh cards left: one to burn for 7th street, the last to go
                # with the burn cards. (With one left, gathering first is the way.)
                self._alert(
                    AlertCode.MISSING_BURN,
                    None,
                    7,
                    "The burn cards were gathered for the short deck before 7th street's"
                    " burn: burn first, deal all but the last card, then scramble"
                    " (rules 13 and 15).",
                )

    def _leave(self, card: Card, zone: Zone, landing: Zone | None = None) -> None:
        hand = self.hand
        hand.where[card].remove(zone)
        hand.last_zone[card] = zone
        owner = hand.owner.get(card)
        if owner is not None and zone.seat == owner:
            seat = hand.seats[owner]
            held = seat.held(card)
            if held is not None and not any(z.seat == owner for z in hand.where[card]):
                held.present = False  # (a card turned over is in its other zone still)
                if hand.rules.card_left(card, zone, owner):
                    # Rule 14: a premature card taken off the table is out of play.
                    seat.cards.remove(held)
                    seat.received -= 1
                    del hand.owner[card]
                elif seat.status is _ACTIVE and not hand.finished:
                    self._left_live_seat(seat, card)
        if zone.seat is not None and (landing is None or landing.seat is None):
            # A card landing in a seat zone as it leaves this one (``landing``) is
            # in flight, not gone: the seats are not clear (issue 19).
            self._check_cleared()

    # ----------------------------------------------- reads that fail (issue 19)

    def _left_live_seat(self, seat: SeatState, card: Card) -> None:
        """A live seat's card left its zones, seen nowhere else (yet).

        A peek if it comes back; a fold if every card of the seat is gone when the
        deal goes on (card-only hands: the muck pile is often not read at all); a
        palmed or lost card if the seat plays on without it (``card_left_table`` at
        the end of the hand). docs/engine.md "Reads that fail" is this as a table.
        """
        hand = self.hand
        if not hand.rules.folds_from_cards:
            # A console hand: the dealer enters folds, and rule 10 judges cards
            # picked up (the console's betting knows whether a bet was faced).
            return
        zone = hand.last_zone[card]
        if self.settings.unread_stacks and any(
                held.present and zone in hand.where.get(held.card, ()) for held in seat.cards):
            # It left a stack of the seat's cards: put back on it, it may lie there
            # unread (a stack of 2+ inlays detunes), so its absence proves nothing.
            pass
        else:
            hand.left_at[card] = (hand.deal_progress, self._at)
        if (
            seat.seat not in hand.bare
            and not hand.showdown_due  # rule 10: at showdown picking up means nothing
            and all(not held.present or held.card in hand.manual for held in seat.cards)
        ):
            hand.bare.append(seat.seat)

    def _settle_bare(self, card: Card, zone: Zone) -> None:
        """A card arrives while some seats' cards are all gone: those seats folded,
        unless this is one of their own cards coming back (a peek).

        docs/conformance.md: a card that comes back to its zone before any other card
        is dealt is no event. A seat that has its 3rd-street cards folds as soon
        as another card is dealt; one still being dealt its first cards (a player
        looking at both hole cards) only when the dealer passes it over.
        """
        hand = self.hand
        if zone.kind is _MUCK_PILE or card in hand.where:
            # Only a card dealt (first seen this hand) moves the deal on: the muck
            # being read is the muck's own story (_detach), and a card seen before
            # (another player's peek ending, a card turned over, a correction) is
            # not a card dealt. A bare seat's own card back clears it (_return_to_seat).
            return
        due = hand.due_seat()
        for seat_no in list(hand.bare):
            seat = hand.seats[seat_no]
            passed_over = due == seat_no and zone.seat is not None and zone.seat != seat_no
            if seat.received >= 3 or passed_over:
                self._fold_unread(seat_no)

    def _fold_unread(self, seat_no: int) -> None:
        """Fold ``seat_no``, whose cards all left the table unread (a muck no reader
        reads): a public fold and a notice, no alert. Its cards reaching the muck
        later change nothing (they count as mucked by this seat)."""
        hand = self.hand
        if seat_no in hand.bare:
            hand.bare.remove(seat_no)
        seat = hand.seats[seat_no]
        if seat.status is not _ACTIVE or hand.finished or hand.live_seats == (seat_no,):
            return  # the last hand standing being gathered up is not a fold
        for held in seat.cards:
            if hand.owner.get(held.card) == seat_no:
                del hand.owner[held.card]
            hand.mucked_by[held.card] = seat_no
            hand.left_at.pop(held.card, None)
        seat.cards.clear()
        self._notice(
            AlertCode.FOLD_UNREAD,
            seat_no,
            hand.street,
            f"Seat {seat_no}'s cards left the table without the muck reading them:"
            " seat folded.",
        )
        self._fold(seat_no)

    def _infer_unread(self, seat_no: int) -> None:
        """``unread_stacks``: a card arrives at ``seat_no``; seats
        exactly one card behind the round were dealt it unread (a deep stack, a row of
        up cards, a dead tag), unless the card is one of theirs arriving late.

        In a correct deal, when a seat gets its n-th card the live seats before it
        hold n cards and those after it n - 1. A seat that holds one fewer than that
        gets an unread card (notice ``card_unread``) instead of making every later card
        ``out_of_order`` (rule 7's deal order) and the street's counts wrong for burns
        (rule 13), faces (rules 5, 16, 17) and the showdown (rule 18). A seat passed
        over in this round stays *provisional* (:attr:`HandState.provisional`): its
        own card arriving before the next round starts was a real ``out_of_order``
        (:meth:`_late_arrival`, asked first). Anything else (a seat two cards behind,
        one ahead) is left to the strict checks. Runs only when the receiving seat is
        not the one due or a seat is provisional: a deal read whole never gets here.
        """
        hand = self.hand
        seats = hand.seats
        receiving = seats[seat_no]
        live = hand.live_seats
        number = receiving.received + 1
        if number > CARDS_PER_HAND:
            return  # rule 18's too_many_cards, never an unread card
        after = [seats[s].received for s in live if s > seat_no]
        before = [seats[s].received for s in live if s < seat_no]
        if (after and all(c == number for c in after) and all(c == number + 1 for c in before)
                and number < CARDS_PER_HAND and _may_be_unread(receiving, number)):
            self._unread(receiving, number)  # it is a round behind itself
            number += 1
        behind: list[tuple[SeatState, int]] = []
        for s in live:
            if s == seat_no:
                continue
            expected = number if s < seat_no else number - 1
            held = seats[s].received
            if held == expected:
                continue
            if held != expected - 1 or not _may_be_unread(seats[s], expected):
                return  # not the picture of unread cards: the strict checks judge
            behind.append((seats[s], expected))
        for seat, missing in behind:
            # Passed over in this round (before the receiving seat): provisional. After
            # it, the seat missed the last round's card: that round is over.
            self._unread(seat, missing, passer=seat_no if seat.seat < seat_no else None)

    def _unread_card_read(self, seat: SeatState, card: Card, face: ZoneKind) -> bool:
        """A card first seen with ``face`` at ``seat``, which holds an unread hole card:
        face down out of the seat's turn where its next card is an up card, or face
        up or down when it has all seven or its next card opens a street not burned
        for yet (rule 13), it is that unread card, read at last (a hole card put back
        after a peek lands on top of its stack; seen face up, the seat's up antenna
        read it, which a reader reporting no strength cannot tell from its own). It
        takes the unread card's place, face down; nothing is dealt. Face down in the
        seat's turn where an up card is due, it is held provisionally until the next
        card (:meth:`_settle_late_hole`)."""
        down = [n for n in seat.unread_numbers  # (a river unread and an 8th card: rule 18)
                if n < CARDS_PER_HAND and _seat_face(seat, n) is DOWN]
        if not down:
            return False
        hand = self.hand
        if face is UP:
            following = seat.received + 1
            if following <= CARDS_PER_HAND and not self._unburned(street_of_card(following)):
                # Some card of the seat's may be due, even out of turn: a card dealt
                # (its river face up is last_card_exposed, rule 17), not its hole card.
                return False
            self._fill_unread(seat, card, DOWN, down[0])
            return True
        if self._may_be_dealt(seat, DOWN):
            # Its down card may well be due, or it is the seat's turn: a card dealt
            # (an up card dealt down is upcard_dealt_down), not an unread one...
            if (self._redealing or hand.late_hole is not None
                    or hand.round_unread is not None or hand.due_seat() != seat.seat
                    or hand.face_due(seat, seat.received + 1) is not UP):
                return False
            # ...unless the seat's own up card follows it: in its turn, the hole card
            # read at last (back from a peek onto its stack) looks the same as its up
            # card dealt down until the next card is seen (_settle_late_hole).
            hand.late_hole = (seat.seat, self._fill_unread(seat, card, DOWN, down[0],
                                                           emit=False))
            return True
        self._fill_unread(seat, card, DOWN, down[0])
        return True

    def _settle_late_hole(self, seat_no: int | None) -> None:
        """The next card dealt decides a face-down card taken provisionally as its
        seat's unread hole card read at last (:attr:`HandState.late_hole`, set by
        :meth:`_unread_card_read`): dealt at that same seat (``seat_no``) it is the
        seat's own card of the round, so the hole card it was (its event now; no
        alert). At another seat, the burn or the board, or the hand ending, the dealer
        had moved on (so too when a seat folds first): it was the card dealt in the
        seat's turn, face down where an up card was due (``upcard_dealt_down``, raised
        one card late)."""
        hand = self.hand
        pending = hand.late_hole
        assert pending is not None
        hand.late_hole = None
        owner, held = pending
        seat = hand.seats[owner]
        number = held.number
        if (seat_no == owner or seat.status is not _ACTIVE
                or all(h is not held for h in seat.cards)):
            self._emit_dealt(owner, held.card, DOWN, street_of_card(number))
            return
        seat.cards = [h for h in seat.cards if h is not held]
        hand.owner.pop(held.card, None)
        seat.unread += 1
        seat.unread_numbers = sorted([*seat.unread_numbers, number])
        self._redealing = True
        try:
            self._deal(held.card, owner, DOWN)
        finally:
            self._redealing = False

    def _may_be_dealt(self, seat: SeatState, face: ZoneKind) -> bool:
        """Whether a card seen at ``seat`` with ``face`` may be the card being dealt
        to it: the seat's next card is due with that face or it is the seat's turn,
        unless the next card opens a street not burned for yet (rule 13) or the seat
        holds seven (rule 18)."""
        hand = self.hand
        following = seat.received + 1
        if following > CARDS_PER_HAND:
            return False
        return not self._unburned(street_of_card(following)) and (
            hand.face_due(seat, following) is face or hand.due_seat() == seat.seat)

    def _unburned(self, street: int) -> bool:
        """Whether ``street`` (4th-7th) is not begun and not burned for yet: no card of
        it can be dealt (rule 13)."""
        hand = self.hand
        return (street > 3 and street not in hand.started_streets
                and not hand.burns.get(street, 0))

    def _fill_unread(self, seat: SeatState, card: Card, face: ZoneKind, number: int, *,
                     emit: bool = True) -> HeldCard:
        """``card`` is the seat's unread card ``number`` (dealt with ``face``), read at
        last or entered by hand: it takes that card's place; nothing is dealt.
        ``emit``: its card event now (not while the judgement is provisional)."""
        hand = self.hand
        seat.unread -= 1
        seat.unread_numbers.remove(number)
        if hand.provisional.get(seat.seat, (0, 0, 0))[0] == number:
            del hand.provisional[seat.seat]
        if emit:
            return self._hold_dealt(seat, card, face, number, street_of_card(number))
        return self._hold(seat, card, face, number=number)

    def _unread_up_card_read(self, seat: SeatState, card: Card) -> bool:
        """A card seen face up at ``seat``, which holds an up card dealt that no reader
        read (issue 19: the public row shows its slot, face unknown): it is that card,
        read at last or entered by hand, and fills the slot (the earliest); nothing is
        dealt. Entered by hand (``cmd/card``) it always is: the dealer names a card
        already lying there (a provisional seat's too: it was unread, not skipped). Read, it is
        only out of the seat's turn where its next card cannot be an up card: once
        the seat's card of the round is in and the next street is not burned for
        (rule 13), or its next card is the river (face down) or it holds seven
        (rule 18); otherwise it is the card being dealt (as for a hole card,
        :meth:`_unread_card_read`)."""
        hand = self.hand
        up = seat.unread_up
        if not up:
            return False
        if card not in hand.manual and self._may_be_dealt(seat, UP):
            return False  # an up card may be due, or it is the seat's turn: dealt
        self._fill_unread(seat, card, UP, up[0])
        return True

    def _late_arrival(self, seat: SeatState, pending: tuple[int, int, int],
                      face: ZoneKind) -> bool:
        """Whether the card arriving at ``seat`` is its provisional ``pending`` card
        dealt late, right after the card dealt in its place: then the inference is
        undone and the seat dealt before its turn gets ``out_of_order`` (rule 7's
        order). Not once any other card was dealt in between, nor once the round is
        over: a live seat holds a card of the next round, the next street's burn was
        made (rule 13), or the card has the next round's face (3rd street's up card
        after the hole cards, the river after 6th street)."""
        hand = self.hand
        number, passer, progress = pending
        del hand.provisional[seat.seat]
        if seat.received != number or hand.deal_progress != progress + 1:
            return False  # stale, or other cards came between: unread after all
        if face is DOWN and expected_face(number) is UP and any(
                _seat_face(seat, n) is DOWN for n in seat.unread_numbers):
            # Its card of the round late *and* dealt face down (two errors), or the
            # hole card it holds unread read at last after a peek (none): the reading
            # that costs a correct deal no alert (_unread_card_read takes it).
            return False
        seats = hand.seats
        live = hand.live_seats
        counts = [seats[s].received for s in live]
        if max(counts) > number:
            return False  # the next round has begun: the card was unread after all
        following = number + 1
        if following <= CARDS_PER_HAND:
            street = street_of_card(following)
            if street > street_of_card(number) and hand.burns.get(street, 0) > 0:
                return False  # the next street's burn was made (rule 13)
            if expected_face(following) is not expected_face(number) and (
                    face is expected_face(following)):
                return False  # the next round's face (3rd street's up card, the river)
            if following == 2 and min(counts) == number and seat.seat == live[0]:
                return False  # two hole cards alike: the unread reading costs no alert
        seat.received = number - 1
        seat.unread -= 1
        seat.unread_numbers.remove(number)
        self._alert(
            AlertCode.OUT_OF_ORDER,
            passer,
            street_of_card(number),
            f"Seat {passer} got a card but seat {seat.seat} was next:"
            " deal one card at a time, clockwise from the dealer's left.",
        )
        return True

    def _unread(self, seat: SeatState, number: int, passer: int | None = None, *,
                quiet: bool = False) -> None:
        """``seat`` was dealt its ``number``-th card and no reader read it; ``passer``:
        the seat dealt in its place in this round (the inference is provisional);
        ``quiet``: part of a whole round taken as unread, whose notices wait for the
        cards that decide it (:meth:`_confirm_round`)."""
        hand = self.hand
        joined = hand.joined_unread.get(seat.seat)
        if joined is not None and number > joined:
            del hand.joined_unread[seat.seat]
            if number == joined + 1:
                # Joined on unread first cards, now passed over in the next round: it
                # was a card dealt to a seat not in the hand (rule 7).
                for held in seat.cards:
                    hand.owner.pop(held.card, None)
                hand.remove_player(seat.seat)
                self._inactive(seat.seat, expected_face(joined))
                return
        seat.received = number
        seat.unread += 1
        seat.unread_numbers.append(number)
        if passer is not None:
            self.hand.provisional[seat.seat] = (number, passer, self.hand.deal_progress)
        if not quiet:
            self._unread_notice(seat, number)

    def _unread_notice(self, seat: SeatState, number: int) -> None:
        """The ``card_unread`` notice: the seat, never the card."""
        self._notice(
            AlertCode.CARD_UNREAD,
            seat.seat,
            street_of_card(number),
            f"Seat {seat.seat}'s {_ordinal(number)} card was dealt but no reader read it"
            " (a stack too deep for its antenna, or a dead tag): enter it at the console"
            " if its tag is dead.",
        )

    def _manual(self, card: Card, zone: Zone) -> None:
        """The dealer entered ``card`` by hand: it counts as read in ``zone`` (its tag
        is dead, so it is never seen leaving); a notice so the tag gets replaced."""
        hand = self.hand
        if card in hand.manual:
            return
        hand.manual.add(card)
        self._notice(
            AlertCode.MANUAL_CARD,
            zone.seat,
            hand.street,
            f"A card at {_where(zone)} was entered by hand: its tag cannot be read,"
            " replace it after the hand.",
        )

    def _take_inventory(self) -> None:
        """End of hand (issue 19, "variance"): every card that left a live seat and
        was not seen again while the seat played on is reported once,
        ``card_left_table``, naming the seat."""
        hand = self.hand
        if hand.accounted:
            return
        hand.accounted = True
        if not hand.left_at:
            return  # no card left a seat unseen (nearly every hand): nothing to look at
        if not hand.rules.folds_from_cards:
            hand.left_at.clear()  # a console came in mid-hand: rule 10 is its to judge
            return
        for seat_no in hand.live_seats:
            seat = hand.seats[seat_no]
            others = any(held.present for held in seat.cards)
            for held in seat.cards:
                left = hand.left_at.get(held.card)
                if held.present or left is None:
                    continue
                if others or hand.deal_progress > left[0]:
                    # Missing while the seat kept other cards, or while the deal went
                    # on: not a peek, not the gathering at the end.
                    self._card_left_table(seat_no, held.card)

    def _check_peeks(self, now: float) -> None:
        """Game protection while the hand goes on: a card gone from a live seat for
        longer than :data:`PEEK_ALLOWANCE` while other cards were dealt is not a
        peek: ``card_left_table`` now rather than at the end of the hand."""
        hand = self.hand
        for card, (progress, since) in list(hand.left_at.items()):
            if since <= 0.0 or now - since <= PEEK_ALLOWANCE or hand.deal_progress <= progress:
                continue  # (no time: a script's line, or a move the start-up reconstructed)
            owner = hand.owner.get(card)
            if owner is None or hand.seats[owner].status is not _ACTIVE:
                continue
            seat = hand.seats[owner]
            if any(held.present for held in seat.cards):
                self._card_left_table(owner, card)

    def _card_left_table(self, seat_no: int, card: Card) -> None:
        hand = self.hand
        if card in hand.missing_reported:
            return
        hand.missing_reported.add(card)
        self._alert(
            AlertCode.CARD_LEFT_TABLE,
            seat_no,
            hand.street,
            f"A card of seat {seat_no} left the table and was not seen again while the seat"
            " played on: check the seat for a palmed or dropped card.",
        )

    def _check_cleared(self) -> None:
        """Auto hands end when no card is left in any seat zone after the deal (a
        card entered by hand has a dead tag: it is never seen leaving)."""
        hand = self.hand
        if not hand.auto or hand.cleared or not hand.players:
            return
        manual = hand.manual
        if any(z.seat is not None for card, zones in hand.where.items() for z in zones
               if card not in manual):
            return
        self._finish()
        hand.phase = Phase.CLEARED

    # ------------------------------------------------------------ ownership

    def _detach(self, card: Card, seat_no: int, to: Zone) -> None:
        """``card`` left seat ``seat_no`` for ``to``: a fold, or a correction."""
        hand = self.hand
        seat = hand.seats[seat_no]
        held = seat.held(card)
        del hand.owner[card]
        hand.left_at.pop(card, None)  # it is somewhere: not missing
        if held is None:
            return
        seat.cards.remove(held)
        if to.kind is _MUCK_PILE:
            hand.mucked_by[card] = seat_no
            self._fold(seat_no)
        elif held.number > 0:
            # Rule 13: a card moved to its proper place no longer counts here.
            seat.received -= 1

    def _fold(self, seat_no: int, by_console: bool = False) -> None:
        hand = self.hand
        seat = hand.seats[seat_no]
        if seat.status is not _ACTIVE or hand.finished:
            return  # mucking after the result is clearing the table, not folding
        if hand.live_seats == (seat_no,):
            return  # the last hand standing being gathered up is not a fold
        if hand.late_hole is not None:
            # A fold comes in the betting after a round, not between a seat's hole card
            # read late and its up card: the held card was the card dealt in its turn
            # (upcard_dealt_down), decided before the fold (which may end the hand).
            self._settle_late_hole(None)
        hand.set_status(seat_no, _FOLDED)
        for held in seat.cards:  # a folded seat's cards are nobody's concern now
            hand.left_at.pop(held.card, None)
        self._emit(GameEventKind.FOLD, seat=seat_no, street=hand.street)
        if not by_console:
            hand.rules.seat_out(seat_no, "cards mucked")
        self._after_change()

    def _return_to_seat(self, card: Card, zone: Zone) -> None:
        """A card the seat already owns shows up in one of its zones again."""
        hand = self.hand
        assert zone.seat is not None
        seat = hand.seats[zone.seat]
        held = seat.held(card)
        if held is None:
            return
        held.present = True
        if hand.left_at.pop(card, None) is not None and zone.seat in hand.bare:
            hand.bare.remove(zone.seat)  # a peek: the seat is back
        if held.face is zone.kind:
            return
        if zone.kind is UP and hand.showdown_due:
            hand.shown.add(zone.seat)  # turned face up at the showdown
        # (asked while the card is still face down)
        late = zone.kind is UP and 3 in hand.completed_streets and self._dealt_face_up(held)
        if late:
            self._never_dealt(seat)
        held.face = zone.kind
        if (
            zone.kind is UP
            and held.number in (1, 2)
            and not held.exposed_hole
            and (3 not in hand.completed_streets or late)
        ):
            self._expose_hole(seat, held)

    def _dealt_face_up(self, held: HeldCard) -> bool:
        """A face-down hole card turning face up after 3rd street: is it the card
        presence placed face down by the deal order that the deal since says was dealt
        face up (:func:`~.due.face_up_holes`: the seat passed over since, its other
        hole card exposed)? (A hole card shown later is no deal error.)"""
        return held.card in face_up_holes(self.hand)

    def _never_dealt(self, seat: SeatState) -> None:
        """The dealer dealt ``seat`` nothing since 3rd street because its hand was dead
        (rule 5), so the cards taken as unread were never dealt: the seat is back to its
        two hole cards (exposing the one dealt face up kills it)."""
        hand = self.hand
        never = [n for n in seat.unread_numbers if n > 2]
        seat.unread_numbers = [n for n in seat.unread_numbers if n <= 2]
        seat.unread -= len(never)
        seat.received -= len(never)
        hand.provisional.pop(seat.seat, None)

    # ----------------------------------------------------------------- deal

    def _deal(self, card: Card, seat_no: int, face: ZoneKind) -> None:
        hand = self.hand
        if hand.late_hole is not None:
            self._settle_late_hole(seat_no)
        seat = hand.seats.get(seat_no)
        if hand.phase is _FORMING:
            if seat is None:
                # Auto hand, first round: every seat dealt in joins the hand (in any
                # order: two readers may report cards a scan cycle apart).
                seat = hand.add_player(seat_no)
            elif seat.received >= 1:
                hand.phase = Phase.DEALING  # a second card: the first round is over
        if seat is None:
            joins = self._joins_unread(seat_no, face)
            if not joins:
                self._inactive(seat_no, face)
                return
            seat = hand.add_player(seat_no)  # its first cards were never read (issue 19)
            for number in range(1, joins):
                self._unread(seat, number)
            hand.joined_unread[seat_no] = joins
        if seat.status is _DEAD:
            self._alert(
                AlertCode.CARD_TO_INACTIVE_SEAT,
                seat_no,
                hand.street,
                f"A card went to seat {seat_no}, whose hand is dead"
                f" ({seat.dead_reason}).",
            )
            self._hold(seat, card, face, number=0)
            return
        if seat.status is _FOLDED:
            if hand.rules.may_receive_after_fold(seat_no) and self._folded_seat_due(seat):
                # Rule 7: a hand folded with no bet keeps receiving cards. Without
                # betting input the engine cannot tell, so a card in turn is fine.
                seat.received += 1
                self._hold_dealt(seat, card, face, seat.received,
                                 street_of_card(seat.received))
                return
            self._alert(
                AlertCode.CARD_TO_INACTIVE_SEAT,
                seat_no,
                hand.street,
                f"A card went to seat {seat_no}, which has folded.",
            )
            self._hold(seat, card, face, number=0)
            return

        if self._unread_stacks:  # (off, the default: one test per card, issue 25)
            if hand.rules.folds_from_cards:
                # Something is missing (issue 19): a deal read whole passes the tests.
                if seat.unread and face is UP and card in hand.manual and (
                        self._unread_up_card_read(seat, card)):
                    return  # the dealer entered the up card no reader read: its slot
                if hand.round_unread is not None:
                    self._settle_round(seat, face)
                pending = hand.provisional.get(seat_no)
                if pending is None or not self._late_arrival(seat, pending, face):
                    if seat.unread and face is UP and self._unread_up_card_read(seat, card):
                        return
                    if seat.unread and self._unread_card_read(seat, card, face):
                        return
                    if hand.provisional or hand.due_seat() != seat_no:
                        self._infer_unread(seat_no)
                    elif face is UP and seat.received == 1:
                        self._door_after_unread_round(seat)
            if hand.joined_unread and seat.received >= hand.joined_unread.get(seat_no, 9):
                del hand.joined_unread[seat_no]  # its card of the next round: it plays
        # A street can complete only when the seat that alone had the fewest cards
        # gets its card (every other change settled its streets already).
        due, alone = hand.due_and_alone()
        number = seat.received + 1  # (>= 1: received never goes below 0)
        # street_of_card and expected_face read from their tables here, the helpers
        # called only where their answer needs more: this runs for every card.
        street = STREET_OF_CARD[number] if number <= CARDS_PER_HAND else CARDS_PER_HAND
        if due is not None and due != seat_no:
            self._alert(
                AlertCode.OUT_OF_ORDER,
                seat_no,
                street,
                f"Seat {seat_no} got a card but seat {due} was next:"
                " deal one card at a time, clockwise from the dealer's left.",
            )
        if number <= CARDS_PER_HAND and street not in hand.started_streets:
            self._check_burn_before(street, number, card)  # a street's first card (rule 13)
        rules = hand.rules
        if rules is not CARD_ONLY:  # (its card_dealt does nothing: a call saved per card)
            rules.card_dealt(seat_no, card, street)
        if hand.reshuffle is _BURN_DUE:
            hand.reshuffle = Reshuffle.DONE
            self._alert(
                AlertCode.MISSING_BURN,
                None,
                7,
                "The rest of 7th street was dealt from the scrambled cards without burning"
                " one first (rules 13 and 15).",
            )
        # Only the 3rd card (rule 5) and the 7th (rule 17b) can be due with another face
        # than the table's.
        face_due = (hand.face_due(seat, number) if number == 3 or number >= CARDS_PER_HAND
                    else FACE_OF_CARD[number])
        seat.received = number
        total = number if hand.community is None else number + 1
        held = self._hold_dealt(seat, card, face, number, street)
        if total > CARDS_PER_HAND:
            self._alert(
                AlertCode.TOO_MANY_CARDS,
                seat_no,
                min(street, 7),
                f"Seat {seat_no} now has {total} cards: a hand with more than seven cards"
                " is dead.",
            )
            self._kill(seat_no, "more than seven cards")
            return
        if held.face is not face_due or number == CARDS_PER_HAND:
            self._check_face(seat, held, face_due, street)  # (a face as due: nothing)
        if due is None or (due == seat_no and alone):
            self._after_change(seat)

    def _inactive(self, seat_no: int, face: ZoneKind) -> None:
        self._alert(
            AlertCode.CARD_TO_INACTIVE_SEAT,
            seat_no,
            self.hand.street,
            f"The {_face_word(face)} card went to seat {seat_no}, which is not in this hand.",
        )

    def _joins_unread(self, seat_no: int, face: ZoneKind) -> int:
        """``unread_stacks``, an auto hand (players learnt from round 1): a card at a
        seat not in the hand in its turn of round 2, face down (the
        seats after it hold one card fewer, those before it as many or, theirs unread,
        one fewer too) is a player's card whose earlier ones were never read (a dead
        tag, a stack). Returns that round (0: no). Provisional: passed over in the
        next round, the seat was not dealt in after all and the card is
        ``card_to_inactive_seat`` then (rule 7)."""
        hand = self.hand
        if (not self.settings.unread_stacks or not hand.auto
                or hand.phase is not Phase.DEALING or not hand.rules.folds_from_cards):
            return 0
        seats = hand.seats
        live = hand.live_seats
        if not live or len(live) != len(hand.players):
            return 0
        after = [seats[s].received for s in live if s > seat_no]
        before = [seats[s].received for s in live if s < seat_no]
        number = after[0] + 1 if after else max(before)
        # Round 2 only: joining in round 3 (both hole cards unread, 0.5% x 5% of the
        # seats) would take many more cards to an empty seat during 3rd street's up
        # round, where a hand that ends then never shows the seat passed over.
        if (number != 2 or face is not expected_face(number)
                or any(c != number - 1 for c in after)
                or any(c not in (number - 1, number) for c in before)):
            return 0
        return number

    def _folded_seat_due(self, seat: SeatState) -> bool:
        """Whether a folded seat's next card arrives exactly in its turn (rule 7)."""
        hand = self.hand
        live = hand.live_seats
        if not live:
            return False
        mine = seat.received
        return all(
            hand.seats[s].received == (mine + 1 if s < seat.seat else mine) for s in live
        )

    def _check_face(self, seat: SeatState, held: HeldCard, face_due: ZoneKind, street: int
                    ) -> None:
        hand = self.hand
        number = held.number
        if held.face is face_due:
            if number == CARDS_PER_HAND and held.face is UP:
                seat.last_card_exposed = True  # rule 17(b): dealt up on purpose
            return
        if number in (1, 2):
            self._expose_hole(seat, held)
        elif held.face is DOWN:
            self._alert(
                AlertCode.UPCARD_DEALT_DOWN,
                seat.seat,
                street,
                f"Seat {seat.seat}'s {_ordinal(number)} card should be face up but was dealt"
                " face down: turn it face up.",
            )
        elif number == 3:
            self._alert(
                AlertCode.HOLE_CARD_EXPOSED,
                seat.seat,
                3,
                f"Seat {seat.seat}'s third card should have been dealt face down to replace"
                " the exposed hole card (rule 5), but it landed face up.",
            )
        elif number == CARDS_PER_HAND:
            seat.last_card_exposed = True
            all_in = seat.stack == 0
            live = hand.live_seats
            if all_in:
                detail = "the player is all-in and keeps it (rule 16)."
            elif len(live) > 2:
                detail = (
                    "everyone else gets their last card face down; the player may declare"
                    " all-in, and the high hand on board using all face-up cards starts the"
                    " action (rule 17a)."
                )
            elif live and live[0] == seat.seat:
                detail = "the other player's last card is dealt face up too (rule 17b)."
            else:
                detail = "the player may declare all-in (rule 17b)."
            self._alert(
                AlertCode.LAST_CARD_EXPOSED,
                seat.seat,
                7,
                f"Seat {seat.seat}'s last card was dealt face up: {detail}",
                rule=16 if all_in else 17,
            )

    def _expose_hole(self, seat: SeatState, held: HeldCard) -> None:
        held.exposed_hole = True
        seat.exposed_holes += 1
        if self.settings.rules.tournament:
            self._alert(
                AlertCode.MISDEAL,
                seat.seat,
                3,
                f"Seat {seat.seat}'s hole card was dealt face up: in a tournament this is a"
                " misdeal (rule 5).",
            )
        if seat.exposed_holes == 1:
            self._alert(
                AlertCode.HOLE_CARD_EXPOSED,
                seat.seat,
                3,
                f"Seat {seat.seat}'s {_ordinal(held.number)} card (a hole card) was exposed:"
                " deal the third card face down (rule 5).",
            )
        else:
            self._alert(
                AlertCode.BOTH_HOLE_CARDS_EXPOSED,
                seat.seat,
                3,
                f"Both of seat {seat.seat}'s hole cards were exposed: the hand is dead and"
                " the ante is returned (rule 5).",
            )
            self._kill(seat.seat, "both hole cards exposed")

    def _hold(self, seat: SeatState, card: Card, face: ZoneKind, number: int) -> HeldCard:
        held = HeldCard(card, face, number)  # (positional: cheaper per card)
        seat.cards.append(held)
        self.hand.owner[card] = seat.seat
        return held

    def _hold_dealt(self, seat: SeatState, card: Card, face: ZoneKind, number: int,
                    street: int) -> HeldCard:
        """``seat`` is dealt ``card`` as its ``number``-th card: it holds it (as
        :meth:`_hold`) and ``card_dealt_up``/``card_dealt_down`` says so."""
        # One call for both, not _hold then an emit: this runs for every card (issue 25).
        held = HeldCard(card, face, number)
        seat.cards.append(held)
        hand = self.hand
        hand.owner[card] = seat.seat
        # GameEvent built here rather than through _emit, the tuple made directly: the
        # named tuple's own __new__ is a Python function that does only this (half the
        # cost of the event, issue 25).
        self._out.append(_new_event(GameEvent, (
            _DEALT_UP if face is UP else _DEALT_DOWN, seat.seat, street, card, None, (),
            (), self._at, None, card in hand.manual)))
        return held

    def _emit_dealt(self, seat_no: int, card: Card, face: ZoneKind, street: int) -> None:
        """``card_dealt_up``/``card_dealt_down`` of a card a seat already holds (a late
        hole card's judgement settled: :meth:`_settle_late_hole`). The same event as
        :meth:`_hold_dealt` builds inline, there without this call for every card."""
        self._out.append(_new_event(GameEvent, (
            _DEALT_UP if face is UP else _DEALT_DOWN, seat_no, street, card, None, (), (),
            self._at, None, card in self.hand.manual)))

    def _kill(self, seat_no: int, reason: str) -> None:
        hand = self.hand
        seat = hand.seats[seat_no]
        if seat.status is _DEAD:
            return
        hand.set_status(seat_no, _DEAD)
        seat.dead_reason = reason
        self._emit(GameEventKind.HAND_DEAD, seat=seat_no, street=hand.street, text=reason)
        if hand.finished:
            # A card event after the result (e.g. both hole cards turned up while the
            # table is gathered) marks the seat, but the betting is settled: telling
            # it would pay the pot again to the others (phase ENDED is final).
            return
        hand.rules.seat_out(seat_no, reason)
        self._after_change()

    # ------------------------------------------------------- burns and board

    def _allowed_burns(self, street: int) -> int:
        hand = self.hand
        extra = hand.rules.allowed_extra_burns(street)
        if street == 3:
            return (1 if self.settings.rules.burn_before_third else 0) + extra
        if street == 7 and hand.reshuffled:
            # Rule 15: the burns made before gathering (one, or none when the deck
            # had nothing left to burn) plus the one after the scramble.
            return hand.burns_before_gather + 1 + extra
        return 1 + extra

    def _check_burn_before(self, street: int, number: int, card: Card) -> None:
        """Rule 13: the first card of a street needs its burn."""
        hand = self.hand
        if street in hand.started_streets:
            return
        hand.started_streets.add(street)
        self._emit(_STREET_STARTED, street=street)
        if street == 3 and number != 1:
            return
        if hand.burns.get(street, 0) < min(1, self._allowed_burns(street)):
            # Held one card (_settle_burn_owed): the burn's first read can come a few
            # milliseconds after the street's first card's when flicker or the
            # dealer's hand delays it, and that is no dealing error.
            alert = Alert(AlertCode.MISSING_BURN, None, street, RULE_OF[AlertCode.MISSING_BURN],
                          f"{_street_name(street)} was dealt without burning a card first"
                          " (rule 13): correct the cards to their proper position if"
                          " possible.", self._at)
            hand.burn_owed = (alert, len(hand.alerts), card)

    def _settle_burn_owed(self, zone: Zone) -> None:
        """The card after a street's first card unburned: a burn read now that belongs
        to that street (rule 13) was its burn, read late; anything else raises the
        held ``missing_burn``, and so does that first card taken back (:meth:`remove`:
        the dealer correcting the deal); another card's removal, a peek, does not
        decide."""
        hand = self.hand
        owed = hand.burn_owed
        assert owed is not None
        if (zone.kind is _BURN and not hand.finished
                and self._at - owed[0].at <= LATE_BURN_READ
                and self._burn_street() == owed[0].street):
            hand.burn_owed = None
            return
        self._raise_burn_owed()

    def _raise_burn_owed(self) -> None:
        """Raise the held ``missing_burn`` in its place among the hand's alerts."""
        hand = self.hand
        owed = hand.burn_owed
        assert owed is not None
        hand.burn_owed = None
        alert, index, _card = owed
        hand.alerts.insert(index, alert)
        self._out.append(alert)

    def _unread_before_burn(self) -> None:
        """``unread_stacks``: a burn while the last live seats in position order hold
        one card fewer than the others (or every live seat one fewer than a seat that
        folded after the round's card): the round is over (rule 13: the next street is
        burned for), so those seats were dealt their card of it unread. Without this
        the burn would count as a second one for the round's street (``extra_burn``)
        and the next street as dealt unburned (``missing_burn``)."""
        hand = self.hand
        live = hand.live_seats
        seats = hand.seats
        counts = [seats[s].received for s in live]
        if not counts:
            return
        # A seat that folded after the round's card counts too: every live seat may
        # have missed it.
        most = max(seats[s].received for s in hand.players if seats[s].status is not _DEAD)
        fewest = min(counts)
        if most != fewest + 1 or most >= CARDS_PER_HAND or hand.reshuffle is _BURN_DUE:
            return  # (no street follows the 7th; rule 15's burn after the scramble)
        first_short = counts.index(fewest)
        if any(c != fewest for c in counts[first_short:]):
            return  # a seat short in the middle of the round: not this picture
        for seat_no in live[first_short:]:
            if not _may_be_unread(seats[seat_no], most):
                return
        for seat_no in live[first_short:]:
            self._unread(seats[seat_no], most)

    # ------------------------- every live seat's card of one round unread (issue 19)

    def _door_after_unread_round(self, seat: SeatState) -> None:
        """``unread_stacks``: the first live seat gets an up card in its turn while every
        live seat holds one card. Either its 2nd hole card was dealt face up (rule 5)
        or every live seat's 2nd hole card lies unread on its stack and this is the
        door card (3rd street's up round). Taken as the round unread
        (:class:`RoundUnread`, nothing published) until the next card decides
        (:meth:`_settle_round`): the next seat's card face down is the hole card's
        round going on, so the first seat's card was exposed after all."""
        hand = self.hand
        live = hand.live_seats
        if (len(live) < 2 or live[0] != seat.seat or hand.round_unread is not None
                or hand.joined_unread):
            return
        seats = hand.seats
        for seat_no in live:
            other = seats[seat_no]
            if other.received != 1 or other.exposed_holes or not _may_be_unread(other, 2):
                return
        for seat_no in live:
            self._unread(seats[seat_no], 2, quiet=True)
        hand.round_unread = RoundUnread(RoundPicture.DOOR_UP, 2, live)

    def _second_burn_after_unread_round(self) -> None:
        """``unread_stacks``: a burn while every live seat holds the same count of 3-5
        cards and that count's next street (4th-6th) was burned for already. Either a
        second burn (rule 13's ``extra_burn``) or every live seat's card of that street
        lies unread in its row and this is the next street's burn. Taken as the round
        unread (nothing published) until a card decides (:meth:`_settle_round`): the
        two readings differ first at the river, which is the 7th card of the second
        (face down) and the 6th of the first (face up, rule 16)."""
        hand = self.hand
        if (hand.round_unread is not None or hand.joined_unread
                or hand.community is not None or hand.reshuffle is _BURN_DUE):
            return
        live = hand.live_seats
        if len(live) < 2:
            return
        seats = hand.seats
        held = seats[live[0]].received
        if not 3 <= held <= 5 or any(seats[s].received != held for s in live) or any(
                seats[s].received > held for s in hand.players
                if seats[s].status is not _DEAD):
            return  # (a seat that folded after the round's card: _unread_before_burn's)
        street = held + 1
        if hand.burns.get(street, 0) < self._allowed_burns(street):
            return  # the street's own burn
        if any(not _may_be_unread(seats[s], street) for s in live):
            return
        for seat_no in live:
            self._unread(seats[seat_no], street, quiet=True)
        hand.round_unread = RoundUnread(RoundPicture.SECOND_BURN, street, live)

    def _settle_round(self, seat: SeatState, face: ZoneKind) -> None:
        """A card dealt at live ``seat`` while a whole round is taken as unread: does it
        decide? A door-card round (:meth:`_door_after_unread_round`) is decided by the
        next card: face down at one of its seats it is the hole cards' round going on
        (undone: ``hole_card_exposed`` at the first seat, rule 5); anything else
        confirms it. A second-burn round (:meth:`_second_burn_after_unread_round`) by
        the first card that would be a seat's 7th: face down it is the river
        (confirmed), face up the 6th street's card (undone: ``extra_burn``, rule 13)."""
        pending = self.hand.round_unread
        assert pending is not None
        if pending.picture is RoundPicture.DOOR_UP:
            if face is DOWN and seat.seat in pending.seats:
                self._undo_round(pending)
            else:
                self._confirm_round()
        elif seat.seat in pending.seats and seat.received + 1 == CARDS_PER_HAND:
            if face is UP:
                self._undo_round(pending)
            else:
                self._confirm_round()

    def _confirm_round(self) -> None:
        """The round taken as unread was: its ``card_unread`` notices now."""
        hand = self.hand
        pending = hand.round_unread
        assert pending is not None
        hand.round_unread = None
        for seat_no in pending.seats:
            self._unread_notice(hand.seats[seat_no], pending.number)

    def _undo_round(self, pending: RoundUnread) -> None:
        """The round taken as unread was a real error: every seat's inferred card is
        taken back (the cards read since renumbered, the streets and burns since moved
        back one), and the error's alert is raised now."""
        hand = self.hand
        hand.round_unread = None
        number = pending.number
        for seat_no in pending.seats:
            seat = hand.seats[seat_no]
            if number not in seat.unread_numbers:
                continue
            seat.unread_numbers.remove(number)
            seat.unread -= 1
            seat.received -= 1
            for held in seat.cards:
                if held.number > number:
                    held.number -= 1
        if pending.picture is RoundPicture.DOOR_UP:
            first = hand.seats[pending.seats[0]]
            door = next((h for h in first.cards if h.number == number), None)
            if door is not None and door.face is UP and not door.exposed_hole:
                self._expose_hole(first, door)  # rule 5: hole_card_exposed
            return

        def back(street: int) -> int:
            return street - 1 if street > number else street

        burns: dict[int, int] = {}
        for street, count in hand.burns.items():
            burns[back(street)] = burns.get(back(street), 0) + count
        hand.burns = burns
        hand.burned_for = {card: back(street) for card, street in hand.burned_for.items()}
        hand.started_streets = {back(street) for street in hand.started_streets}
        hand.completed_streets = [back(street) for street in hand.completed_streets
                                  if street != number]
        hand.first_to_act = {back(street): seat_no
                             for street, seat_no in hand.first_to_act.items()
                             if street != number}
        self._alert(
            AlertCode.EXTRA_BURN,
            None,
            number,
            f"An extra card was burned for {_street_name(number)} (only one card is burned"
            " per street, rule 13): correct the cards to their proper position if"
            " possible.",
        )

    def _burn_street(self) -> int:
        """The street a burn happening now belongs to."""
        hand = self.hand
        live = hand.live_seats or hand.players
        counts = [hand.seats[s].received for s in live]
        if not counts:
            return 3
        most, fewest = max(counts), min(counts)
        if hand.community is not None:
            return 7
        if most == fewest:
            return street_of_card(min(most + 1, CARDS_PER_HAND))
        return street_of_card(most)

    def _burn(self, card: Card) -> None:
        hand = self.hand
        if hand.late_hole is not None:
            self._settle_late_hole(None)
        if self.settings.unread_stacks and hand.rules.folds_from_cards and not hand.finished:
            pending = hand.round_unread
            if pending is not None and pending.picture is RoundPicture.DOOR_UP:
                self._confirm_round()  # 3rd street is over: its doors were doors
            self._unread_before_burn()
            self._second_burn_after_unread_round()
        street = self._burn_street()
        count = hand.burns.get(street, 0) + 1
        hand.burns[street] = count
        hand.burned_for[card] = street
        if street == 7 and hand.reshuffle is Reshuffle.BURN_DUE:
            hand.reshuffle = Reshuffle.DONE
        self._emit(_CARD_BURNED, street=street, card=card)
        allowed = self._allowed_burns(street)
        if count > allowed:
            if allowed == 0:
                why = "this table does not burn before 3rd street"
            else:
                why = "only one card is burned per street"
            self._alert(
                AlertCode.EXTRA_BURN,
                None,
                street,
                f"An extra card was burned for {_street_name(street)} ({why}, rule 13):"
                " correct the cards to their proper position if possible.",
            )

    def _board(self, card: Card) -> None:
        hand = self.hand
        if hand.late_hole is not None:
            self._settle_late_hole(None)
        live = hand.live_seats
        sixth_done = bool(live) and all(hand.seats[s].received >= 6 for s in live)
        if hand.community is not None or not sixth_done:
            why = (
                "there is already a community card"
                if hand.community is not None
                else "a community card is only used on 7th street when the deck runs short"
            )
            self._alert(
                AlertCode.UNEXPECTED_BOARD_CARD,
                None,
                hand.street,
                f"The {card.name} was put in the centre of the table, but {why} (rule 15).",
            )
            return
        self._check_burn_before(7, CARDS_PER_HAND, card)
        hand.community = card
        self._notice(  # rule 15 is a procedure the dealer announces (rule 12), not an error
            AlertCode.COMMUNITY_CARD,
            None,
            7,
            f"The deck is short: the {card.name} is a community card that every player"
            " uses; the highest hand using it starts the last betting round (rule 15).",
        )
        self._emit(GameEventKind.COMMUNITY_CARD, street=7, card=card)
        for seat_no in live:
            if hand.seats[seat_no].received + 1 > CARDS_PER_HAND:
                self._alert(
                    AlertCode.TOO_MANY_CARDS,
                    seat_no,
                    7,
                    f"Seat {seat_no} already had seven cards before the community card:"
                    " a hand with more than seven cards is dead.",
                )
                self._kill(seat_no, "more than seven cards")
        self._after_change()

    # ------------------------------------------------- streets and showdown

    def _after_change(self, dealt: SeatState | None = None) -> None:
        """Close every street whose deal is now complete; end a hand won by folds.

        ``dealt``: the seat that just got a card. Until it has the cards the next
        street needs, no street can complete, which spares most cards the scan.
        """
        hand = self.hand
        if hand.finished:
            return
        live = hand.live_seats
        if len(live) == 1 and len(hand.players) > 1:
            if not hand.rules.pays_pots:  # with a console the pots pay the last seat
                self._award([live[0]], showdown=False)
            return
        if len(live) < 2:
            return
        street = hand.completed_streets[-1] + 1 if hand.completed_streets else 3
        if dealt is not None and dealt.received < (3 if street == 3 else street) - 1:
            return
        seats = hand.seats
        fewest = min([seats[s].received for s in live])
        while True:
            street = hand.completed_streets[-1] + 1 if hand.completed_streets else 3
            if street > 7:
                return
            needed = 3 if street == 3 else street
            have = 1 if hand.community is not None and street == 7 else 0
            if fewest + have < needed:
                return
            hand.completed_streets.append(street)
            if street == 3:
                self._settle_bring_in()
            else:
                self._settle_first_to_act(street)

    def _settle_bring_in(self) -> None:
        hand = self.hand
        v = self.variant
        candidates: dict[int, Card] = {}
        for seat_no in hand.live_seats:
            up = hand.seats[seat_no].up
            if up:
                candidates[seat_no] = bring_in_card(v, up)
        if not candidates:
            return
        order = [s for s in hand.players if s in candidates]
        # Rule 1 (razz: docs/rules.md "Variants"): the lowest upcard, or the highest.
        low = bring_in_of(v, candidates, order, self.settings.rules.bring_in_tiebreak)
        low_card = candidates[low]
        seat = hand.seats[low]
        held = seat.held(low_card)
        which = "High card" if v.bring_in_highest else "Low card"
        announce = f"{which}: seat {low}, {low_card.name}"
        bringer = low
        if held is not None and held.exposed_hole:
            bringer = self._left_of(low)
            hand.bring_in_moved = True
            announce += (
                f" (an exposed hole card, rule 5): seat {bringer} acts first and may fold,"
                " bring it in or complete."
            )
        elif seat.stack == 0:
            bringer = self._left_of(low)
            hand.bring_in_moved = True
            announce += (
                f" is all-in for the ante (rule 8): seat {bringer} acts first and may fold,"
                " bring it in or complete."
            )
        else:
            announce += ", brings it in."
        hand.bring_in = bringer
        self._emit(_ANNOUNCEMENT, seat=bringer, street=3, text=announce)
        hand.rules.street_dealt(3)

    def _settle_first_to_act(self, street: int) -> None:
        hand = self.hand
        v = self.variant
        seats = hand.seats
        community = hand.community if street == 7 else None
        second_copies = hand.second_copies
        boards: dict[int, list[Card]] = {}
        for seat_no in hand.live_seats:
            # SeatState.up without the property call or a comprehension (a function
            # call each on Python 3.11): every live seat, every street.
            up = []
            for held in seats[seat_no].cards:
                if held.face is UP:
                    up.append(held.card)
            if community is not None:
                up.append(community)
            if up:
                if second_copies:  # two copies of one card (duplicate_card) count once
                    up = list(dict.fromkeys(up))
                boards[seat_no] = up
        if not boards:
            return
        # Rule 1: the best hand showing acts first (the highest; razz: the lowest),
        # ties by position (the boards are in position order, as the live seats).
        low_keys: dict[int, int] = {}
        if v.first_to_act_low:  # razz: one low reading per board (it says pairs too)
            first, low_keys, values = _low_showing(boards)
        else:  # the high hand showing (the hot path of every stud hand)
            first, values = _high_showing(boards)
        hand.first_to_act[street] = first
        hand.rules.street_dealt(street)
        # Rule 12: announce the high hand and every pair showing, never straights
        # or flushes (describe_showing_value does not name possible ones).
        which = "low" if v.first_to_act_low else "high"
        self._emit(
            _ANNOUNCEMENT,
            seat=first,
            street=street,
            text=f"Seat {first} is {which} with"
            f" {describe_showing(v, boards[first], values.get(first), low_keys.get(first))}.",
        )
        for seat_no, up in boards.items():
            if seat_no == first:
                continue
            if seat_no in values:  # a pair or more showing (the first's told above)
                self._emit(
                    _ANNOUNCEMENT,
                    seat=seat_no,
                    street=street,
                    text=f"Seat {seat_no} shows"
                    f" {describe_showing(v, up, values[seat_no])}.",
                )

    def _showdown_cards(self, seat_no: int) -> list[Card]:
        """The cards ``seat_no`` plays at showdown: its own plus the community card,
        a second copy of a card (duplicate_card) counted once."""
        hand = self.hand
        cards = hand.seats[seat_no].all_cards
        if hand.community is not None:
            cards.append(hand.community)
        return list(dict.fromkeys(cards))

    def _showdown(self) -> None:
        hand = self.hand
        v = self.variant
        values: dict[int, HandValue] = {}
        played: dict[int, list[Card]] = {}  # (the shown hands reuse them: _award)
        lows: dict[int, int] | None = {} if v.split_pot else None
        for seat_no in hand.live_seats:
            cards = self._showdown_cards(seat_no)
            if 5 <= len(cards) <= CARDS_PER_HAND:
                # The high hand, or razz's ace-to-five low (variants.primary_value).
                values[seat_no] = primary_value(v, cards)
                played[seat_no] = cards
                if lows is not None:  # stud8: the eight-or-better low half
                    lows[seat_no] = low_value_of(cards, eight_or_better=True)
        paid = hand.rules.showdown(values, lows)
        if paid is not None:
            # The pots decided: side pots can pay several seats, best hand or not.
            if lows is not None:
                hand.winners_high, hand.winners_low = paid.winners_high, paid.winners_low
            self._award(paid.winners, showdown=True, values=values, played=played)
            return
        if not values:
            self._award([], showdown=True)
            return
        best = max(values.values())
        winners = [s for s in values if values[s] == best]
        if lows is not None:
            hand.winners_high = list(winners)
            top = max(lows.values())
            hand.winners_low = [s for s in lows if lows[s] == top] if top > 0 else []
            winners = sorted(set(winners) | set(hand.winners_low))
        self._award(winners, showdown=True, values=values, played=played)

    def _award(
        self,
        winners: list[int],
        showdown: bool,
        values: Mapping[int, HandValue] | None = None,
        played: Mapping[int, list[Card]] | None = None,
    ) -> None:
        """Give the hand its result. ``values``: each shown hand's value, and
        ``played`` its cards when the showdown has them already."""
        hand = self.hand
        hand.winners = winners
        if not showdown and self.variant.split_pot:
            # stud8 won without a showdown (everyone else folded or is dead): the
            # last seat takes the whole pot, which is its high half; nobody shows a
            # low, so no low qualifies (docs/conformance.md: winners is the union of the
            # halves, winners_low empty when no low qualifies). A hand closed
            # without a result has no winners and both halves stay empty.
            hand.winners_high = list(winners)
            hand.winners_low = []
        self._end()
        shown: list[ShownHand] = []
        if showdown and values is not None:
            # Every hand that reached the showdown is shown (issue 12), winners first;
            # a folded hand never gets here (it has no value).
            losers = sorted(s for s in values if s not in winners)
            for seat_no in [*winners, *losers]:
                if seat_no in values:
                    cards = (played[seat_no] if played is not None
                             else self._showdown_cards(seat_no))
                    shown.append(ShownHand(seat_no, tuple(cards),
                                           describe_hand(self.variant, cards, values[seat_no])))
        text = (
            "no winner"
            if not winners
            else ("split pot: seats " if len(winners) > 1 else "seat ")
            + ", ".join(str(s) for s in winners)
            + (" wins" if len(winners) == 1 else "")
        )
        if len(winners) == 1 and shown and shown[0].seat == winners[0]:
            text += f" with {shown[0].description}"
        hand.result = text
        self._emit(
            GameEventKind.HAND_RESULT,
            street=hand.street,
            winners=tuple(winners),
            shown=tuple(shown),
            text=text,
        )

    def _left_of(self, seat_no: int) -> int:
        """The next live seat clockwise (to the player's left) of ``seat_no``."""
        hand = self.hand
        live = hand.live_seats
        later = [s for s in live if s > seat_no]
        return later[0] if later else live[0]

    # --------------------------------------------------------------- helpers

    def _end(self) -> None:
        """Phase DEALING (or FORMING) -> ENDED; an ended or cleared hand stays so."""
        if not self.hand.finished:
            self.hand.phase = Phase.ENDED

    def _emit(
        self,
        kind: GameEventKind,
        *,
        seat: int | None = None,
        street: int | None = None,
        card: Card | None = None,
        text: str | None = None,
        winners: tuple[int, ...] = (),
        shown: tuple[ShownHand, ...] = (),
        amount: int | None = None,
    ) -> None:
        self._out.append(_new_event(GameEvent, (  # as _hold_dealt: no __new__ call
            kind, seat, street, card, text, winners, shown, self._at, amount, False)))

    def _alert(
        self,
        code: AlertCode,
        seat: int | None,
        street: int | None,
        message: str,
        rule: int | None = -1,
    ) -> None:
        if code in NOTICE_CODES:
            # One decision table (alerts.NOTICE_CODES) says what needs a person.
            self._notice(code, seat, street, message, rule)
            return
        alert = Alert(code, seat, street, RULE_OF[code] if rule == -1 else rule, message,
                      self._at)
        self.hand.alerts.append(alert)
        self._out.append(alert)

    def _notice(
        self,
        code: AlertCode,
        seat: int | None,
        street: int | None,
        message: str,
        rule: int | None = -1,
    ) -> None:
        """Report what needs no action (a code of ``NOTICE_CODES``) as a notice."""
        assert code in NOTICE_CODES, code
        notice = Notice(code, seat, street, RULE_OF[code] if rule == -1 else rule, message,
                        self._at)
        self.hand.notices.append(notice)
        self._out.append(notice)


def replay_events(
    events: Iterable[TableEvent], settings: TableSettings | None = None
) -> list[HandState]:
    """Run ``events`` through a fresh engine; return every hand, finished."""
    engine = DealingEngine(settings)
    hands: list[HandState] = []
    auto = engine.settings.auto_hands
    for event in events:
        engine.apply(event)
        if type(event) is CardPlaced and not auto:
            continue  # goes to the hand there is: only an auto hand starts on a card
        hand = engine.hand
        if hand is not None and (not hands or hands[-1] is not hand):
            hands.append(hand)  # a hand line, or an auto hand's first card
    engine.finish_hand()
    return hands


# Enum members the per-card path reads, as module names: on Python 3.11 every
# ``Enum.MEMBER`` goes through EnumType.__getattr__ (about 0.1 us, ten times a
# plain name; gone in 3.12), and a card reads a dozen of them (issue 10).
_BURN, _BOARD, _MUCK_PILE = ZoneKind.BURN, ZoneKind.BOARD, ZoneKind.MUCK
_ACTIVE, _FOLDED, _DEAD = SeatStatus.ACTIVE, SeatStatus.FOLDED, SeatStatus.DEAD
_FORMING = Phase.FORMING
_ANNOUNCEMENT = GameEventKind.ANNOUNCEMENT
_STREET_STARTED = GameEventKind.STREET_STARTED
_CARD_BURNED = GameEventKind.CARD_BURNED
_MUCK = Zone(ZoneKind.MUCK)
_DEALT_UP = GameEventKind.CARD_DEALT_UP
_BURN_DUE = Reshuffle.BURN_DUE
_DEALT_DOWN = GameEventKind.CARD_DEALT_DOWN
_DEALER_PILES = (ZoneKind.MUCK, ZoneKind.BURN)
_new_event = tuple.__new__


def _high_showing(boards: dict[int, list[Card]]) -> tuple[int, dict[int, ShowingValue]]:
    """Rule 1's high hand showing among ``boards`` (seat -> its face-up cards, in
    position order; ties to the first), and the value of that board and of every
    board showing a pair or more: the ones rule 12 announces."""
    # One pass, no comprehension per street (each a function call on Python 3.11);
    # the strength compared as a packed int, value objects only for what is announced.
    first, best = -1, -1
    strengths: list[tuple[int, int]] = []
    for seat_no, up in boards.items():
        strength = showing_strength(up)
        strengths.append((seat_no, strength))
        if strength > best:  # strictly: an equal board later in position does not act
            first, best = seat_no, strength
    values = {first: ShowingValue(best)}
    for seat_no, strength in strengths:
        if strength >= _PAIR_FLOOR:
            values[seat_no] = ShowingValue(strength)
    return first, values


def _low_showing(boards: dict[int, list[Card]]
                 ) -> tuple[int, dict[int, int], dict[int, ShowingValue]]:
    """Razz's :func:`_high_showing`: the lowest board showing acts first (ties to the
    first in position), each board's low reading (``low_showing``), and the value of
    every board showing a pair or more (rule 12 names them as in stud)."""
    first, best = -1, -1
    low_keys: dict[int, int] = {}
    values: dict[int, ShowingValue] = {}
    for seat_no, up in boards.items():  # one pass, as _high_showing
        key = low_showing(up)
        low_keys[seat_no] = key
        if key > best:  # the low reading's key: higher is the better low
            first, best = seat_no, key
        if key_has_pair(key):
            values[seat_no] = showing_value(up)
    return first, low_keys, values


def _where(zone: Zone) -> str:
    if zone.seat is None:
        return {"burn": "the burn pile", "muck": "the muck", "board": "the centre"}[
            zone.kind.value
        ]
    return f"seat {zone.seat} ({'face up' if zone.kind is UP else 'face down'})"


def _public_name(card: Card, *zones: Zone) -> str:
    """How an alert names ``card``: alerts are public, so a card that is (or was)
    face down at a seat, or in the muck, is only "a card"."""
    if all(zone.kind in (UP, ZoneKind.BOARD) for zone in zones):
        return f"The {card.name}"
    return "A card"


def _face_word(face: ZoneKind) -> str:
    return "face-up" if face is UP else "face-down"


def _may_be_unread(seat: SeatState, number: int) -> bool:
    """Whether ``seat``'s ``number``-th card, missing, can be a card no reader read (a
    deep stack, a row of up cards, a dead tag): the seat's last card read has the face
    its number says (a 6th card read face down was the river itself: something else
    is missing)."""
    if not 1 <= number <= CARDS_PER_HAND:
        return False  # (an 8th card is rule 18's too_many_cards, never an unread one)
    last = max(seat.cards, key=_number_of, default=None)
    return (last is None or last.number == 0 or last.number >= number
            or last.exposed_hole or last.face is _seat_face(seat, last.number))


def _number_of(held: HeldCard) -> int:
    return held.number


def _seat_face(seat: SeatState, number: int) -> ZoneKind:
    """The face ``seat``'s ``number``-th card should have had (rule 5: a 3rd card
    replacing an exposed hole card is dealt down)."""
    if number == 3 and seat.exposed_holes == 1:
        return DOWN
    return expected_face(number)


def _ordinal(number: int) -> str:
    return ("first", "second", "third", "fourth", "fifth", "sixth", "seventh")[number - 1]


def _street_name(street: int) -> str:
    return {3: "3rd street", 4: "4th street", 5: "5th street", 6: "6th street"}.get(
        street, "7th street"
    )


def _names_a_pair(text: str) -> bool:
    return any(word in text for word in ("pair", "three of a kind", "four of a kind", "full"))
