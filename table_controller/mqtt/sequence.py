"""A per-table sequence number that never goes backwards, even across ``kill -9``.

Theory of operation: writing the counter to disk on every message would cost an
fsync per publish. Instead the counter *reserves blocks*: the file holds a
high-water mark H, meaning "every number below H may already have been used".
Before handing out H, the counter first persists H + block (write a temporary
file, fsync it, rename it over the old one, fsync the directory), then hands
out H, H+1, ... up to H + block - 1 from memory. A restart (clean or not)
starts from the persisted mark, so it may skip up to ``block`` numbers but can
never repeat one. The rename makes the update atomic: the file is always either
the old or the new mark, never a torn mix.

A full disk must not stop the numbers (the daemon still has to say that the
disk is full): the next block is reserved when half of the current one is
used, so a failed reservation leaves half a block to go on with while it is
retried; and when the temporary file cannot be written the mark is rewritten
in place, which needs no new space (the file's block is already allocated).
Only when both fail and the block is used up does :meth:`SequenceCounter.next`
raise :class:`SequenceFileError`, unless the counter has a wall clock.

With a wall clock (the daemon's counter) every start begins at least at the
current time in milliseconds, ``max(mark, now_ms)``. That makes the numbers
safe even when the mark cannot be written at all (a read-only file system):
the counter then goes on from memory without persisting, and a later start
still begins above every number handed out, as long as fewer numbers were used
than milliseconds passed (a table publishes a few dozen messages a second) and
the wall clock is not set back. The first start with a clock jumps ``seq``
forward once, which consumers treat like any restart gap.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from table_controller.records.journal import write_file_synced

DEFAULT_BLOCK: Final = 1000
"""Numbers reserved per fsync; a restart skips at most this many."""


class SequenceFileError(RuntimeError):
    """The sequence file exists but cannot be read as a number.

    The counter refuses to start from zero in that case: that would make the
    sequence go backwards, which consumers treat as a new table.
    """


class SequenceCounter:
    """Thread-safe, persistent, strictly increasing counter (see the module docstring)."""

    def __init__(
        self,
        path: Path | str,
        block: int = DEFAULT_BLOCK,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Open (or create) the counter file at ``path``; the first number is 1 on a
        new file, or the wall time in milliseconds with ``clock`` (module docstring)."""
        if block < 1:
            raise ValueError("block must be at least 1")
        self._path = Path(path)
        self._block = block
        self._clock = clock
        self._lock = threading.Lock()
        self.damaged: str | None = None
        """Why the file could not be read, when the wall clock stood in for it."""
        try:
            self._next = self._read_mark()
        except SequenceFileError as exc:
            if clock is None:
                raise
            self.damaged = str(exc)  # the clock floor is above every number used
            self._next = 1
        if clock is not None:
            self._next = max(self._next, int(clock() * 1000))
        self._reserved = self._next  # nothing reserved yet in this process
        self.failures = 0
        """Reservations that failed but left numbers to go on with (for tests, status)."""

    @property
    def path(self) -> Path:
        """The file holding the high-water mark."""
        return self._path

    def _read_mark(self) -> int:
        try:
            text = self._path.read_text(encoding="ascii")
        except FileNotFoundError:
            return 1
        except (OSError, UnicodeDecodeError) as exc:
            raise SequenceFileError(f"{self._path}: cannot read sequence file: {exc}") from exc
        try:
            mark = int(text.strip())
        except ValueError:
            raise SequenceFileError(
                f"{self._path}: sequence file does not hold a number: {text[:40]!r}"
            ) from None
        if mark < 1:
            raise SequenceFileError(f"{self._path}: sequence mark {mark} is below 1")
        return mark

    def _persist(self, mark: int) -> None:
        try:
            self._persist_by_rename(mark)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not self._path.exists():
                raise
            self._persist_in_place(mark)

    def _persist_in_place(self, mark: int) -> None:
        # Disk full: overwrite the existing file's bytes (padded so a longer
        # number never needs a new block). Not atomic against a power cut in the
        # middle of these 21 bytes, which is why it is only the fallback.
        fd = os.open(self._path, os.O_WRONLY)
        try:
            os.pwrite(fd, f"{mark:020d}\n".encode("ascii"), 0)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _persist_by_rename(self, mark: int) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_name(self._path.name + ".tmp")
        # Zero-padded to a fixed width, so the in-place fallback can
        # rewrite it without growing the file.
        write_file_synced(tmp, f"{mark:020d}\n".encode("ascii"), mode=0o644)
        os.replace(tmp, self._path)
        # fsync the directory so the rename itself survives a power cut.
        dir_fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def next(self) -> int:
        """Return the next number (strictly greater than any returned before, ever).

        Raises :class:`SequenceFileError` only when no reserved number is left
        and a new block cannot be persisted (see the module docstring).
        """
        with self._lock:
            if self._next >= self._reserved - self._block // 2:
                self._reserve()
            value = self._next
            self._next += 1
            return value

    def _reserve(self) -> None:
        mark = self._next + self._block
        try:
            self._persist(mark)
        except OSError as exc:
            if self._next < self._reserved or self._clock is not None:
                # Half a block is left, or the wall-clock floor keeps the numbers
                # safe (module docstring): go on, retry at the next call.
                self.failures += 1
                return
            raise SequenceFileError(
                f"{self._path}: cannot persist the sequence mark: {exc.strerror or exc}"
            ) from exc
        self._reserved = mark

    def advance_to(self, value: int) -> None:
        """Make the next number at least ``value`` (persisting it first)."""
        with self._lock:
            if value <= self._next:
                return
            if value > self._reserved:
                # The mark means "numbers below it may be used": ``value`` itself.
                try:
                    self._persist(value)
                except OSError as exc:
                    raise SequenceFileError(
                        f"{self._path}: cannot persist the sequence mark: {exc.strerror or exc}"
                    ) from exc
                self._reserved = value
            self._next = value

    def peek(self) -> int:
        """The number :meth:`next` would return now (for logs and tests)."""
        with self._lock:
            return self._next
