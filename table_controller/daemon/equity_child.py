"""The equity child process: ``python -m table_controller.daemon.equity_child GAME``.

Started by :class:`~table_controller.daemon.equity_feed.ChildProcess`. It lowers
its own CPU priority (nice 19: the cards' path goes first on a busy machine),
builds the
evaluation tables, says it is ready, then answers every
:class:`~table_controller.domain.equity.live.EquitySpot` received on stdin with its
:class:`~table_controller.domain.equity.live.LiveEquity` on stdout (pickled messages of
:mod:`multiprocessing.connection`; the only peer is the daemon that started it),
or with one line naming an error. It ends when its input closes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from multiprocessing.connection import Connection
from typing import Final

from table_controller.domain.equity.evaluate import Game
from table_controller.domain.equity.live import EquitySpot, compute_live, warm_up

CHILD_NICE: Final = 19
"""How much lower the child's CPU priority is than the daemon's."""


def main(argv: list[str]) -> int:
    """Serve spots until stdin closes; returns the exit status."""
    game = Game(argv[0]) if argv else Game.STUD
    receive = Connection(os.dup(0), writable=False)
    send = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # a stray print must not corrupt the answers: stdout is now stderr
    with contextlib.suppress(OSError):  # not allowed here: the same priority, then
        os.nice(CHILD_NICE)
    warm_up(game)
    send.send(None)  # ready
    while True:
        try:
            spot = receive.recv()
        except (EOFError, OSError):
            return 0
        if not isinstance(spot, EquitySpot):
            send.send(f"expected an EquitySpot, got {type(spot).__name__}")
            continue
        try:
            answer: object = compute_live(spot)
        except Exception as exc:
            answer = f"{type(exc).__name__}: {exc}"
        send.send(answer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
