"""Fixed-limit Seven Card Stud betting: antes, bring-in, five betting rounds, pots.

Theory of operation
-------------------
RFID sees cards, not chips: the dealer's console enters every betting action and
this pure state machine checks it against the fixed-limit structure and keeps
the stacks, the bets in front of each player and the pots. It never does I/O,
reads a clock or logs; it knows nothing of cards. The dealing tracker
(:mod:`table_controller.domain.engine.dealing`) supplies what only cards can tell:

1. :class:`BettingHand` is created with every seat's chips *before* the ante;
   antes are posted at once (an ante larger than a stack puts that player all-in).
2. When a street's deal is complete, :meth:`BettingHand.start_street` opens its
   betting round with the seat that acts first (the bring-in seat on 3rd street,
   the high hand later), whether a pair shows on 4th street (rule 4) and whether
   the opener may fold (rules 5 and 8: the low card is all-in or exposed).
3. Console actions arrive as the PokerKit-style trio: ``verify_x()`` raises a
   :class:`BettingError` naming the problem (its ``code`` is the console's alert
   code), ``can_x()`` is the same check as a bool, and ``x()`` verifies, applies
   and returns a frozen operation record that is also appended to :attr:`log`.
   A rejected action changes nothing.
4. :attr:`BettingHand.round_complete` tells the dealing side that the next street
   may be dealt (a card before that is a premature deal, rule 14).
5. After the last round, :meth:`BettingHand.award` takes the hand value of every
   live seat and pays the main and side pots; when all but one seat fold, the
   last seat standing is paid at once.

Structure (RULES.md "Bet sizes" and rules 1-4)
----------------------------------------------
* Bets and raises have fixed sizes: the small bet on 3rd and 4th street, the big
  bet on 5th-7th. A raise puts in one full bet on top of the highest bet.
* 3rd street: the opener posts the bring-in or completes to the small bet
  (rule 2). Bringing in and then completing is not a raise (rule 3): the
  completion is the round's first wager, and up to ``raise_cap`` raises follow.
  If everybody calls the bring-in, the round ends (the bring-in has no option).
* Open pair on 4th street (rule 4, seed 000's reading): with a pair showing, the
  opening bet may be the small or the big bet. Facing the small bet a player may
  call or raise to the big bet; once a wager reaches the big bet every further
  raise is one big bet.
* Raise cap: at most ``raise_cap`` raises after the bet or completion in each
  round (the bring-in is not counted). With ``heads_up_unlimited`` the cap does
  not apply while only two players are left in the hand (not folded).

All-in (the full-bet rule)
--------------------------
A player short of chips may call, bring in, complete, bet or raise for less,
putting in all they have; the fixed size simply stops at their stack. ``allin``
is classified as whichever of those it is; a player whose stack exceeds a full
bet or raise cannot "go all-in" (in fixed limit there is no such wager).
A wager for less than a full raise does *not* reopen the betting for players who
already acted since the last full raise: they may only call or fold, unless
several short all-ins in a row add up to a full raise. Players who have not
acted yet may raise: one full bet on top of the all-in. A short all-in still
counts towards the raise cap. These are PokerKit's semantics, which the
differential test holds us to.

Pots
----
Antes and bets build the pots of :mod:`table_controller.domain.engine.pots`: side pots
for players all-in for less, each with its eligible seats. At the end of every
round, chips bet beyond what any other player put in that round (an uncalled bet
or the uncalled part of a raise) go back to the bettor (:class:`BetReturned`);
the same holds for the antes when everybody else is all-in for less.

Showdown order: the last player to bet or raise on the final betting round shows
first; if nobody bet on it, the player who acted first on it shows first; the
others follow clockwise (:meth:`BettingHand.showdown_order`).

Floor tools
-----------
* :meth:`BettingHand.kill` folds a hand out of turn (rules 6, 10, 18), recorded
  as :class:`HandKilled`, distinct from a player's fold.
* :meth:`BettingHand.undo_last` takes back the last action while nobody has
  acted after it; :meth:`BettingHand.retract_bring_in` is rule 9's correction
  (the wrong player takes the bring-in back, action goes to the true low card);
  :meth:`BettingHand.set_opener` accepts the wrong bring-in when it is made
  before anyone acted, so that rule 9's "the bet stands" can follow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

from table_controller.domain.engine.outputs import ReplyCode
from table_controller.domain.engine.pots import (
    Comparable,
    Pot,
    PotShare,
    award_pots,
    build_pots,
)
from table_controller.domain.engine.settings import check_stakes
from table_controller.domain.events import BetAction

if TYPE_CHECKING:
    from table_controller.domain.engine.settings import TableSettings
    from table_controller.domain.events import ConsoleAction

__all__ = [
    "ActionKind",
    "ActionTaken",
    "ActionTakenBack",
    "AntePosted",
    "BetReturned",
    "BettingError",
    "BettingHand",
    "BettingStructure",
    "BringInRetracted",
    "HandKilled",
    "HandOverError",
    "IllegalActionError",
    "IllegalBetError",
    "LegalAction",
    "NoBettingRoundError",
    "OpenerChanged",
    "Operation",
    "OutOfTurnError",
    "PotAwarded",
    "StreetStarted",
    "UnknownSeatError",
]

FIRST_STREET = 3
LAST_STREET = 7


# ------------------------------------------------------------------- errors


class BettingError(ValueError):
    """An action the betting state does not allow; ``code`` names it for the console."""

    code: ClassVar[ReplyCode] = ReplyCode.ILLEGAL_ACTION


class OutOfTurnError(BettingError):
    """A seat acted while another seat is due (console alert ``out_of_turn``)."""

    code: ClassVar[ReplyCode] = ReplyCode.OUT_OF_TURN


class IllegalBetError(BettingError):
    """A wager of a size the structure does not allow, or past the cap (``illegal_bet``)."""

    code: ClassVar[ReplyCode] = ReplyCode.ILLEGAL_BET


class IllegalActionError(BettingError):
    """An action of the wrong kind: check facing a bet, fold a forced bring-in..."""

    code: ClassVar[ReplyCode] = ReplyCode.ILLEGAL_ACTION


class HandOverError(BettingError):
    """The hand is finished: nothing more can be done in it."""

    code: ClassVar[ReplyCode] = ReplyCode.HAND_OVER


class UnknownSeatError(BettingError):
    """A seat that is not dealt into the hand."""

    code: ClassVar[ReplyCode] = ReplyCode.UNKNOWN_SEAT


class NoBettingRoundError(BettingError):
    """No betting round is open (the street is still being dealt, or it is over)."""

    code: ClassVar[ReplyCode] = ReplyCode.NO_BETTING_ROUND


# ---------------------------------------------------------------- structure


@dataclass(frozen=True, slots=True)
class BettingStructure:
    """Stakes and limits of a fixed-limit stud game, in the smallest chip unit."""

    ante: int = 1
    bring_in: int = 2
    small_bet: int = 5
    big_bet: int = 10
    raise_cap: int | None = 3
    """Raises allowed after the bet or completion in one round; None: no cap."""
    heads_up_unlimited: bool = False
    """No raise cap while only two players are left in the hand."""

    def __post_init__(self) -> None:
        check_stakes(self.ante, self.bring_in, self.small_bet, self.big_bet,
                     self.raise_cap)  # the one check

    @classmethod
    def from_settings(cls, settings: TableSettings) -> BettingStructure:
        """The structure a table's settings describe."""
        return cls(
            ante=settings.ante,
            bring_in=settings.bring_in,
            small_bet=settings.small_bet,
            big_bet=settings.big_bet,
            raise_cap=settings.rules.raise_cap,
            heads_up_unlimited=settings.rules.heads_up_unlimited_raises,
        )

    def bet_size(self, street: int) -> int:
        """The fixed bet of ``street``: small on 3rd and 4th, big on 5th-7th."""
        return self.small_bet if street <= 4 else self.big_bet


# --------------------------------------------------------------- operations


ActionKind = BetAction
"""What a player's action turned out to be: the console's own names (one enum,
:class:`~table_controller.domain.events.BetAction`); an :class:`ActionTaken` is never
``ALLIN``, which is classified as the action it amounts to."""


WAGERS = (ActionKind.COMPLETE, ActionKind.BET, ActionKind.RAISE)
"""Actions that set a new amount to call and count towards the raise cap."""


@dataclass(frozen=True, slots=True)
class AntePosted:
    """A seat posted its ante (``all_in``: that was all its chips)."""

    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class StreetStarted:
    """A betting round opened after ``street``'s deal."""

    street: int
    opener: int
    open_pair: bool
    bring_in_optional: bool


@dataclass(frozen=True, slots=True)
class ActionTaken:
    """A player's action: ``added`` chips from the stack, ``total`` now bet this round."""

    seat: int
    street: int
    action: ActionKind
    added: int
    total: int
    all_in: bool
    entered: BetAction
    """The console action as entered (``allin`` shows what it was classified as)."""


@dataclass(frozen=True, slots=True)
class HandKilled:
    """The floor killed a seat's hand (rules 6, 10, 18): a fold out of turn."""

    seat: int
    street: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class BetReturned:
    """Chips nobody called went back to ``seat`` (``street`` None: the antes)."""

    seat: int
    amount: int
    street: int | None


@dataclass(frozen=True, slots=True)
class PotAwarded:
    """A pot was paid: ``shares`` pairs each winning seat with its chips."""

    pot: int
    amount: int
    winners: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]
    showdown: bool


@dataclass(frozen=True, slots=True)
class OpenerChanged:
    """The round's first actor was changed before anyone acted (rule 9)."""

    street: int
    previous: int
    opener: int


@dataclass(frozen=True, slots=True)
class ActionTakenBack:
    """The last action (or kill) was undone; the state is as before it."""

    operation: ActionTaken | HandKilled


@dataclass(frozen=True, slots=True)
class BringInRetracted:
    """Rule 9: the wrong player took the bring-in back; ``opener`` must act now."""

    operation: ActionTaken
    opener: int


Operation = (
    AntePosted
    | StreetStarted
    | ActionTaken
    | HandKilled
    | BetReturned
    | PotAwarded
    | OpenerChanged
    | ActionTakenBack
    | BringInRetracted
)
"""Every record :attr:`BettingHand.log` holds."""


@dataclass(frozen=True, slots=True)
class LegalAction:
    """An action the seat to act may take now.

    ``totals`` are the seat's possible bets this round after the action (one
    value, or two for the open-pair bet on 4th street); ``all_in`` when the
    action takes the whole stack.
    """

    action: BetAction
    totals: tuple[int, ...]
    all_in: bool = False

    @property
    def min_total(self) -> int:
        """The smallest legal total."""
        return self.totals[0]

    @property
    def max_total(self) -> int:
        """The largest legal total."""
        return self.totals[-1]


# -------------------------------------------------------------------- state


@dataclass(slots=True)
class _State:
    """Everything an action can change; copied whole for :meth:`BettingHand.undo_last`."""

    stacks: dict[int, int]
    committed: dict[int, int]
    """Chips each seat has in the pots from the antes and finished rounds."""
    bets: dict[int, int]
    """Chips in front of each seat in the current round."""
    folded: set[int] = field(default_factory=set)
    street: int | None = None
    round_open: bool = False
    opener: int | None = None
    to_act: list[int] = field(default_factory=list)
    acted: set[int] = field(default_factory=set)
    """Seats that acted since the last full wager (may not re-raise a short all-in)."""
    step: int = 0
    """What a raise adds on top of the highest bet."""
    increment: int = 0
    """The largest wager increment of the round: a full raise must match it."""
    wagers: int = 0
    """Completions, bets and raises this round (the cap counts them)."""
    short_all_ins: list[int] = field(default_factory=list)
    """Increments of consecutive all-in wagers smaller than a full raise."""
    bring_in_due: bool = False
    bring_in_optional: bool = False
    completion_pending: bool = False
    open_pair: bool = False
    actions_in_round: int = 0
    openers: dict[int, int] = field(default_factory=dict)
    aggressors: dict[int, int] = field(default_factory=dict)
    finished: bool = False
    winnings: dict[int, int] = field(default_factory=dict)
    returned: dict[int, int] = field(default_factory=dict)

    def copy(self) -> _State:
        """A deep enough copy: every container is new."""
        return replace(
            self,
            stacks=dict(self.stacks),
            committed=dict(self.committed),
            bets=dict(self.bets),
            folded=set(self.folded),
            to_act=list(self.to_act),
            acted=set(self.acted),
            short_all_ins=list(self.short_all_ins),
            openers=dict(self.openers),
            aggressors=dict(self.aggressors),
            winnings=dict(self.winnings),
            returned=dict(self.returned),
        )


@dataclass(frozen=True, slots=True)
class _Plan:
    """A verified action, ready to apply."""

    seat: int
    kind: ActionKind
    total: int
    entered: BetAction


def _intake(action: BetAction | str) -> BetAction:
    """The console action as the one enum. Typed callers pass a :class:`BetAction`;
    an untyped one (a test, a REPL) may pass its name, and anything else is refused
    like any illegal action, never a ``ValueError`` from the enum."""
    if isinstance(action, BetAction):
        return action
    try:
        return BetAction(action)
    except ValueError:
        raise IllegalActionError(f"unknown action {str(action)[:40]!r}") from None


def _can(check: Callable[[], object]) -> bool:
    try:
        check()
    except BettingError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class BettingCheckpoint:
    """A :class:`BettingHand` as it was (:meth:`BettingHand.checkpoint`)."""

    state: _State
    undo: tuple[_State, ActionTaken | HandKilled] | None
    log_length: int


class BettingHand:
    """One hand's betting: stacks, antes, five fixed-limit rounds and the pots.

    ``stacks`` maps each seat dealt in (position order = ascending seat number,
    seat 1 at the dealer's left) to its chips before the ante; with
    ``stacks_after_ante`` they are counted after a full ante (the ``hand`` line of
    a table script), so the ante is added back first.
    """

    def __init__(
        self,
        stacks: Mapping[int, int],
        structure: BettingStructure | None = None,
        *,
        stacks_after_ante: bool = False,
    ) -> None:
        self.structure = structure or BettingStructure()
        if len(stacks) < 2:
            raise ValueError("a hand needs at least two players")
        ante = self.structure.ante
        start = {s: c + (ante if stacks_after_ante else 0) for s, c in sorted(stacks.items())}
        if any(chips <= 0 for chips in start.values()):
            raise ValueError("every player needs chips to be dealt in")
        self.seats: tuple[int, ...] = tuple(start)
        """Seats dealt in, in position order."""
        self.starting_stacks: dict[int, int] = dict(start)
        """Chips each seat had before the ante."""
        self.log: list[Operation] = []
        """Every operation, in order: what the journal stores and MQTT publishes."""
        self._s = _State(
            stacks=dict(start),
            committed=dict.fromkeys(start, 0),
            bets=dict.fromkeys(start, 0),
        )
        self._undo: tuple[_State, ActionTaken | HandKilled] | None = None
        self._post_antes()

    # ------------------------------------------------------------ read-outs

    @property
    def street(self) -> int | None:
        """The street whose betting round is open or last played (None before 3rd)."""
        return self._s.street

    @property
    def round_complete(self) -> bool:
        """No betting round is waiting for action: the next street may be dealt.

        True before 3rd street's round opens and after each round ends; a card
        dealt while this is False is a premature deal (rule 14).
        """
        return not self._s.round_open

    @property
    def hand_over(self) -> bool:
        """The pots have been paid; nothing more can happen in this hand."""
        return self._s.finished

    @property
    def to_act(self) -> int | None:
        """The seat due to act, or None."""
        return self._s.to_act[0] if self._s.round_open and self._s.to_act else None

    @property
    def stacks(self) -> dict[int, int]:
        """Chips behind for every seat."""
        return dict(self._s.stacks)

    @property
    def bets(self) -> dict[int, int]:
        """Chips in front of every seat in the current round."""
        return dict(self._s.bets)

    @property
    def committed(self) -> dict[int, int]:
        """Everything each seat has put in this hand (antes, rounds and current bet)."""
        return {s: self._s.committed[s] + self._s.bets[s] for s in self.seats}

    @property
    def pot(self) -> int:
        """Chips in the middle from the antes and finished rounds (bets not included)."""
        return 0 if self._s.finished else sum(self._s.committed.values())

    @property
    def pot_total(self) -> int:
        """The pot plus the bets in front of the players."""
        return 0 if self._s.finished else self.pot + sum(self._s.bets.values())

    def pots(self) -> tuple[Pot, ...]:
        """Main pot and side pots from the finished rounds, each with its eligible seats."""
        if self._s.finished:
            return ()
        return build_pots(self._s.committed, self.live_seats)

    @property
    def live_seats(self) -> tuple[int, ...]:
        """Seats still in the hand (not folded or killed), in position order."""
        return tuple(s for s in self.seats if s not in self._s.folded)

    @property
    def folded_seats(self) -> tuple[int, ...]:
        """Seats that folded or were killed."""
        return tuple(s for s in self.seats if s in self._s.folded)

    @property
    def all_in_seats(self) -> tuple[int, ...]:
        """Live seats with no chips behind."""
        return tuple(s for s in self.live_seats if self._s.stacks[s] == 0)

    @property
    def betting_closed(self) -> bool:
        """At most one live seat has chips behind: no more betting this hand."""
        return sum(1 for s in self.live_seats if self._s.stacks[s] > 0) <= 1

    @property
    def winnings(self) -> dict[int, int]:
        """Chips each seat won from the pots (zero for the others)."""
        return {s: self._s.winnings.get(s, 0) for s in self.seats}

    @property
    def returned(self) -> dict[int, int]:
        """Uncalled chips given back to each seat."""
        return {s: self._s.returned.get(s, 0) for s in self.seats}

    @property
    def openers(self) -> dict[int, int]:
        """The seat that opened each street's round."""
        return dict(self._s.openers)

    @property
    def raises_left(self) -> int | None:
        """Raises still allowed this round (None: unlimited)."""
        if not self._s.round_open or self._cap_lifted():
            return None
        cap = self.structure.raise_cap
        assert cap is not None
        return max(0, cap + 1 - max(self._s.wagers, 1))

    def showdown_order(self) -> tuple[int, ...]:
        """Live seats in the order they show down.

        The last player to bet or raise on the final round shows first; if no one
        did, the player who acted first on it; then clockwise.
        """
        live = self.live_seats
        if not live:
            return ()
        street = self._s.street
        first = self._s.aggressors.get(street) if street is not None else None
        if first is None and street is not None:
            first = self._s.openers.get(street)
        if first is None:
            first = live[0]
        return tuple(s for s in self._order_from(first) if s in live)

    # -------------------------------------------------------- legal actions

    def legal_actions(self) -> tuple[LegalAction, ...]:
        """What the seat to act may do now, with the totals each action leads to.

        Empty when nobody is due (between rounds, hand over). Facing or opening
        the bring-in the wager is listed as ``complete`` (``act`` also accepts
        ``bet``/``raise`` for it). The same rules as :meth:`act`, computed in one
        pass (the property tests hold the two to each other).
        """
        seat = self.to_act
        if seat is None:
            return ()
        s = self._s
        bet, stack = s.bets[seat], s.stacks[seat]
        high = max(s.bets.values())
        out: list[LegalAction] = []
        if not (s.bring_in_due and not s.bring_in_optional):
            out.append(LegalAction(BetAction.FOLD, (bet,)))
        if s.bring_in_due:
            total = min(stack, self.structure.bring_in)
            out.append(LegalAction(BetAction.BRING_IN, (total,), total == stack))
        elif high <= bet:
            out.append(LegalAction(BetAction.CHECK, (bet,)))
        else:
            total = bet + min(stack, high - bet)
            out.append(LegalAction(BetAction.CALL, (total,), total - bet == stack))
        if self._wager_block(seat) is None:
            totals = self._wager_totals(seat)
            out.append(LegalAction(self._wager_kind(), totals, totals[-1] - bet == stack))
        all_in_plan = self._all_in_plan(seat)
        if all_in_plan is not None:
            out.append(LegalAction(BetAction.ALLIN, (all_in_plan.total,), True))
        return tuple(out)

    # ------------------------------------------------------------- streets

    def verify_start_street(
        self,
        street: int,
        opener: int,
        *,
        open_pair: bool = False,
        bring_in_optional: bool = False,
    ) -> None:
        """Raise unless ``street``'s betting round can open with ``opener`` first."""
        s = self._s
        if s.finished:
            raise HandOverError("the hand is over")
        if s.round_open:
            raise IllegalActionError(f"the betting round of street {s.street} is not complete")
        expected = FIRST_STREET if s.street is None else s.street + 1
        if street != expected:
            raise IllegalActionError(f"street {street} cannot start now: next is {expected}")
        if street > LAST_STREET:
            raise IllegalActionError("there is no street after 7th")
        self._check_seat(opener)
        if open_pair and street != 4:
            raise IllegalActionError("the open-pair option exists on 4th street only")
        if bring_in_optional and street != FIRST_STREET:
            raise IllegalActionError("only 3rd street has a bring-in")

    def can_start_street(
        self,
        street: int,
        opener: int,
        *,
        open_pair: bool = False,
        bring_in_optional: bool = False,
    ) -> bool:
        """Whether :meth:`start_street` would succeed."""
        return _can(
            lambda: self.verify_start_street(
                street, opener, open_pair=open_pair, bring_in_optional=bring_in_optional
            )
        )

    def start_street(
        self,
        street: int,
        opener: int,
        *,
        open_pair: bool = False,
        bring_in_optional: bool = False,
    ) -> StreetStarted:
        """Open ``street``'s betting round once its deal is complete.

        ``opener``: the bring-in seat on 3rd street, the high hand later (seats
        that cannot act, all-in or folded, are skipped clockwise). ``open_pair``:
        a pair shows on 4th street (rule 4). ``bring_in_optional``: the opener may
        fold instead of bringing in (rules 5 and 8); so may each next player
        until someone brings in or completes.
        """
        self.verify_start_street(
            street, opener, open_pair=open_pair, bring_in_optional=bring_in_optional
        )
        s = self._s
        self._undo = None
        s.street = street
        s.round_open = True
        s.opener = opener
        s.openers[street] = opener
        s.step = self.structure.bet_size(street)
        s.increment = 0
        s.wagers = 0
        s.acted = set()
        s.short_all_ins = []
        s.actions_in_round = 0
        forced = street == FIRST_STREET and self.structure.bring_in > 0
        s.bring_in_due = forced
        s.completion_pending = forced
        s.bring_in_optional = bring_in_optional and forced
        s.open_pair = open_pair
        s.to_act = self._round_actors(opener)
        operation = StreetStarted(street, opener, open_pair, s.bring_in_optional)
        self.log.append(operation)
        if not s.to_act:
            self._end_round()
        return operation

    def verify_set_opener(self, seat: int) -> None:
        """Raise unless the round's first actor can still be changed to ``seat``."""
        self._check_open()
        self._check_seat(seat)
        if self._s.actions_in_round:
            raise IllegalActionError("somebody has already acted this round")
        if seat not in self._round_actors(seat):
            raise IllegalActionError(f"seat {seat} cannot act this round")

    def can_set_opener(self, seat: int) -> bool:
        """Whether :meth:`set_opener` would succeed."""
        return _can(lambda: self.verify_set_opener(seat))

    def set_opener(self, seat: int) -> OpenerChanged:
        """Let ``seat`` act first (a wrong bring-in made before anyone acted, rule 9)."""
        self.verify_set_opener(seat)
        s = self._s
        assert s.street is not None
        assert s.opener is not None
        operation = OpenerChanged(s.street, s.opener, seat)
        s.opener = seat
        s.openers[s.street] = seat
        s.to_act = self._round_actors(seat)
        self._undo = None
        self.log.append(operation)
        return operation

    # ------------------------------------------------------------- actions

    def verify_act(self, seat: int, action: BetAction, amount: int | None = None) -> None:
        """Raise unless the console action (CONFORMANCE.md ``act`` names) is legal."""
        self._plan(seat, action, amount)

    def can_act(self, seat: int, action: BetAction, amount: int | None = None) -> bool:
        """Whether :meth:`act` would succeed."""
        return _can(lambda: self._plan(seat, action, amount))

    def act(self, seat: int, action: BetAction, amount: int | None = None) -> ActionTaken:
        """Apply a console action by name: ``bring_in complete bet raise call check
        fold allin``; ``amount`` is the seat's total bet this round after it."""
        return self._apply(self._plan(seat, action, amount))

    def verify_console_action(self, event: ConsoleAction) -> None:
        """Raise unless the console's :class:`ConsoleAction` is legal now."""
        self._plan(event.seat, event.action, event.amount)

    def can_console_action(self, event: ConsoleAction) -> bool:
        """Whether :meth:`apply_console_action` would succeed."""
        return self.can_act(event.seat, event.action, event.amount)

    def apply_console_action(self, event: ConsoleAction) -> ActionTaken:
        """Apply a journalled/scripted :class:`ConsoleAction` (an ``act`` line)."""
        return self.act(event.seat, event.action, event.amount)

    def verify_bring_in(self, seat: int) -> None:
        """Raise unless ``seat`` may post the bring-in now."""
        self._plan(seat, BetAction.BRING_IN, None)

    def can_bring_in(self, seat: int) -> bool:
        """Whether :meth:`bring_in` would succeed."""
        return self.can_act(seat, BetAction.BRING_IN)

    def bring_in(self, seat: int) -> ActionTaken:
        """Post the bring-in (all the stack if it is smaller)."""
        return self.act(seat, BetAction.BRING_IN)

    def verify_complete(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may complete to the small bet now."""
        self._plan(seat, BetAction.COMPLETE, amount)

    def can_complete(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`complete` would succeed."""
        return self.can_act(seat, BetAction.COMPLETE, amount)

    def complete(self, seat: int, amount: int | None = None) -> ActionTaken:
        """Open 3rd street for (or raise the bring-in to) a full small bet (rules 2, 3)."""
        return self.act(seat, BetAction.COMPLETE, amount)

    def verify_bet(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may bet (``amount``: total, default the fixed bet)."""
        self._plan(seat, BetAction.BET, amount)

    def can_bet(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`bet` would succeed."""
        return self.can_act(seat, BetAction.BET, amount)

    def bet(self, seat: int, amount: int | None = None) -> ActionTaken:
        """Bet the street's fixed size (open pair on 4th: ``amount`` small or big)."""
        return self.act(seat, BetAction.BET, amount)

    def verify_raise_to(self, seat: int, amount: int | None = None) -> None:
        """Raise unless ``seat`` may raise (``amount``: total after the raise)."""
        self._plan(seat, BetAction.RAISE, amount)

    def can_raise_to(self, seat: int, amount: int | None = None) -> bool:
        """Whether :meth:`raise_to` would succeed."""
        return self.can_act(seat, BetAction.RAISE, amount)

    def raise_to(self, seat: int, amount: int | None = None) -> ActionTaken:
        """Raise by one fixed step (the console's ``raise``)."""
        return self.act(seat, BetAction.RAISE, amount)

    def verify_call(self, seat: int) -> None:
        """Raise unless ``seat`` may call now."""
        self._plan(seat, BetAction.CALL, None)

    def can_call(self, seat: int) -> bool:
        """Whether :meth:`call` would succeed."""
        return self.can_act(seat, BetAction.CALL)

    def call(self, seat: int) -> ActionTaken:
        """Match the highest bet (all-in for less if short)."""
        return self.act(seat, BetAction.CALL)

    def verify_check(self, seat: int) -> None:
        """Raise unless ``seat`` may check now."""
        self._plan(seat, BetAction.CHECK, None)

    def can_check(self, seat: int) -> bool:
        """Whether :meth:`check` would succeed."""
        return self.can_act(seat, BetAction.CHECK)

    def check(self, seat: int) -> ActionTaken:
        """Check (no bet to call)."""
        return self.act(seat, BetAction.CHECK)

    def verify_fold(self, seat: int) -> None:
        """Raise unless ``seat`` may fold now."""
        self._plan(seat, BetAction.FOLD, None)

    def can_fold(self, seat: int) -> bool:
        """Whether :meth:`fold` would succeed."""
        return self.can_act(seat, BetAction.FOLD)

    def fold(self, seat: int) -> ActionTaken:
        """Fold in turn (also with no bet: rule 7's seat keeps receiving cards)."""
        return self.act(seat, BetAction.FOLD)

    def verify_all_in(self, seat: int) -> None:
        """Raise unless ``seat`` may put its whole stack in with one legal action."""
        self._plan(seat, BetAction.ALLIN, None)

    def can_all_in(self, seat: int) -> bool:
        """Whether :meth:`all_in` would succeed."""
        return self.can_act(seat, BetAction.ALLIN)

    def all_in(self, seat: int) -> ActionTaken:
        """Put the rest of the stack in, as the call, bet or raise it amounts to."""
        return self.act(seat, BetAction.ALLIN)

    # ---------------------------------------------------------- floor tools

    def verify_kill(self, seat: int) -> None:
        """Raise unless ``seat``'s hand can be killed now."""
        if self._s.finished:
            raise HandOverError("the hand is over")
        self._check_seat(seat)
        if seat in self._s.folded:
            raise IllegalActionError(f"seat {seat} is already out of the hand")

    def checkpoint(self) -> BettingCheckpoint:
        """The whole betting as it is now, for :meth:`restore` (a console input that
        may be refused after a rule-9 correction changed the opener: docs/console.md,
        a refused input changes nothing)."""
        undo = self._undo
        return BettingCheckpoint(self._s.copy(),
                                 None if undo is None else (undo[0].copy(), undo[1]),
                                 len(self.log))

    def restore(self, checkpoint: BettingCheckpoint) -> None:
        """Back to ``checkpoint`` (taken on this hand): state, undo and log."""
        self._s = checkpoint.state.copy()
        undo = checkpoint.undo
        self._undo = None if undo is None else (undo[0].copy(), undo[1])
        del self.log[checkpoint.log_length:]

    def can_kill(self, seat: int) -> bool:
        """Whether :meth:`kill` would succeed."""
        return _can(lambda: self.verify_kill(seat))

    def kill(self, seat: int, reason: str = "") -> HandKilled:
        """Kill ``seat``'s hand at any time, in turn or not (rules 6, 10, 18)."""
        self.verify_kill(seat)
        s = self._s
        before = s.copy()
        operation = HandKilled(seat, s.street, reason)
        s.folded.add(seat)
        if seat in s.to_act:
            s.to_act.remove(seat)
        self.log.append(operation)
        self._after_action()
        self._undo = (before, operation) if not s.finished else None
        return operation

    def verify_undo_last(self) -> None:
        """Raise unless there is an action to take back (nobody acted after it)."""
        if self._undo is None:
            raise IllegalActionError("there is no action to take back")

    def can_undo_last(self) -> bool:
        """Whether :meth:`undo_last` would succeed."""
        return _can(self.verify_undo_last)

    def undo_last(self) -> ActionTakenBack:
        """Take back the last action or kill; valid until the next one (or a street)."""
        self.verify_undo_last()
        assert self._undo is not None
        before, operation = self._undo
        self._s = before
        self._undo = None
        record = ActionTakenBack(operation)
        self.log.append(record)
        return record

    def verify_retract_bring_in(self, opener: int) -> None:
        """Raise unless rule 9's correction applies: the round's only action is a
        bring-in or completion by a seat other than ``opener``, the true low card."""
        if self._s.finished:
            raise HandOverError("the hand is over")
        self._check_seat(opener)
        last = self._undo[1] if self._undo is not None else None
        if (
            not isinstance(last, ActionTaken)
            or last.street != FIRST_STREET
            or last.action not in (ActionKind.BRING_IN, ActionKind.COMPLETE)
            or self._s.actions_in_round != 1
        ):
            raise IllegalActionError("the next player has acted: the bring-in stands (rule 9)")
        if last.seat == opener:
            raise IllegalActionError(f"seat {opener} made the bring-in")
        assert self._undo is not None
        if opener not in self._undo[0].to_act:
            raise IllegalActionError(f"seat {opener} cannot act this round")

    def can_retract_bring_in(self, opener: int) -> bool:
        """Whether :meth:`retract_bring_in` would succeed."""
        return _can(lambda: self.verify_retract_bring_in(opener))

    def retract_bring_in(self, opener: int) -> BringInRetracted:
        """Rule 9: the wrong bring-in is taken back and ``opener`` must bring it in."""
        self.verify_retract_bring_in(opener)
        assert self._undo is not None
        before, operation = self._undo
        assert isinstance(operation, ActionTaken)
        self._s = before
        s = self._s
        assert s.street is not None
        s.opener = opener
        s.openers[s.street] = opener
        s.to_act = self._round_actors(opener)
        self._undo = None
        record = BringInRetracted(operation, opener)
        self.log.append(record)
        return record

    # --------------------------------------------------------------- award

    def verify_award(self, values: Mapping[int, Comparable]) -> None:
        """Raise unless the pots can be paid with these hand values now."""
        s = self._s
        if s.finished:
            raise HandOverError("the hand is over")
        if s.round_open or s.street is None:
            raise NoBettingRoundError("the betting is not over")
        if s.street != LAST_STREET and not self.betting_closed:
            raise NoBettingRoundError("the betting is not over")
        live = set(self.live_seats)
        if set(values) != live:
            raise IllegalActionError(
                f"hand values are needed for exactly the live seats {sorted(live)}"
            )

    def can_award(self, values: Mapping[int, Comparable]) -> bool:
        """Whether :meth:`award` would succeed."""
        return _can(lambda: self.verify_award(values))

    def award(
        self,
        values: Mapping[int, Comparable],
        odd_chip_order: Sequence[int] | None = None,
        low_values: Mapping[int, int] | None = None,
    ) -> tuple[PotAwarded, ...]:
        """Pay every pot to its best hand; ties split, odd chips by ``odd_chip_order``.

        ``values``: the hand value (``HandValue`` or any comparable) of every live
        seat. ``odd_chip_order``: seats ranked for the odd chip; pass
        :func:`table_controller.domain.engine.pots.odd_chip_order` of the players' cards
        (high card by suit). Default: position order. ``low_values``: stud8's
        eight-or-better low score of every live seat (0: no low); each pot is
        then split high/low (:func:`table_controller.domain.engine.pots.award_pots`).
        """
        self.verify_award(values)
        order = tuple(odd_chip_order) if odd_chip_order is not None else self.seats
        shares = award_pots(self.pots(), values, order, low_values)
        return self._pay(shares, showdown=True)

    # ============================================================ internals

    def _check_seat(self, seat: int) -> None:
        if seat not in self._s.stacks:
            raise UnknownSeatError(f"seat {seat} is not in the hand")

    def _check_open(self) -> None:
        if self._s.finished:
            raise HandOverError("the hand is over")
        if not self._s.round_open:
            raise NoBettingRoundError("no betting round is open")

    def _order_from(self, seat: int) -> list[int]:
        """All seats clockwise starting at ``seat`` (or the next seat after it)."""
        later = [s for s in self.seats if s >= seat]
        return later + [s for s in self.seats if s < seat]

    def _round_actors(self, opener: int) -> list[int]:
        """Seats that will act this round, from ``opener``: live, with chips, and
        with somebody else able to call them (PokerKit's effective stack)."""
        s = self._s
        with_chips = [x for x in self._order_from(opener) if x not in s.folded and s.stacks[x]]
        return with_chips if len(with_chips) >= 2 else []

    def _post_antes(self) -> None:
        s = self._s
        for seat in self.seats:
            amount = min(self.structure.ante, s.stacks[seat])
            s.stacks[seat] -= amount
            s.committed[seat] += amount
            self.log.append(AntePosted(seat, amount, s.stacks[seat] == 0))
        self._return_uncalled(s.committed, None)

    def _return_uncalled(self, amounts: dict[int, int], street: int | None) -> None:
        """Give back what one seat put in beyond everybody else (``amounts`` in place)."""
        if len(amounts) < 2:
            return
        top, second = sorted(amounts.values())[-2:][::-1]
        if top == second:
            return
        for seat, amount in amounts.items():
            if amount == top:
                excess = top - second
                amounts[seat] -= excess
                self._s.stacks[seat] += excess
                self._s.returned[seat] = self._s.returned.get(seat, 0) + excess
                self.log.append(BetReturned(seat, excess, street))

    def _cap_lifted(self) -> bool:
        if self.structure.raise_cap is None:
            return True
        return self.structure.heads_up_unlimited and len(self.live_seats) == 2

    def _wager_block(self, seat: int) -> str | None:
        """Why ``seat`` may not complete, bet or raise now (None: it may)."""
        s = self._s
        high = max(s.bets.values())
        stack = s.stacks[seat]
        to_call = min(stack, high - s.bets[seat])
        if not self._cap_lifted():
            cap = self.structure.raise_cap
            assert cap is not None
            if s.wagers >= cap + 1:
                return f"the raise cap is reached ({cap} raises)"
        if to_call < s.increment:
            return "a short all-in cannot be raised"
        if s.short_all_ins and sum(s.short_all_ins) < s.increment and seat in s.acted:
            return "a short all-in did not reopen the betting for a player who already acted"
        if stack <= high - s.bets[seat]:
            return "the player can only call: the stack does not cover more"
        others = (
            x
            for x in self.seats
            if x != seat and x not in s.folded and s.stacks[x] + s.bets[x] > high
        )
        if next(others, None) is None:
            return "everyone else is all-in or out: there is nobody to raise"
        return None

    def _wager_totals(self, seat: int) -> tuple[int, ...]:
        """The totals a completion, bet or raise by ``seat`` may reach now."""
        s = self._s
        high = max(s.bets.values())
        cap = s.bets[seat] + s.stacks[seat]
        small, big = self.structure.small_bet, self.structure.big_bet
        if s.completion_pending:
            totals: tuple[int, ...] = (small,)
        elif s.open_pair and high == 0:
            totals = (small, big)
        elif s.open_pair and high < big:
            totals = (max(high + small, big),)
        else:
            totals = (high + s.step,)
        return tuple(sorted({min(t, cap) for t in totals}))

    def _wager_kind(self) -> ActionKind:
        s = self._s
        if s.completion_pending:
            return ActionKind.COMPLETE
        if max(s.bets.values()) == 0:
            return ActionKind.BET
        return ActionKind.RAISE

    def _plan(self, seat: int, action: BetAction, amount: int | None) -> _Plan:
        """Verify ``action`` by ``seat``; the one place every rule is checked."""
        action = _intake(action)
        self._check_seat(seat)
        self._check_open()
        s = self._s
        due = self.to_act
        if seat != due:
            raise OutOfTurnError(f"seat {seat} acted out of turn: seat {due} is to act")
        if action is BetAction.ALLIN:
            plan = self._all_in_plan(seat)
            if plan is None:
                reason = self._wager_block(seat) or "the stack is more than one fixed-limit wager"
                raise IllegalBetError(f"seat {seat} cannot go all-in: {reason}")
            return self._check_amount(plan, amount)
        bet = s.bets[seat]
        high = max(s.bets.values())
        stack = s.stacks[seat]
        if action is BetAction.FOLD:
            if s.bring_in_due and not s.bring_in_optional:
                raise IllegalActionError("the bring-in is forced: bring it in or complete")
            return self._check_amount(_Plan(seat, ActionKind.FOLD, bet, action), amount)
        if action is BetAction.CHECK:
            if s.bring_in_due:
                raise IllegalActionError("no check on the bring-in: bring it in or complete")
            if high > bet:
                raise IllegalActionError(f"seat {seat} faces a bet of {high}: call, raise or fold")
            return self._check_amount(_Plan(seat, ActionKind.CHECK, bet, action), amount)
        if action is BetAction.CALL:
            if s.bring_in_due:
                raise IllegalActionError("nothing to call: bring it in or complete")
            if high <= bet:
                raise IllegalActionError("nothing to call: check or bet")
            total = bet + min(stack, high - bet)
            return self._check_amount(_Plan(seat, ActionKind.CALL, total, action), amount)
        if action is BetAction.BRING_IN:
            if not s.bring_in_due:
                raise IllegalActionError("no bring-in is due")
            total = min(stack, self.structure.bring_in)
            return self._check_amount(_Plan(seat, ActionKind.BRING_IN, total, action), amount)
        kind = self._wager_kind()
        name = kind.value
        # Facing (or opening) the bring-in, any wager is the completion (rule 3);
        # otherwise bet and raise must match the situation.
        if kind is not ActionKind.COMPLETE and action is not kind:
            if action is BetAction.COMPLETE:
                raise IllegalActionError("there is no bring-in to complete")
            raise IllegalActionError(
                f"seat {seat} cannot {action}: "
                + ("there is a bet to raise" if kind is ActionKind.RAISE
                   else "there is no bet to raise")
            )
        block = self._wager_block(seat)
        if block is not None:
            raise IllegalBetError(block)
        totals = self._wager_totals(seat)
        if amount is None:
            total = totals[0]
        elif amount in totals:
            total = amount
        else:
            allowed = " or ".join(str(t) for t in totals)
            if amount > bet + stack and max(totals) == bet + stack:
                # The stack caps the fixed wager (docs/betting.md "All-in"): say so, and
                # what the player can do, instead of a bare size error (issue 10 review).
                raise IllegalBetError(
                    f"{name} to {amount} is more than seat {seat}'s stack: {stack} chips"
                    f" behind, so the {name} is all-in to {bet + stack}; enter"
                    f" `{name} {bet + stack}` or `allin`"
                )
            raise IllegalBetError(
                f"{name} to {amount} is not allowed: seat {seat} may {name} to {allowed}"
            )
        return _Plan(seat, kind, total, action)

    def _check_amount(self, plan: _Plan, amount: int | None) -> _Plan:
        if amount is not None and amount != plan.total:
            raise IllegalBetError(
                f"{plan.kind.value} by seat {plan.seat} makes {plan.total}, not {amount}"
            )
        return plan

    def _all_in_plan(self, seat: int) -> _Plan | None:
        """What putting the whole stack in is for ``seat``, if it is a legal action."""
        s = self._s
        stack = s.stacks[seat]
        if not stack or self.to_act != seat:
            return None
        bet = s.bets[seat]
        everything = bet + stack
        high = max(s.bets.values())
        if s.bring_in_due and everything <= self.structure.bring_in:
            return _Plan(seat, ActionKind.BRING_IN, everything, BetAction.ALLIN)
        if not s.bring_in_due and everything <= high:
            return _Plan(seat, ActionKind.CALL, everything, BetAction.ALLIN)
        if self._wager_block(seat) is None and everything <= self._wager_totals(seat)[-1]:
            return _Plan(seat, self._wager_kind(), everything, BetAction.ALLIN)
        return None

    def _apply(self, plan: _Plan) -> ActionTaken:
        s = self._s
        before = s.copy()
        seat, kind, total = plan.seat, plan.kind, plan.total
        street = s.street
        assert street is not None
        high = max(s.bets.values())
        added = total - s.bets[seat]
        s.stacks[seat] -= added
        s.bets[seat] = total
        s.to_act.pop(0)
        s.acted.add(seat)
        s.actions_in_round += 1
        if kind is ActionKind.FOLD:
            s.folded.add(seat)
        elif kind is ActionKind.BRING_IN:
            s.bring_in_due = False
        elif kind in WAGERS:
            self._apply_wager(seat, total - high)
            s.aggressors[street] = seat
        operation = ActionTaken(
            seat,
            street,
            kind,
            added,
            total,
            s.stacks[seat] == 0 and kind is not ActionKind.FOLD,
            plan.entered,
        )
        self.log.append(operation)
        self._after_action()
        self._undo = (before, operation) if not s.finished else None
        return operation

    def _apply_wager(self, seat: int, increment: int) -> None:
        """Bookkeeping of a completion, bet or raise adding ``increment`` over the high bet."""
        s = self._s
        s.bring_in_due = False
        s.completion_pending = False
        s.to_act = [x for x in self._order_from(seat)[1:] if x not in s.folded and s.stacks[x]]
        # A full wager (at least the largest increment so far) reopens the betting:
        # everybody may raise again. A short all-in does not (the full-bet rule).
        if increment >= s.increment:
            s.acted = {seat}
        s.increment = max(s.increment, increment)
        s.wagers += 1
        if s.stacks[seat]:
            s.short_all_ins.clear()
        else:
            s.short_all_ins.append(increment)
        if sum(s.short_all_ins) >= s.increment:
            s.short_all_ins.clear()
        if s.open_pair and s.bets[seat] >= self.structure.big_bet:
            s.step = self.structure.big_bet

    def _after_action(self) -> None:
        """End the round or the hand when the last action did."""
        s = self._s
        live = self.live_seats
        if len(live) <= 1:
            if s.round_open:
                self._end_round()
            self._pay_last_standing(live)
        elif s.round_open and not s.to_act:
            self._end_round()

    def _end_round(self) -> None:
        s = self._s
        self._return_uncalled(s.bets, s.street)
        for seat in self.seats:
            s.committed[seat] += s.bets[seat]
            s.bets[seat] = 0
        s.round_open = False
        s.to_act = []

    def _pay_last_standing(self, live: tuple[int, ...]) -> None:
        # The hand ends the moment one seat is left, so there is always one here.
        assert len(live) == 1
        total = sum(self._s.committed.values())
        winner = live[0]
        self._pay((PotShare(0, total, (winner,), ((winner, total),)),), showdown=False)

    def _pay(self, shares: Sequence[PotShare], *, showdown: bool) -> tuple[PotAwarded, ...]:
        s = self._s
        records: list[PotAwarded] = []
        for share in shares:
            for seat, chips in share.shares:
                s.stacks[seat] += chips
                s.winnings[seat] = s.winnings.get(seat, 0) + chips
            record = PotAwarded(share.pot, share.amount, share.winners, share.shares, showdown)
            records.append(record)
            self.log.append(record)
        for seat in self.seats:
            s.committed[seat] = 0
        s.finished = True
        s.round_open = False
        s.to_act = []
        self._undo = None
        return tuple(records)
