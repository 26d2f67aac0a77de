"""``simulate()``: deal planned hands, collect the alerts, build the detection report.

Two modes deal the very same hands (:mod:`.plan`):

* ``fast``: the events go straight into one :class:`DealingEngine` with the
  daemon's card-only settings (``auto_hands``: hands found from the cards, ended
  by clearing the table), as fast as the engine goes;
* ``daemon``: the events become tags on emulated readers on ptys, read by the
  real daemon, whose alerts are read back from MQTT (:mod:`.live`).

With ``betting`` (fast mode only) the players bet through the console
(:mod:`.players`): the console's inputs go into the engine interleaved with
the card events, on a console table (:data:`~.plan.BETTING_SETTINGS`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Final, Literal

from firmware_bridge.rf_channel import RFParams, leaves_cards_unread
from table_controller.domain.cards import Card
from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.due import due_zones, face_up_holes, returning_cards
from table_controller.domain.engine.outputs import EngineOutput, GameEvent, GameEventKind
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Game
from table_controller.domain.events import TableEvent
from table_controller.domain.zones import Zone
from table_controller.simulation.kinds import FLICKER_SETTINGS, KINDS, READER_FLICKER, Level
from table_controller.simulation.live import run_daemon
from table_controller.simulation.plan import (
    RateError,
    SimHand,
    betting_settings,
    check_rates,
    plan_hands,
)
from table_controller.simulation.report import (
    DetectionReport,
    HandRF,
    ObservedAlert,
    SimulationInterrupted,
)
from table_controller.simulation.rf import RFTable, masked
from table_controller.simulation.session import BLUE_DECK_FILE, DECK_FILE, LAYOUT_FILE
from table_controller.table.deck import load_decks
from table_controller.table.layout import load_layout

Mode = Literal["fast", "daemon"]

Progress = Callable[[int], None]
"""Called with the number of hands done so far."""

FAST_SETTINGS: Final = TableSettings(auto_hands=True)
"""The daemon's engine settings for the demo stakes: card-only, hands from the cards."""


def simulate(
    hands: int,
    seed: int,
    rates: Mapping[str, float],
    mode: Mode = "fast",
    *,
    speed: float = 1.0,
    progress: Progress | None = None,
    betting: bool = False,
    game: Game = Game.STUD,
    rf: RFParams | None = None,
    rf_name: str | None = None,
) -> DetectionReport:
    """Deal ``hands`` hands from ``seed`` with errors drawn at ``rates`` (kind -> chance
    per hand, summing to at most 1) and return the detection report.

    ``speed`` (daemon mode) makes the virtual dealer N times faster than a real
    one. ``betting``: the players bet through the console (fast mode only).
    ``game``: stud, razz or stud8 (docs/rules.md "Variants"; fast mode only: the
    daemon's game is its config's ``[table] game``). ``rf``: deal through the RF
    channel with these parameters (profile ``rf_name``): fast mode reads the table
    with the daemon's own presence tracking (:mod:`.rf`), daemon mode puts the
    channel in the emulated readers.
    Raises :class:`RateError` for unusable rates (reader kinds in fast mode,
    console kinds without betting among them) and, in daemon mode, ``LiveError``
    when the table cannot run.
    """
    if hands < 1:
        raise ValueError("simulate at least one hand")
    check_rates(rates, betting=betting)
    if betting and mode != "fast":
        raise RateError("--betting runs in --mode fast only (the daemon's console is not driven)")
    if game is not Game.STUD and mode != "fast":
        raise RateError("--game runs in --mode fast only (the daemon plays its config's game)")
    if mode == "fast":
        # With a channel, reader_flicker acts on it; wire noise needs real wires.
        readers = [k for k in rates if KINDS[k].level is Level.READER and rates[k] > 0
                   and not (rf is not None and k == READER_FLICKER)]
        if readers:
            raise RateError(f"{', '.join(readers)} needs --mode daemon (it acts on the readers)"
                            + ("" if rf is not None or readers != [READER_FLICKER]
                               else " or an RF channel (--rf)"))
    report = DetectionReport(mode=mode, seed=seed, rates=dict(rates), betting=betting,
                             game=game.value)
    if rf is not None:
        report.set_rf(rf_name or "custom", rf)
    started = time.perf_counter()
    facts: dict[int, HandRF] = {}
    try:
        if mode == "fast":
            planned, alerts = run_fast(hands, seed, rates, progress, betting=betting,
                                       game=game, rf=rf, facts=facts)
        else:
            planned, alerts, wire = run_daemon(hands, seed, rates, speed=speed,
                                               progress=progress, rf=rf, facts=facts)
            report.wire = wire
    except SimulationInterrupted as stop:
        # Ctrl-C: the report of the hands fully dealt (issue 24), flagged as partial.
        planned, alerts, report.wire = stop.planned, stop.alerts, stop.wire
        report.interrupted_of = hands
    report.seconds = time.perf_counter() - started
    report.judge(planned, alerts, facts)
    return report


def run_fast(
    hands: int,
    seed: int,
    rates: Mapping[str, float],
    progress: Progress | None = None,
    *,
    betting: bool = False,
    game: Game = Game.STUD,
    rf: RFParams | None = None,
    facts: dict[int, HandRF] | None = None,
) -> tuple[list[SimHand], list[ObservedAlert]]:
    """Deal every hand into one engine; return the hands and every alert and notice
    raised (notices flagged ``notice``). With ``rf`` the hands go through the RF
    channel and presence tracking first (:mod:`.rf`) and ``facts`` gets what the
    channel did to each hand."""
    settings = betting_settings(game) if betting else FAST_SETTINGS
    if settings.game is not game:
        settings = settings.model_copy(update={"game": game})
    if rf is not None and leaves_cards_unread(rf) and not betting:
        # Readers that miss stacked cards or dead tags: the engine infers the cards
        # never read (docs/engine.md, "Reads that fail"), as a daemon configured with
        # [table] unread_stacks does.
        settings = settings.model_copy(update={"unread_stacks": True})
    engine = DealingEngine(settings)
    planned: list[SimHand] = []
    alerts: list[ObservedAlert] = []
    table = rf_table(rf, seed) if rf is not None else None
    seats = range(1, (table.layout.seats if table is not None else settings.seats) + 1)
    burn_before_third = settings.rules.burn_before_third
    # Engine hand -> the planned hand being dealt when it began. The same numbers while
    # the engine finds one hand per planned hand; when reads split a hand in two (the
    # seats looked clear mid-hand), its alerts stay with the planned hand instead of
    # shifting every later hand's alerts by one.
    started_in: dict[int, int] = {}
    try:
        for hand in plan_hands(hands, seed, rates, betting=betting, game=game):
            raised: list[ObservedAlert] = []
            number = hand.number

            def apply(inputs: Iterable[TableEvent], raised: list[ObservedAlert] = raised,
                      number: int = number,
                      ) -> tuple[tuple[Zone, ...], dict[Card, Zone], dict[Card, Zone]]:
                """Feed ``inputs`` to the engine; where the dealer is due next, the
                cards away from a live seat and the hole cards the deal says lie face
                up (presence's deal order)."""
                for event in inputs:
                    before = engine.hand
                    _observe(before, engine, engine.apply(event), raised)
                    current = engine.hand
                    if current is not None and current.number not in started_in:
                        started_in[current.number] = number
                hand_now = engine.hand
                return (due_zones(hand_now, seats, burn_before_third=burn_before_third),
                        returning_cards(hand_now), face_up_holes(hand_now))

            if table is None:
                apply((*hand.events, *hand.clear))
            else:
                # Presence gets the engine's deal order as the daemon gives it: the
                # engine fed as presence decides (docs/presence.md rule 1).
                _inputs, found = table.deal(hand, _hand_params(table.params, hand),
                                            apply=apply)
            # Only what the report needs is kept: 100,000 hands' events would not fit.
            # Kept once the hand is dealt whole: a Ctrl-C drops the hand half dealt.
            planned.append(_summary(hand))
            alerts += _renumbered(raised, started_in)
            if table is not None and facts is not None:
                unread = {source: why for source, _zone, why in found.unread}
                hidden = masked(hand, unread, found.untold,
                                rounds_unread=leaves_cards_unread(table.params))
                why = Counter(reason for _i, _z, reason in found.unread)
                facts[hand.number] = HandRF(found.dead, hidden, found.peeks,
                                            found.cross_reads, tuple(sorted(why.items())))
            if progress is not None:
                progress(hand.number)
        last: list[ObservedAlert] = []
        _observe(engine.hand, engine, engine.finish_hand(), last)
        alerts += _renumbered(last, started_in)
    except KeyboardInterrupt:
        raise SimulationInterrupted(planned, alerts) from None
    return planned, alerts


def rf_table(params: RFParams, seed: int) -> RFTable:
    """The 8-seat layout with the example decks (red and blue) read through ``params``."""
    layout = load_layout(LAYOUT_FILE)
    registry = load_decks([DECK_FILE, BLUE_DECK_FILE])
    return RFTable(params, layout, registry, seed=seed)


def _renumbered(alerts: list[ObservedAlert], started_in: Mapping[int, int]
                ) -> list[ObservedAlert]:
    """``alerts`` with each engine hand number replaced by the planned hand it began in."""
    return [alert if alert.hand is None or alert.hand not in started_in
            else replace(alert, hand=started_in[alert.hand]) for alert in alerts]


def _hand_params(params: RFParams, hand: SimHand) -> RFParams:
    """A reader_flicker hand's channel flickers as that kind says (one scan in five)."""
    if hand.kind == READER_FLICKER:
        return replace(params, flicker=max(params.flicker, FLICKER_SETTINGS.dropout_probability))
    return params


def _observe(
    before: HandState | None,
    engine: DealingEngine,
    outputs: list[EngineOutput],
    into: list[ObservedAlert],
) -> None:
    """Record the alerts and notices among ``outputs`` with their hand's number:
    ``before`` (the hand before the input) until a ``hand_started`` event, as the
    daemon numbers them (a new hand first closes the one in progress)."""
    hand = before if before is not None else engine.hand
    for output in outputs:
        if isinstance(output, GameEvent) and output.kind is GameEventKind.HAND_STARTED:
            hand = engine.hand
        if isinstance(output, Alert | Notice):
            number = hand.number if hand is not None else None
            into.append(ObservedAlert(number, output.code.value, output.seat,
                                      notice=isinstance(output, Notice)))


def _summary(hand: SimHand) -> SimHand:
    """``hand`` without its events (the report only needs the expectation)."""
    return SimHand(hand.number, hand.seats, hand.kind, hand.expected_code,
                   hand.expected_seat, (), (), hand.not_injectable, hand.evidence,
                   hand.witnesses)
