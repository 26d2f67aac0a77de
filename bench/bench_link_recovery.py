"""Reader link recovery over a real pty: unplug detection, reconnect, stale detection.

Uses the emulator and ReaderLink with their default periods (heartbeat 1 s). Prints
median and p99 (over repeats) of:
  * unplug -> DISCONNECTED            (requirement: within 2 s)
  * replug -> ONLINE, after the reader was away a random 0..6 s, so the reconnect
    backoff is caught at every stage up to its 2 s cap (requirement: within 5 s)
  * last frame -> STALE on heartbeat silence (requirement: within 2 heartbeat periods)

    .venv/bin/python bench/bench_link_recovery.py [--repeats N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable

from firmware_bridge.emulator import ReaderEmulator
from firmware_bridge.link import ConnectionState, LinkStats, ReaderLink
from firmware_bridge.messages import ReaderMessage


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class StateClock:
    """Records the monotonic time of each state change."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.history: list[tuple[ConnectionState, float]] = []

    def on_state(self, reader_id: int, state: ConnectionState, stats: LinkStats) -> None:
        with self.changed:
            self.history.append((state, time.monotonic()))
            self.changed.notify_all()

    def wait(self, state: ConnectionState, after: float, timeout: float = 30.0) -> float:
        def reached() -> float | None:
            return next((at for seen, at in self.history if seen is state and at >= after), None)

        with self.changed:
            if not self.changed.wait_for(lambda: reached() is not None, timeout):
                raise TimeoutError(f"{state} not reached")
            result = reached()
            assert result is not None
            return result


def show(name: str, samples: list[float], limit: float) -> None:
    print(
        f"{name:<30} median {statistics.median(samples):6.3f} s"
        f"  p99 {percentile(samples, 0.99):6.3f} s"
        f"  max {max(samples):6.3f} s  (limit {limit:.1f} s, n={len(samples)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(3)
    ignore: Callable[[int, ReaderMessage, float], None] = lambda *_: None  # noqa: E731
    detect, reconnect, stale = [], [], []
    with tempfile.TemporaryDirectory() as directory:
        emulator = ReaderEmulator(directory, 1).start()
        clock = StateClock()
        link = ReaderLink(str(emulator.path), 1, ignore, clock.on_state)
        link.start()
        clock.wait(ConnectionState.ONLINE, 0.0)
        for _ in range(args.repeats):
            time.sleep(0.5)
            pulled = time.monotonic()
            emulator.unplug()
            detect.append(clock.wait(ConnectionState.DISCONNECTED, pulled) - pulled)
            time.sleep(rng.uniform(0.0, 6.0))
            plugged = time.monotonic()
            emulator.replug()
            reconnect.append(clock.wait(ConnectionState.ONLINE, plugged) - plugged)
        for _ in range(max(3, args.repeats // 2)):
            time.sleep(0.5)
            emulator.set_silent(True)
            last = link.stats.last_frame or time.monotonic()
            stale.append(clock.wait(ConnectionState.STALE, last) - last)
            emulator.set_silent(False)
            clock.wait(ConnectionState.ONLINE, time.monotonic() - 0.001)
        link.stop()
        emulator.stop()
    show("unplug -> DISCONNECTED", detect, 2.0)
    show("replug -> ONLINE", reconnect, 5.0)
    show("last frame -> STALE (hb 1 s)", stale, 2.0)


if __name__ == "__main__":
    main()
