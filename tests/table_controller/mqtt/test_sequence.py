"""SequenceCounter: strictly increasing, persisted, never backwards after kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from table_controller.mqtt.sequence import SequenceCounter, SequenceFileError


def test_increasing_and_persisted_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "t1.seq"
    counter = SequenceCounter(path, block=10)
    first = [counter.next() for _ in range(25)]
    assert first == list(range(1, 26))
    reopened = SequenceCounter(path, block=10)
    assert reopened.next() > first[-1]


def test_threads_never_get_the_same_number(tmp_path: Path) -> None:
    counter = SequenceCounter(tmp_path / "t1.seq", block=7)
    seen: list[int] = []
    lock = threading.Lock()

    def take() -> None:
        mine = [counter.next() for _ in range(500)]
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == list(range(1, 2001))


_KILLED = """
import sys
from table_controller.mqtt.sequence import SequenceCounter
counter = SequenceCounter(sys.argv[1], block=50)
while True:
    print(counter.next(), flush=True)
"""


def test_never_backwards_after_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "t1.seq"
    for _round in range(3):
        with subprocess.Popen(
            [sys.executable, "-c", _KILLED, str(path)], stdout=subprocess.PIPE, text=True
        ) as child:
            assert child.stdout is not None
            last = 0
            for _ in range(120):
                last = int(child.stdout.readline())
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        assert SequenceCounter(path).next() > last


@pytest.mark.parametrize("content", ["", "abc", "-5\n"])
def test_unreadable_file_refuses_to_restart_from_one(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t1.seq"
    path.write_text(content)
    with pytest.raises(SequenceFileError, match=str(path)):
        SequenceCounter(path)


def test_in_place_fallback_when_the_disk_is_full(tmp_path: Path) -> None:
    """Issue 9 item 14: a full disk (no room for the temporary file) does not stop seq."""
    import errno

    path = tmp_path / "t1.seq"
    counter = SequenceCounter(path, block=10)
    counter.next()
    real = counter._persist_by_rename

    def full(mark: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    counter._persist_by_rename = full  # type: ignore[method-assign]
    numbers = [counter.next() for _ in range(40)]
    assert numbers == sorted(set(numbers))
    assert int(path.read_text()) > numbers[-1]  # rewritten in place, still ahead
    counter._persist_by_rename = real  # type: ignore[method-assign]
    assert SequenceCounter(path).next() > numbers[-1]


def test_clock_floor_survives_a_read_only_or_damaged_file(tmp_path: Path) -> None:
    """A mark that cannot be written or read: the wall-clock floor keeps seq
    going forward, in the process and across a restart."""
    path = tmp_path / "t1.seq"
    now = [1_000.0]
    counter = SequenceCounter(path, block=10, clock=lambda: now[0])
    first = counter.next()
    assert first == 1_000_000  # milliseconds

    def read_only(mark: int) -> None:
        raise OSError(30, "Read-only file system")

    counter._persist = read_only  # type: ignore[method-assign]
    used = [counter.next() for _ in range(30)]  # beyond the reserved block
    assert used == sorted(set(used))
    assert counter.failures > 0
    now[0] += 1.0  # a second later: more milliseconds than numbers used
    assert SequenceCounter(path, block=10, clock=lambda: now[0]).next() > used[-1]
    path.write_text("garbage")
    damaged = SequenceCounter(path, block=10, clock=lambda: now[0] + 1)
    assert damaged.damaged is not None
    assert damaged.next() > used[-1]


def test_advance_to_persists_the_floor(tmp_path: Path) -> None:
    """The hand-number floor: advance_to(n) survives a restart, numbers below n never reused."""
    path = tmp_path / "t1.hands"
    floor = SequenceCounter(path, block=1)
    floor.advance_to(18)
    assert SequenceCounter(path, block=1).peek() == 18
    floor.advance_to(5)  # never backwards
    assert floor.peek() == 18
