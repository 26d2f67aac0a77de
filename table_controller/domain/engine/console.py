"""The dealer's console inside the engine: betting joined to the dealing tracker.

Theory of operation
-------------------
A hand has a console as soon as one console input reaches it (an ``act`` line
of a script, a command from the daemon's MQTT console). From then on a
:class:`BettingHand` keeps antes, bets, stacks and pots, and the rules that need
both cards and chips are enforced here (RULES.md numbers):

* streets: when the dealing tracker completes a street's deal it opens the
  betting round with the bring-in seat (3rd street; the next seat left when the
  low card is an exposed hole card, rule 5, or all-in for the ante, rule 8) or
  the high hand (4th-7th; the open-pair option of rule 4 on 4th street);
* rule 9: a bring-in by the wrong seat is flagged ``wrong_bring_in``; if the true
  low card acts next the bring-in is taken back and theirs counts, otherwise the
  bet stands and the true low card has no obligation;
* rule 7: a hand folded with no bet to call keeps receiving cards until a bet
  kills it; a card to a seat that folded facing a bet is ``card_to_inactive_seat``;
* rule 10: up cards picked up while facing a bet are a fold (a notice:
  nobody must act); a console ``fold`` keyed after the cards left is accepted
  as a confirmation and changes nothing;
* rule 14: a card dealt before the betting round is complete is a
  ``premature_deal``; taken off the table, it is out of play (not a fold);
* rule 6 and the floor: ``kill`` rulings; rule 18: a short hand ruled ``live``;
* rule 19: a call into a hand already beaten on board is a notice (a legal
  call; computed from the caller's down cards, so for the production room only);
* showdown: every live hand's value pays the main and side pots, odd chips by
  the high card by suit; ``winners`` are the seats that won chips.

Every console input gets exactly one :class:`ConsoleResult`: accepted, or
rejected with a code and a reason; a rejected input changes nothing, and the
floor gets an alert when it should know (out of turn, illegal bet...).
"""

from __future__ import annotations

from typing import Protocol

from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import AlertCode
from table_controller.domain.engine.betting import (
    ActionKind,
    ActionTaken,
    BettingError,
    BettingHand,
    BettingStructure,
)
from table_controller.domain.engine.hand import HandState, SeatStatus
from table_controller.domain.engine.outputs import ConsoleResult, GameEventKind, ReplyCode
from table_controller.domain.engine.port import PotResult
from table_controller.domain.engine.pots import odd_chip_order, pot_winners
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Showdown, Variant
from table_controller.domain.events import (
    WAGER_ACTIONS,
    BetAction,
    ConsoleAction,
    FloorRuling,
    HandEnded,
)
from table_controller.domain.hands import HandCategory, HandValue, evaluate, showing_value
from table_controller.domain.zones import Zone, ZoneKind

UNKNOWN_STACK = 10**9
"""Chips assumed behind a seat whose stack the console never gave: betting is
checked for order and size; the chip counts are then only relative."""

_ALERTED = {
    ReplyCode.OUT_OF_TURN: AlertCode.OUT_OF_TURN,
    ReplyCode.ILLEGAL_BET: AlertCode.ILLEGAL_BET,
    ReplyCode.ILLEGAL_ACTION: AlertCode.ILLEGAL_ACTION,
}
"""Betting error codes the floor is alerted to (the rest only reject the input)."""

_NO_HAND = HandValue(-1)
"""Below every real hand: what a seat without a hand at showdown shows."""


class HandPort(Protocol):
    """What the console rules may do to the hand: the dealing tracker's public side.

    The console never reaches into the dealing tracker otherwise; the tracker
    implements this (``dealing.HandTracker``) and hands itself to the console.
    """

    @property
    def variant(self) -> Variant:
        """The game dealt (RULES.md "Variants")."""
        ...

    def alert(self, code: AlertCode, seat: int | None, street: int | None,
              message: str) -> None:
        """Raise ``code`` (as a notice if alerts.NOTICE_CODES says nobody must act)."""
        ...

    def emit(self, kind: GameEventKind, *, seat: int | None = None,
             street: int | None = None, text: str | None = None,
             amount: int | None = None) -> None:
        """Emit a game event (a betting action)."""
        ...

    def fold(self, seat: int) -> None:
        """The console folded ``seat`` (the betting knows already)."""
        ...

    def kill(self, seat: int, reason: str) -> None:
        """The floor ruled ``seat``'s hand dead (rule 6)."""
        ...

    def award(self, winners: list[int]) -> None:
        """The betting ended the hand without a showdown: ``winners`` took the pot."""
        ...

    def close(self) -> str:
        """Close the hand (the console's ``end``); what the reply says about it."""
        ...

    def reply(self, result: ConsoleResult) -> None:
        """The one answer to the console input being applied."""
        ...


class TableConsole:
    """Console state of one hand: the :class:`~.port.ConsoleRules` of a hand with
    betting. It talks to the hand only through ``port`` (:class:`HandPort`)."""

    def __init__(self, port: HandPort, hand: HandState, settings: TableSettings) -> None:
        self.port = port
        self.hand = hand
        stacks = dict.fromkeys(hand.players, UNKNOWN_STACK)
        if hand.stacks:
            stacks.update(hand.stacks)
        self.betting = BettingHand(
            stacks, BettingStructure.from_settings(settings), stacks_after_ante=True
        )
        self.folded_without_bet: set[int] = set()
        """Rule 7: folded with nothing to call; still dealt to until a bet kills it."""
        self.premature: set[Card] = set()
        """Rule 14: cards dealt before their betting round was complete."""
        self.premature_streets: set[int] = set()
        self.wrong_bring_in: tuple[int, int] | None = None
        """Rule 9: (wrong seat, true low card) until the next action."""
        self.ruled_live: set[int] = set()
        """Rule 18: short hands the floor ruled live."""
        self.lost_at_showdown: set[int] = set()
        """Seats mucked or killed once the betting was over: they lose every pot."""
        self.awarded = False
        """The pots are paid (at the showdown or when the betting ended the hand)."""
        self.half_winners: tuple[list[int], list[int]] = ([], [])
        """stud8, after the showdown: the seats winning a high half, a low half."""
        # Rounds whose deal completed before the console came in open now.
        for street in hand.completed_streets:
            self.street_dealt(street)

    # ------------------------------------------------------------- streets

    def street_dealt(self, street: int) -> None:
        """The dealing tracker completed ``street``'s deal: open its betting round."""
        betting = self.betting
        if betting.hand_over or betting.betting_closed:
            return
        expected = 3 if betting.street is None else betting.street + 1
        if street != expected or not betting.round_complete:
            return  # opened when the round before it completes (rule 14 premature deal)
        hand = self.hand
        if street == 3:
            opener = hand.bring_in
            optional = hand.bring_in_moved
        else:
            opener = hand.first_to_act.get(street)
            optional = False
        if opener is None or opener not in betting.live_seats:
            return
        # Rule 4 (not in razz: RULES.md "Variants").
        open_pair = street == 4 and self.port.variant.open_pair_rule and any(
            showing_value(hand.seats[s].up).category >= HandCategory.PAIR
            for s in hand.live_seats
            if hand.seats[s].up
        )
        if betting.can_start_street(
            street, opener, open_pair=open_pair, bring_in_optional=optional
        ):
            betting.start_street(street, opener, open_pair=open_pair, bring_in_optional=optional)

    def _open_next_streets(self) -> None:
        """After a round completes, open the next one if its deal already came."""
        for street in list(self.hand.completed_streets):
            self.street_dealt(street)

    # ---------------------------------------------------------------- cards

    def card_dealt(self, seat: int, card: Card, street: int) -> None:
        """Rule 14: a card for a later street while a betting round is open."""
        betting = self.betting
        if (
            betting.round_complete
            or betting.hand_over
            or betting.street is None
            or street <= betting.street
        ):
            return
        self.premature.add(card)
        if street in self.premature_streets:
            return
        self.premature_streets.add(street)
        self.port.alert(
            AlertCode.PREMATURE_DEAL,
            seat,
            street,
            f"A card for {_street(street)} was dealt before the betting on"
            f" {_street(betting.street)} was complete (rule 14): take the early cards out of"
            " play, finish the betting, take out one more card per player, burn and go on.",
        )

    def allowed_extra_burns(self, street: int) -> int:
        """Rule 14: after a premature deal the dealer burns again for that street."""
        return 1 if street in self.premature_streets else 0

    def card_left(self, card: Card, zone: Zone, owner: int) -> bool:
        """A seat's card left its zone. Returns True if it is now out of play
        (a premature card taken off the table, rule 14)."""
        if card in self.premature:
            self.premature.discard(card)
            return True
        if zone.kind is ZoneKind.UP:
            self._rule10(owner)
        return False

    def _rule10(self, seat: int) -> None:
        """Up cards picked up while facing a bet: the hand is folded."""
        betting = self.betting
        if betting.round_complete or betting.hand_over or seat not in betting.live_seats:
            return
        bets = betting.bets
        if bets[seat] >= max(bets.values()):
            return  # not facing a bet: at showdown or with nothing to call it means nothing
        if betting.can_kill(seat):
            betting.kill(seat, "picked up the up cards facing a bet (rule 10)")
        self.port.alert(  # rule 10: that is a fold (a notice), and the engine applied it
            AlertCode.UPCARDS_LIFTED,
            seat,
            betting.street,
            f"Seat {seat} picked up the up cards while facing a bet: that is a fold and the"
            " hand is dead (rule 10).",
        )
        self.port.fold(seat)
        self._after_betting()

    def may_receive_after_fold(self, seat: int) -> bool:
        """Rule 7: whether a folded seat is still to be dealt to."""
        return seat in self.folded_without_bet

    def seat_out(self, seat: int, reason: str) -> None:
        """The dealing tracker killed or folded ``seat`` (muck, rule 5, 18...)."""
        betting = self.betting
        if seat not in betting.live_seats or betting.hand_over:
            return
        if betting.round_complete and (betting.betting_closed or betting.street == 7):
            # Nothing left to bet: a hand mucked (or ruled dead) now just loses at the
            # showdown. Killing it would rebuild the pots without its all-in level
            # and merge main and side pots, changing how the others split them.
            self.lost_at_showdown.add(seat)
            return
        if betting.can_kill(seat):
            betting.kill(seat, reason)
            self._after_betting()

    # -------------------------------------------------------------- actions

    def apply(self, event: ConsoleAction | FloorRuling | HandEnded) -> None:
        """Apply one console input; emits exactly one :class:`ConsoleResult`."""
        if isinstance(event, HandEnded):
            betting = self.betting
            if not betting.hand_over and not betting.round_complete:
                # Ending now would leave the pot unpaid with bets in front of players.
                self._result(
                    False,
                    ReplyCode.ILLEGAL_ACTION,
                    f"the betting on {_street(betting.street or 3)} is not complete",
                )
                return
            self._result(True, message=self.port.close())
            return
        if event.seat not in self.hand.seats:
            self._result(False, ReplyCode.UNKNOWN_SEAT, f"seat {event.seat} is not in this hand")
            return
        if isinstance(event, FloorRuling):
            self._ruling(event)
        else:
            self._action(event)

    def _ruling(self, event: FloorRuling) -> None:
        seat = event.seat
        if event.ruling == "live":
            self.ruled_live.add(seat)
            self._result(True, message=f"seat {seat}'s hand ruled live (rule 18)")
            return
        reason = event.reason or "killed by the floor"
        if self.betting.can_kill(seat):
            self.betting.kill(seat, reason)
        self.port.kill(seat, reason)
        self._after_betting()
        self._result(True, message=f"seat {seat}'s hand is dead: {reason}")

    def _action(self, event: ConsoleAction) -> None:
        betting = self.betting
        seat, action = event.seat, event.action
        if (
            action is BetAction.FOLD
            and seat not in self.hand.live_seats
            and seat not in betting.live_seats
        ):
            # The cards reached the muck (or the up cards were picked up, rule 10)
            # before the operator keyed the fold: the table and the console agree,
            # so it is no error and changes nothing. (A seat that mucked before the
            # hand's first console input is still in the betting: its fold counts.)
            dead = self.hand.seats[seat].status is SeatStatus.DEAD
            self._result(True, message=f"seat {seat}'s hand is dead already" if dead
                         else f"seat {seat} has folded already")
            return
        if betting.hand_over:
            self._reject(ReplyCode.HAND_OVER, "the hand is over", seat)
            return
        if betting.street is None:
            self._reject(ReplyCode.NO_BETTING_ROUND, "3rd street is not dealt yet", seat)
            return
        # Rule 9 may move the opener or take a bring-in back before the action is
        # checked: if the action is then refused, all of it is undone (a refused
        # input changes nothing) and its wrong_bring_in alert is never raised.
        saved, pending = betting.checkpoint(), self.wrong_bring_in
        wrong = self._rule9_before(seat, action)
        before = betting.bets
        facing = max(before.values()) > before.get(seat, 0)
        try:
            taken = betting.act(seat, action, event.amount)
        except BettingError as error:
            betting.restore(saved)
            self.wrong_bring_in = pending
            self._reject(error.code, str(error), seat)
            return
        if wrong is not None:
            self.port.alert(AlertCode.WRONG_BRING_IN, wrong[0], 3, wrong[1])
        self._after_action(taken, facing)
        self._result(True, message=f"seat {seat} {taken.action.value}")

    def _rule9_before(self, seat: int, action: BetAction) -> tuple[int, str] | None:
        """Rule 9 around a bring-in: correct a wrong one in time, or find one; returns
        the wrong_bring_in alert's (seat, message) to raise once the action is taken."""
        betting = self.betting
        pending, self.wrong_bring_in = self.wrong_bring_in, None
        if pending is not None:
            _wrong, true_low = pending
            if seat == true_low and betting.can_retract_bring_in(true_low):
                betting.retract_bring_in(true_low)  # the wrong player takes the bet back
            return None
        first_action = not any(isinstance(op, ActionTaken) for op in betting.log)
        if (
            betting.street == 3
            and first_action
            and action in WAGER_ACTIONS
            and betting.to_act is not None
            and seat != betting.to_act
            and betting.can_set_opener(seat)
        ):
            true_low = betting.to_act
            betting.set_opener(seat)
            self.wrong_bring_in = (seat, true_low)
            return seat, (
                f"Seat {seat} brought it in, but the low card is seat {true_low}: if seat"
                f" {true_low} acts next the bet is taken back and seat {true_low} brings it"
                " in; otherwise the bet stands and the low card has no obligation (rule 9).")
        return None

    def _after_action(self, taken: ActionTaken, facing: bool) -> None:
        seat = taken.seat
        self.port.emit(
            GameEventKind.ACTION,
            seat=seat,
            street=taken.street,
            text=taken.action.value,
            amount=taken.total,
        )
        if taken.action in WAGER_ACTIONS:
            self.folded_without_bet.clear()  # rule 7: a bet kills those hands
        if taken.action is ActionKind.FOLD:
            if not facing:
                self.folded_without_bet.add(seat)
            self.port.fold(seat)
        elif taken.action is ActionKind.CALL:
            self._rule19(seat, taken.street)
        self._after_betting()

    def _after_betting(self) -> None:
        """Open the next round if its deal came; pay the pot if the hand is won."""
        betting = self.betting
        if betting.hand_over and not self.awarded:
            self.awarded = True
            winners = sorted(s for s, chips in betting.winnings.items() if chips > 0)
            self.port.award(winners)
            return
        if betting.round_complete:
            self._open_next_streets()

    def _rule19(self, seat: int, street: int) -> None:
        """A call into a hand an opponent's board already beats (told, not refused)."""
        hand = self.hand
        cards = list(dict.fromkeys(hand.seats[seat].all_cards))
        if len(cards) < 5 or self.port.variant.showdown is not Showdown.HIGH:
            # Razz and stud8: a board cannot "already beat" a low (its next card
            # may pair), and a hand beaten high may still win the low half.
            return
        mine = evaluate(cards[:7])
        for other in hand.live_seats:
            up = list(dict.fromkeys(hand.seats[other].up))
            if other == seat or not up:
                continue
            if showing_value(up).strength > mine.strength:
                self.port.alert(
                    AlertCode.BEATEN_ON_BOARD,
                    seat,
                    street,
                    f"Seat {seat} called, but seat {other}'s board already beats seat {seat}'s"
                    " hand: no claim to the money back (rule 19).",
                )
                return

    # ------------------------------------------------------------- showdown

    def is_ruled_live(self, seat: int) -> bool:
        """Rule 18: the floor ruled ``seat``'s short hand live."""
        return seat in self.ruled_live

    @property
    def pays_pots(self) -> bool:
        """The pots decide who wins, and they are not paid yet."""
        return not self.awarded

    @property
    def folds_from_cards(self) -> bool:
        """The dealer enters folds at the console; rule 10 judges cards picked up."""
        return False

    def open_round(self) -> int | None:
        """The street whose betting round is open (bets to complete), or None."""
        betting = self.betting
        if betting.hand_over or betting.round_complete:
            return None
        return betting.street or 3

    def showdown(
        self, values: dict[int, HandValue], lows: dict[int, int] | None = None
    ) -> PotResult | None:
        """Pay the pots from the showdown ``values`` (None if they are paid already)."""
        if self.awarded:
            return None
        winners = self._pay(values, lows)
        return PotResult(winners, *self.half_winners)

    def _pay(
        self, values: dict[int, HandValue], lows: dict[int, int] | None = None
    ) -> list[int]:
        """Pay the pots from the showdown ``values``; return the seats that won chips.

        ``lows`` (stud8): each seat's eight-or-better low score (0: none); every
        pot is then split high/low, and :attr:`half_winners` says who won which.
        """
        betting = self.betting
        if not self.awarded and not betting.hand_over:
            # A seat with no hand to show (mucked, dead, short) loses every pot it
            # is in, below any real hand; the pots stay as the betting made them.
            live = betting.live_seats
            shown = {s: values.get(s, _NO_HAND) for s in live}
            low_shown = {s: lows.get(s, 0) for s in live} if lows is not None else None
            for seat in self.lost_at_showdown:
                if seat in shown:
                    shown[seat] = _NO_HAND
                    if low_shown is not None:
                        low_shown[seat] = 0
            if live and betting.can_award(shown):
                cards = {s: self.hand.seats[s].all_cards for s in live}
                if low_shown is not None:
                    high: set[int] = set()
                    low: set[int] = set()
                    for pot in betting.pots():
                        pot_high, pot_low = pot_winners(pot, shown, low_shown)
                        high.update(pot_high)
                        if pot.amount // 2:  # a one-chip pot has no low half to win
                            low.update(pot_low)
                    self.half_winners = (sorted(high), sorted(low))
                betting.award(shown, odd_chip_order(cards), low_shown)
        self.awarded = True
        return sorted(s for s, chips in betting.winnings.items() if chips > 0)

    # -------------------------------------------------------------- replies

    def _reject(self, code: ReplyCode, reason: str, seat: int) -> None:
        alert = _ALERTED.get(code)
        if alert is not None:
            self.port.alert(alert, seat, self.betting.street, f"Seat {seat}: {reason}.")
        self._result(False, code, reason)

    def _result(self, accepted: bool, code: ReplyCode | None = None, message: str = ""
                ) -> None:
        self.port.reply(ConsoleResult(accepted, code, message))


def _street(street: int) -> str:
    return {3: "3rd street", 4: "4th street", 5: "5th street", 6: "6th street"}.get(
        street, "7th street"
    )

