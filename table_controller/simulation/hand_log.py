"""``stud-table simulate --hand-log FILE``: each simulated hand with its equities.

The hands of a run are a function of its seed and rates (:func:`plan_hands`), so
the log replays the same plan through a fresh engine and writes, per hand, the
street-by-street equity and hand reading of every live seat
(:class:`~table_controller.domain.equity.live.StreetLog`) and the hand's result. It
shows every hole card: a production-room file, never a public one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from table_controller.domain.engine.dealing import DealingEngine
from table_controller.domain.equity.live import StreetLog
from table_controller.simulation.plan import BETTING_SETTINGS, plan_hands
from table_controller.simulation.runner import FAST_SETTINGS

__all__ = ["write_hand_log"]


def write_hand_log(out: TextIO, hands: int, seed: int, rates: Mapping[str, float], *,
                   betting: bool = False) -> int:
    """Write the log of hands 1..``hands`` of the run ``seed``/``rates`` to ``out``;
    return the number of hands written."""
    settings = BETTING_SETTINGS if betting else FAST_SETTINGS
    engine = DealingEngine(settings)
    log = StreetLog()
    written = 0
    for hand in plan_hands(hands, seed, rates, betting=betting):
        injected = hand.kind if hand.kind is not None else "none"
        out.write(f"hand {hand.number}: seats {' '.join(map(str, hand.seats))},"
                  f" error injected: {injected}\n")
        for event in (*hand.events, *hand.clear):
            engine.apply(event)
            for line in log.observe(engine.hand, settings):
                out.write(line + "\n")
        state = engine.hand
        if state is not None and state.result is not None:
            out.write(f"  result: {state.result}\n")
        written += 1
    return written
