"""A command run as a person runs it, its output collected as it comes, for tests.

The demo's tests (tests/daemon/test_demo.py, tests/broadcast/test_demo_broadcast.py)
start ``stud-table demo`` and wait for lines of its output while it runs; this is
that set-up, written once.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


@contextmanager
def collecting_output(args: Sequence[str]) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """Run ``args`` (standard error merged into standard output) and yield the process
    and the list its output lines are appended to, by a thread, as they come. On
    leaving, a process still running is killed; the list then holds every line."""
    lines: list[str] = []
    with subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc:
        assert proc.stdout is not None
        stdout = proc.stdout

        def read() -> None:
            for line in stdout:
                lines.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            yield proc, lines
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(timeout=10)
