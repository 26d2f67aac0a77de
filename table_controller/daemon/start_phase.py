"""The daemon's start-up as one phase with a transition table (no I/O, no clock).

Theory of operation
-------------------
After the journal is replayed the core *collects* what the readers report
(``RECONCILING``) until the table has settled, then *settles* it against the
restored hand (``SETTLING``; while an interrupted hand's guessed moves are fed,
``SETTLING_QUIET``: what the engine makes of them is not published), then runs
(``RUNNING``). A core that is never asked to reconcile (a test's, a replay's)
simply starts ``RUNNING``::

    RUNNING --begin--> RECONCILING --settle--> SETTLING --done--> RUNNING
                                                 |    ^
                                             quiet    loud
                                                 v    |
                                              SETTLING_QUIET

Every legal move is in :data:`TRANSITIONS`; any other raises
:class:`IllegalStartMoveError`, naming the phase and the move.
"""

from __future__ import annotations

from enum import Enum
from typing import Final


class StartPhase(Enum):
    """Where the start-up is."""

    RECONCILING = "reconciling"
    """Collecting the readers' first reports (zone events are buffered)."""
    SETTLING = "settling"
    """Feeding the reconciled plan (a hand opened now is the restored one's heir)."""
    SETTLING_QUIET = "settling_quiet"
    """Feeding an interrupted hand's guessed last moves: its alerts are withheld."""
    RUNNING = "running"
    """Started (or never asked to reconcile)."""


class StartMove(Enum):
    """What moves the start-up on."""

    BEGIN = "begin"
    SETTLE = "settle"
    QUIET = "quiet"
    LOUD = "loud"
    DONE = "done"


TRANSITIONS: Final[dict[tuple[StartPhase, StartMove], StartPhase]] = {
    (StartPhase.RUNNING, StartMove.BEGIN): StartPhase.RECONCILING,
    (StartPhase.RECONCILING, StartMove.SETTLE): StartPhase.SETTLING,
    (StartPhase.SETTLING, StartMove.QUIET): StartPhase.SETTLING_QUIET,
    (StartPhase.SETTLING_QUIET, StartMove.LOUD): StartPhase.SETTLING,
    (StartPhase.SETTLING, StartMove.DONE): StartPhase.RUNNING,
}
"""Every legal (phase, move) and the phase it leads to."""


class IllegalStartMoveError(RuntimeError):
    """A move the start-up's phase does not allow (a bug in the caller)."""

    def __init__(self, phase: StartPhase, move: StartMove) -> None:
        super().__init__(f"start-up: {move.value!r} is not allowed while {phase.value}")
        self.phase = phase
        self.move = move


class StartMachine:
    """The start-up's phase; :meth:`move` follows :data:`TRANSITIONS`."""

    def __init__(self) -> None:
        """A machine in ``RUNNING`` (nothing to reconcile until :meth:`move` BEGIN)."""
        self.phase = StartPhase.RUNNING

    def move(self, move: StartMove) -> StartPhase:
        """Apply ``move``; the new phase. Raises :class:`IllegalStartMoveError`."""
        phase = TRANSITIONS.get((self.phase, move))
        if phase is None:
            raise IllegalStartMoveError(self.phase, move)
        self.phase = phase
        return phase

    @property
    def collecting(self) -> bool:
        """True while the readers' first reports are collected (RECONCILING)."""
        return self.phase is StartPhase.RECONCILING

    @property
    def settling(self) -> bool:
        """True while the reconciled plan is fed (quiet or not)."""
        return self.phase in (StartPhase.SETTLING, StartPhase.SETTLING_QUIET)

    @property
    def quiet(self) -> bool:
        """True while the engine's alerts and notices are withheld."""
        return self.phase is StartPhase.SETTLING_QUIET
