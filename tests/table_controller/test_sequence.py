"""SequenceCounter: strictly increasing, persisted, never backwards after kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from table_controller.sequence import SequenceCounter, SequenceFileError


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
from table_controller.sequence import SequenceCounter
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
