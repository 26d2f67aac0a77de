"""Recorded hands (a table script or a daemon journal) -> :class:`StudHand` records.

Theory of operation
-------------------
The events run through the dealing engine, the same one ``stud-table replay``
uses, so the export says what the engine reconstructed, not what the raw
events seemed to say. A :class:`_Recorder` watches each hand: every seat's
cards in the order received (for a seat that folds: what it held when it
folded), the street of every console ``act`` line, and the street on which each
seat stopped being active (a fold seen from cards reaching the muck, or a dead
hand). PHH deals follow the variant's faces (down, down, up, up x3, down):
a physical mistake such as an exposed hole card cannot be expressed in PHH.

Betting, two cases:

* The hand has ``act`` lines (a console): they are the betting, in their
  recorded order, each on the street that was being dealt when it came.
  ``bring_in`` -> ``pb``; ``complete``/``bet``/``raise`` -> ``cbr`` with the
  line's ``amount`` or else the fixed-limit size; ``call``/``check`` -> ``cc``;
  ``fold`` -> ``f``; ``allin`` -> ``cc`` or ``cbr`` of the whole stack.
* No ``act`` line at all (a card-only table): the betting is unknown, yet
  PokerKit needs a legal action for every turn to replay the dealing. The
  export then writes the most passive line consistent with the cards: the
  bring-in seat posts ``pb``, everybody else calls it, later streets are
  checked round, and each fold the engine saw is an ``f`` at that seat's turn
  on that street (PokerKit accepts a fold facing no bet with a warning). A
  bring-in seat that folds on 3rd street folds at its next turn instead. The
  file says so (``_betting = "unknown"``) and has no ``finishing_stacks``.

Stacks come from the ``hand`` line (chips behind after the ante, plus the
ante). Without them a placeholder far above any fixed-limit hand's wagers is
written and flagged (``_stacks = "unknown"``). Showdown: every seat still in
after the 7th-street betting shows its seven cards (``sm``).

A recording that stops in the middle of a hand (a journal copied while the
table plays, a daemon stopped mid-hand) ends that hand's actions where the
recording did; the hand is flagged ``_unfinished = true`` and ``phh export``
says so on stderr, so a cut-short hand is never passed off as a whole one.

Rule 15's community card has no place in PokerKit's Seven Card Stud (it deals
no board card in stud): such a hand's actions end after 6th street and the
card is written as ``_community_card``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from table_controller.domain.cards import Card
from table_controller.domain.engine.dealing import DealingEngine, HandState, SeatStatus
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.events import ConsoleAction, HandStarted, TableEvent
from table_controller.domain.zones import MUCK
from table_controller.handhistory.model import STREETS, Bet, Deal, HandItem, StudHand
from table_controller.records.replay import load_script
from table_controller.records.script import Script

PLACEHOLDER_BIG_BETS = 1000
"""Unknown stacks are written as this many big bets: no fixed-limit hand can
wager that much (five rounds of at most a bet and a few raises each)."""


@dataclass(slots=True)
class _Recorder:
    """What one hand's events showed (see the module docstring)."""

    state: HandState
    started: HandStarted | None
    cards: dict[int, tuple[Card, ...]] = field(default_factory=dict)
    status: dict[int, SeatStatus] = field(default_factory=dict)
    out: list[tuple[int, int]] = field(default_factory=list)
    """(seat, street) of each seat that stopped being active, in order."""
    acts: list[tuple[int, ConsoleAction]] = field(default_factory=list)

    def observe(self, event: TableEvent) -> None:
        hand = self.state
        street = hand.street or 3
        if isinstance(event, ConsoleAction):
            self.acts.append((street, event))
        for seat_no, seat in hand.seats.items():
            before = self.status.get(seat_no, SeatStatus.ACTIVE)
            if seat.status is SeatStatus.ACTIVE:
                current = tuple(seat.all_cards)
                lost = (c for c in self.cards.get(seat_no, ()) if c not in current)
                # A card this seat pushed into the muck never changes what it was
                # dealt (a fold, or the winner of a hand won by folds mucking its
                # cards), even once the muck is scooped off the table; a card moved
                # elsewhere does (rule 13: a misdealt card corrected to its proper
                # place).
                if not any(hand.mucked_by.get(card) == seat_no
                           or MUCK in hand.where.get(card, ()) for card in lost):
                    self.cards[seat_no] = current
            elif before is SeatStatus.ACTIVE:
                self.out.append((seat_no, street))
            self.status[seat_no] = seat.status


def export_events(
    events: Iterable[TableEvent], settings: TableSettings | None = None
) -> list[StudHand]:
    """Every hand in ``events`` as a :class:`StudHand` (hands without cards are skipped)."""
    settings = settings or TableSettings()
    engine = DealingEngine(settings)
    recorders: list[_Recorder] = []
    for event in events:
        engine.apply(event)
        hand = engine.hand
        if hand is None:
            continue
        if not recorders or recorders[-1].state is not hand:
            started = event if isinstance(event, HandStarted) else None
            recorders.append(_Recorder(hand, started))
        recorders[-1].observe(event)
    # Whether the recording ended inside a hand the table never finished: said
    # in the file rather than passed off as a whole hand (finish_hand below only
    # closes the engine's books).
    open_at_end = engine.hand is not None and not engine.hand.finished
    engine.finish_hand()
    hands = [
        _to_hand(rec, settings, open_at_end=open_at_end and index == len(recorders) - 1)
        for index, rec in enumerate(recorders)
    ]
    return [hand for hand in hands if hand is not None]


def export_script(script: Script) -> list[StudHand]:
    """Every hand of a parsed table script or journal."""
    return export_events((event for _, event in script.events), script.settings)


def export_file(path: Path) -> list[StudHand]:
    """Every hand of the table script or journal at ``path`` (``ScriptError`` if malformed)."""
    return export_script(load_script(path))


# ------------------------------------------------------------------ building


def _to_hand(rec: _Recorder, settings: TableSettings, *, open_at_end: bool) -> StudHand | None:
    """The :class:`StudHand` of one recorded hand (None with fewer than two seats
    dealt). ``open_at_end``: the recording stopped while this hand was going on."""
    hand = rec.state
    seats = tuple(s for s in hand.players if rec.cards.get(s))
    if len(seats) < 2:
        return None
    cards = {seat: rec.cards[seat][:7] for seat in seats}
    stacks = rec.started.stacks if rec.started is not None else None
    stacks_known = stacks is not None and all(seat in stacks for seat in seats)
    if stacks is not None and stacks_known:
        starting = tuple(stacks[seat] + settings.ante for seat in seats)
    else:
        starting = (PLACEHOLDER_BIG_BETS * settings.big_bet,) * len(seats)
    items: list[HandItem] = []
    betting = _Betting(settings, dict(zip(seats, starting, strict=True)))
    live = list(seats)
    shown_early = False
    for street in STREETS:
        if street == 7 and hand.community is not None:
            break  # PokerKit's stud deals no board card: the file ends before 7th street
        dealt = _deals(cards, seats, street)
        if not dealt:
            break
        items += dealt
        if len(live) < 2:
            break
        if rec.acts:
            bets = betting.known([a for s, a in rec.acts if s == street], street)
        else:
            bets = _passive(hand, rec, street, live, settings)
        items += bets
        for bet in bets:
            if bet.verb == "f" and bet.seat in live:
                live.remove(bet.seat)
        if (rec.acts and street < 7 and not shown_early and len(live) >= 2
                and sum(1 for s in live if betting.stacks.get(s, 0) > 0) <= 1):
            # Everybody but one is all-in before 7th street: PHH (PokerKit) shows
            # the hands now, before the rest is dealt (razz-hand-85), and again
            # with every card at the end.
            shown_early = True
            items += [Bet(seat, street, "sm", None, cards[seat][:_dealt_by(street)])
                      for seat in _aggressor_first(live, bets, hand, street)]
    if len(live) >= 2 and all(len(cards[s]) == 7 for s in live):
        items += [Bet(seat, 7, "sm", None, cards[seat]) for seat in _rotate(live, hand, 7)]
    # Cut short: two or more seats still in and cards still to come (a rule-15
    # community hand's file ends after 6th street anyway). A hand dealt to its
    # end but not yet cleared is whole: the file shows its showdown.
    last_card = 6 if hand.community is not None else 7
    unfinished = open_at_end and len(live) >= 2 and any(
        len(cards[s]) < last_card for s in live
    )
    return StudHand(
        seats=seats,
        antes=(settings.ante,) * len(seats),
        bring_in=settings.bring_in,
        small_bet=settings.small_bet,
        big_bet=settings.big_bet,
        starting_stacks=starting,
        items=tuple(items),
        seat_count=settings.seats,
        hand=hand.number,
        betting_known=bool(rec.acts),
        stacks_known=stacks_known,
        community=hand.community,
        unfinished=unfinished,
        game=settings.game,
    )


def _deals(cards: dict[int, tuple[Card, ...]], seats: Sequence[int], street: int) -> list[Deal]:
    span = slice(0, 3) if street == 3 else slice(street - 1, street)
    out = []
    for seat in seats:
        got = cards[seat][span]
        if got:
            out.append(Deal(seat, street, got))
    return out


def _dealt_by(street: int) -> int:
    """How many cards a seat holds once ``street`` is dealt."""
    return 3 if street == 3 else street


def _aggressor_first(
    live: Sequence[int], bets: Sequence[Bet], hand: HandState, street: int
) -> list[int]:
    """``live`` in showdown order: the street's last bettor or raiser first, then
    clockwise; with no wager, from the street's opener."""
    last = next((bet.seat for bet in reversed(bets) if bet.verb == "cbr"), None)
    if last is None or last not in live:
        return _rotate(live, hand, street)
    at = list(live).index(last)
    return [*live[at:], *live[:at]]


def _rotate(live: Sequence[int], hand: HandState, street: int) -> list[int]:
    """``live`` in acting order from the street's opener (position order if unknown)."""
    opener = hand.bring_in if street == 3 else hand.first_to_act.get(street)
    if opener not in live:
        return list(live)
    at = live.index(opener)
    return [*live[at:], *live[:at]]


def _passive(
    hand: HandState, rec: _Recorder, street: int, live: list[int], settings: TableSettings
) -> list[Bet]:
    """A card-only street's betting: the most passive line the cards allow."""
    folders = {seat for seat, s in rec.out if s == street}
    bets: list[Bet] = []
    still = list(live)
    opener_folds = street == 3 and hand.bring_in in folders
    completed = False
    for seat in _rotate(live, hand, street):
        if len(still) < 2:
            break
        if street == 3 and seat == hand.bring_in:
            bets.append(Bet(seat, street, "pb"))
        elif seat in folders:
            bets.append(Bet(seat, street, "f"))
            still.remove(seat)
        elif opener_folds and not completed:
            # The bring-in only folds facing a completion: the first seat that
            # stays in is written as completing, the least betting that explains it.
            bets.append(Bet(seat, street, "cbr", settings.small_bet))
            completed = True
        else:
            bets.append(Bet(seat, street, "cc"))
    if opener_folds and completed and hand.bring_in is not None and len(still) >= 2:
        bets.append(Bet(hand.bring_in, street, "f"))
    return bets


@dataclass(slots=True)
class _Betting:
    """Turns console actions into PHH bets, tracking each round's wagers."""

    settings: TableSettings
    stacks: dict[int, int]
    """Chips each seat has left (after the ante as play goes on)."""

    folded: set[int] = field(default_factory=set)
    """Seats that folded: they match nothing more."""

    def __post_init__(self) -> None:
        self.stacks = {s: max(c - self.settings.ante, 0) for s, c in self.stacks.items()}

    def known(self, acts: Sequence[ConsoleAction], street: int) -> list[Bet]:
        small, big = self.settings.small_bet, self.settings.big_bet
        put: dict[int, int] = {}
        highest = 0
        out: list[Bet] = []
        for act in acts:
            seat, action = act.seat, act.action
            mine = put.get(seat, 0)
            total: int
            if action == "bring_in":
                total = act.amount or self.settings.bring_in
                out.append(Bet(seat, street, "pb"))
            elif action in ("complete", "bet", "raise"):
                if act.amount is not None:
                    total = act.amount
                elif action == "complete":
                    total = small
                elif action == "bet":
                    total = small if street <= 4 else big
                else:
                    step = big if street >= 5 or (street == 4 and highest >= big) else small
                    total = highest + step
                # PHH (PokerKit) caps a wager at what the others can still match;
                # the chips beyond it would only come back uncalled.
                reach = max((put.get(x, 0) + chips for x, chips in self.stacks.items()
                             if x != seat and x not in self.folded), default=total)
                total = max(min(total, reach), highest + 1) if reach > highest else total
                out.append(Bet(seat, street, "cbr", total))
            elif action in ("call", "check"):
                total = highest
                out.append(Bet(seat, street, "cc"))
            elif action == "allin":
                total = mine + self.stacks.get(seat, 0)
                if total <= highest:
                    out.append(Bet(seat, street, "cc"))
                else:
                    out.append(Bet(seat, street, "cbr", total))
            else:  # fold
                out.append(Bet(seat, street, "f"))
                self.folded.add(seat)
                continue
            paid = min(max(total - mine, 0), self.stacks.get(seat, 0))
            self.stacks[seat] = self.stacks.get(seat, 0) - paid
            put[seat] = mine + paid
            highest = max(highest, put[seat])
        return out
