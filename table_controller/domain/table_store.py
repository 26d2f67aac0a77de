"""Where the domain's lookup tables come from: built here, or kept by an edge (issue 25).

The hand evaluators' tables (:mod:`._hand_tables`, :mod:`.equity.evaluate`) take
0.3-0.7 s to build from the rules, which a command line started once per spot pays
at every start. The domain stays pure: it builds its tables and turns them into bytes
and back, and an edge that may do I/O (``table_controller.records.table_cache``: a
file with a checksum) can be installed here with :func:`use_store` to keep those
bytes between processes. Without one, every process builds its tables, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

__all__ = ["TableStore", "obtain", "use_store"]

T = TypeVar("T")


class TableStore(Protocol):
    """Keeps built tables between processes (an edge: the domain never does I/O)."""

    def obtain(self, name: str, sources: tuple[str, ...], build: Callable[[], T],
               dump: Callable[[T], bytes], load: Callable[[bytes], T]) -> T:
        """The tables called ``name``: ``load`` of what was kept, if it was kept for
        the same ``sources`` (the modules that build them) and is intact, else
        ``build()`` (kept as ``dump`` of it when possible). ``load`` raises
        ``ValueError`` on bytes it cannot read."""
        ...


_store: TableStore | None = None


def use_store(store: TableStore | None) -> None:
    """Install (or, with ``None``, remove) the store the tables are obtained from."""
    global _store  # noqa: PLW0603 - one store per process, set by the program's edge
    _store = store


def obtain(name: str, sources: tuple[str, ...], build: Callable[[], T],
           dump: Callable[[T], bytes], load: Callable[[bytes], T]) -> T:
    """Tables from the installed store, or built here when there is none."""
    if _store is None:
        return build()
    return _store.obtain(name, sources, build, dump, load)
