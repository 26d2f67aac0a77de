"""The start-up's phase alone (daemon/start_phase.py): the transition table."""

from __future__ import annotations

import pytest

from table_controller.daemon.start_phase import (
    TRANSITIONS,
    IllegalStartMoveError,
    StartMachine,
    StartMove,
    StartPhase,
)


def test_a_start_with_an_interrupted_hand_goes_through_every_phase() -> None:
    machine = StartMachine()
    assert machine.phase is StartPhase.RUNNING
    assert machine.move(StartMove.BEGIN) is StartPhase.RECONCILING
    assert machine.collecting
    assert not machine.settling
    assert machine.move(StartMove.SETTLE) is StartPhase.SETTLING
    assert machine.settling
    assert not machine.quiet
    assert machine.move(StartMove.QUIET) is StartPhase.SETTLING_QUIET
    assert machine.quiet
    assert machine.settling
    assert machine.move(StartMove.LOUD) is StartPhase.SETTLING
    assert machine.move(StartMove.DONE) is StartPhase.RUNNING
    assert not machine.collecting
    assert not machine.settling
    assert not machine.quiet


@pytest.mark.parametrize("phase", list(StartPhase))
@pytest.mark.parametrize("move", list(StartMove))
def test_every_move_outside_the_table_is_refused_naming_both(
    phase: StartPhase, move: StartMove
) -> None:
    machine = StartMachine()
    machine.phase = phase
    if (phase, move) in TRANSITIONS:
        assert machine.move(move) is TRANSITIONS[phase, move]
        return
    with pytest.raises(IllegalStartMoveError) as caught:
        machine.move(move)
    assert phase.value in str(caught.value)
    assert move.value in str(caught.value)
    assert machine.phase is phase  # unchanged
