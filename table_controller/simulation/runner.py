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
from collections.abc import Callable, Mapping
from typing import Final, Literal

from table_controller.domain.engine.alerts import Alert, Notice
from table_controller.domain.engine.dealing import DealingEngine, HandState
from table_controller.domain.engine.outputs import EngineOutput, GameEvent, GameEventKind
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import Game
from table_controller.simulation.kinds import KINDS, Level
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
    ObservedAlert,
    SimulationInterrupted,
)

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
) -> DetectionReport:
    """Deal ``hands`` hands from ``seed`` with errors drawn at ``rates`` (kind -> chance
    per hand, summing to at most 1) and return the detection report.

    ``speed`` (daemon mode) makes the virtual dealer N times faster than a real
    one. ``betting``: the players bet through the console (fast mode only).
    ``game``: stud, razz or stud8 (RULES.md "Variants"; fast mode only: the
    daemon's game is its config's ``[table] game``).
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
        readers = [k for k in rates if KINDS[k].level is Level.READER and rates[k] > 0]
        if readers:
            raise RateError(f"{', '.join(readers)} needs --mode daemon (it acts on the readers)")
    report = DetectionReport(mode=mode, seed=seed, rates=dict(rates), betting=betting,
                             game=game.value)
    started = time.perf_counter()
    try:
        if mode == "fast":
            planned, alerts = run_fast(hands, seed, rates, progress, betting=betting,
                                       game=game)
        else:
            planned, alerts, wire = run_daemon(hands, seed, rates, speed=speed,
                                               progress=progress)
            report.wire = wire
    except SimulationInterrupted as stop:
        # Ctrl-C: the report of the hands fully dealt (issue 24), flagged as partial.
        planned, alerts, report.wire = stop.planned, stop.alerts, stop.wire
        report.interrupted_of = hands
    report.seconds = time.perf_counter() - started
    report.judge(planned, alerts)
    return report


def run_fast(
    hands: int,
    seed: int,
    rates: Mapping[str, float],
    progress: Progress | None = None,
    *,
    betting: bool = False,
    game: Game = Game.STUD,
) -> tuple[list[SimHand], list[ObservedAlert]]:
    """Deal every hand into one engine; return the hands and every alert and notice
    raised (notices flagged ``notice``)."""
    settings = betting_settings(game) if betting else FAST_SETTINGS
    if settings.game is not game:
        settings = settings.model_copy(update={"game": game})
    engine = DealingEngine(settings)
    planned: list[SimHand] = []
    alerts: list[ObservedAlert] = []
    try:
        for hand in plan_hands(hands, seed, rates, betting=betting, game=game):
            raised: list[ObservedAlert] = []
            for event in (*hand.events, *hand.clear):
                before = engine.hand
                _observe(before, engine, engine.apply(event), raised)
            # Only what the report needs is kept: 100,000 hands' events would not fit.
            # Kept once the hand is dealt whole: a Ctrl-C drops the hand half dealt.
            planned.append(_summary(hand))
            alerts += raised
            if progress is not None:
                progress(hand.number)
        _observe(engine.hand, engine, engine.finish_hand(), alerts)
    except KeyboardInterrupt:
        raise SimulationInterrupted(planned, alerts) from None
    return planned, alerts


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
                   hand.expected_seat, (), (), hand.not_injectable)
