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
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Final

DEFAULT_BLOCK: Final = 1000
"""Numbers reserved per fsync; a restart skips at most this many."""


class SequenceFileError(RuntimeError):
    """The sequence file exists but cannot be read as a number.

    The counter refuses to start from zero in that case: that would make the
    sequence go backwards, which consumers treat as a new table.
    """


class SequenceCounter:
    """Thread-safe, persistent, strictly increasing counter (see the module docstring)."""

    def __init__(self, path: Path | str, block: int = DEFAULT_BLOCK) -> None:
        """Open (or create) the counter file at ``path``; the first number is 1 on a new file."""
        if block < 1:
            raise ValueError("block must be at least 1")
        self._path = Path(path)
        self._block = block
        self._lock = threading.Lock()
        self._next = self._read_mark()
        self._reserved = self._next  # nothing reserved yet in this process

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
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_name(self._path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, f"{mark}\n".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self._path)
        # fsync the directory so the rename itself survives a power cut.
        dir_fd = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def next(self) -> int:
        """Return the next number (strictly greater than any returned before, ever)."""
        with self._lock:
            if self._next >= self._reserved:
                self._reserved = self._next + self._block
                self._persist(self._reserved)
            value = self._next
            self._next += 1
            return value

    def peek(self) -> int:
        """The number :meth:`next` would return now (for logs and tests)."""
        with self._lock:
            return self._next
