"""The evaluators' lookup tables kept in files between processes (issue 25).

Building the hand evaluators' tables from the rules takes 0.3-0.7 s per process
(:mod:`table_controller.domain._hand_tables`, :mod:`table_controller.domain.equity.evaluate`);
the command line, started once per spot by an outside tool, loads them from a file
instead: a few milliseconds. This is the edge that does the I/O for the pure domain
(:mod:`table_controller.domain.table_store`).

A file is ``<name>-<key>.bin`` in the cache directory, where ``key`` is a SHA-256 over
the source of the modules that build the tables, the Python version and the machine's
byte order, so a changed builder never reads an older file. Its content is a magic
line, the SHA-256 of the payload, then the payload; a file whose digest, magic or
layout does not check out is ignored and rewritten from a fresh build. Files are
written to a temporary name and renamed into place, so a reader never sees half of
one and two processes may build at once. A directory that cannot be written (a
service with ``ProtectHome``) only costs the build, as before.

The directory: ``$STUD_TABLE_CACHE`` if set, else ``$XDG_CACHE_HOME/stud-table``,
else ``~/.cache/stud-table``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from table_controller.domain import table_store

__all__ = ["DiskTableStore", "cache_dir", "install"]

T = TypeVar("T")

MAGIC: Final = b"stud-table tables 1\n"
_DIGEST: Final = 32  # bytes of a SHA-256

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """The directory the tables are kept in (see the module doc)."""
    explicit = os.environ.get("STUD_TABLE_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "stud-table"


class DiskTableStore:
    """A :class:`~table_controller.domain.table_store.TableStore` on files in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str, sources: tuple[str, ...]) -> Path | None:
        """The file of tables ``name`` built by ``sources``; None if a source is unreadable."""
        digest = hashlib.sha256(MAGIC + name.encode() + sys.version.encode()
                                + sys.byteorder.encode())
        for module in sources:
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None:
                return None
            try:
                digest.update(Path(spec.origin).read_bytes())
            except OSError:
                return None
        return self.root / f"{name}-{digest.hexdigest()[:24]}.bin"

    def obtain(self, name: str, sources: tuple[str, ...], build: Callable[[], T],
               dump: Callable[[T], bytes], load: Callable[[bytes], T]) -> T:
        """Load the kept tables if intact, else build them and keep them."""
        path = self.path(name, sources)
        if path is None:
            return build()
        payload = _read(path)
        if payload is not None:
            try:
                return load(payload)
            except ValueError as exc:
                log.info("table cache: %s does not load (%s): building it again", path, exc)
        built = build()
        try:
            _write(path, dump(built))
        except OSError as exc:  # a read-only home: the tables are built, just not kept
            log.info("table cache: cannot keep %s: %s", path, exc.strerror)
        return built


def _read(path: Path) -> bytes | None:
    """The payload of an intact file, None for a missing or damaged one."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    if data[:len(MAGIC)] != MAGIC or len(data) < head:
        log.info("table cache: %s is not a table file: building it again", path)
        return None
    payload = data[head:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):head]:
        log.info("table cache: %s fails its checksum: building it again", path)
        return None
    return payload


def _write(path: Path, payload: bytes) -> None:
    """Write the file under a temporary name, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def install(root: Path | None = None) -> DiskTableStore:
    """Keep this process's tables in ``root`` (default :func:`cache_dir`)."""
    store = DiskTableStore(cache_dir() if root is None else root)
    table_store.use_store(store)
    return store
