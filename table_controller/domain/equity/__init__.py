"""Live equity, outs and hand readings for the three stud games (docs/equity.md).

Pure: no I/O, no clock (only :mod:`.command`, the ``stud-table equity`` door, reads
and prints). :func:`compute_equity` is the entry point; :func:`hand_reading` and
:func:`showing_reading` put hands into words, the latter from up cards only.
"""

from table_controller.domain.equity.core import EquityError, EquityResult, compute_equity
from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.readings import hand_reading, showing_reading

__all__ = [
    "EquityError",
    "EquityResult",
    "Game",
    "compute_equity",
    "hand_reading",
    "showing_reading",
]
