"""Files the command line writes: checked before the work, written atomically, private.

Every output file a command is told to write (``phh import -o``, ``phh export -o``,
``simulate --hand-log``, the broadcast backlog) goes through here (issue 24):

* :func:`output_problem` says, before any work starts, why a path cannot be written
  (its directory is missing or not a directory, it is a directory, it is not a regular
  file, it or its directory is not writable), so a long run never ends in a traceback;
* :func:`private_output` writes a temporary file beside the target with mode 0600
  (set with ``fchmod``, so whatever the umask), fsyncs it and renames it into place: a
  reader sees the old file or the whole new one, never half of it, and a failure or
  Ctrl-C leaves no partial file. These files hold hole cards (a hand log, a journal's
  hands), so they are owner-only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

PRIVATE_MODE = 0o600
"""Owner read/write only: what a file holding hole cards gets."""


def output_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written as an output file, or None if it can.

    A missing directory is an error (it is never created: a typo must not leave a new
    directory tree behind). An existing target must be a regular, writable file.
    """
    parent = path.parent
    try:
        parent_mode = parent.stat().st_mode
    except FileNotFoundError:
        return f"the directory {parent} does not exist"
    except OSError as exc:
        return f"cannot reach the directory {parent}: {exc.strerror}"
    if not stat.S_ISDIR(parent_mode):
        return f"{parent} is not a directory"
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"cannot reach it: {exc.strerror}"
    if mode is not None:
        if stat.S_ISDIR(mode):
            return "is a directory; give a file name"
        if not stat.S_ISREG(mode):
            return "is not a regular file"
    if mode is not None and not os.access(path, os.W_OK):
        return "is not writable"
    # The write is a new file beside the target, renamed over it: try making one (as
    # root os.access says yes to /proc, which takes no new file).
    probe = _temporary(path)
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE))
    except OSError as exc:
        return f"cannot create a file in {parent}: {exc.strerror}"
    probe.unlink(missing_ok=True)
    return None


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


@contextlib.contextmanager
def private_output(path: Path) -> Iterator[TextIO]:
    """A text handle whose content replaces ``path`` atomically, mode 0600, when the
    block ends without an exception (on one, nothing is left behind)."""
    temporary = _temporary(path)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    try:
        os.fchmod(fd, PRIVATE_MODE)  # whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600 (:func:`private_output`)."""
    with private_output(path) as handle:
        handle.write(text)
