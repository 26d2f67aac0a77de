"""The reader kinds a layout may name, and the link that speaks each one.

``stud`` is our own firmware (:class:`firmware_bridge.link.ReaderLink`,
docs/protocol.md); ``feig-isc`` a FEIG ISC HF reader polled in host mode
(:class:`firmware_bridge.feig.link.FeigReaderLink`, docs/readers-feig.md). Both take
the same callbacks and deliver the same reader messages, so the daemon and the
tools do not care which kind a reader is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Protocol

from firmware_bridge.feig.link import FeigReaderLink
from firmware_bridge.link import (
    DEFAULT_HEARTBEAT_PERIOD,
    ConnectionState,
    LinkStats,
    MessageCallback,
    ReaderLink,
    StateCallback,
)

__all__ = ["KINDS", "AnyReaderLink", "open_link"]

KINDS: Final = ("stud", "feig-isc")


class AnyReaderLink(Protocol):
    """What the daemon and the tools use of a reader link, whatever its kind."""

    reader_id: int

    @property
    def state(self) -> ConnectionState:
        """The link's state."""

    @property
    def stats(self) -> LinkStats:
        """The link's counters."""

    def start(self) -> None:
        """Start the link's thread."""

    def stop(self, timeout: float = 5.0) -> None:
        """Stop it and close the port."""

    def request_inventory(self, antenna: int | None = None) -> None:
        """Ask for a full inventory."""


def open_link(kind: str, url: str, reader_id: int, on_message: MessageCallback,
              on_state: StateCallback, *, antennas: Iterable[int],
              heartbeat_period: float = DEFAULT_HEARTBEAT_PERIOD) -> AnyReaderLink:
    """The link for a reader of ``kind`` (not started); ValueError for an unknown kind."""
    if kind == "stud":
        return ReaderLink(url, reader_id, on_message, on_state,
                          heartbeat_period=heartbeat_period)
    if kind == "feig-isc":
        return FeigReaderLink(url, reader_id, on_message, on_state, heartbeat_period,
                              antennas=antennas)
    raise ValueError(f"unknown reader kind {kind!r} (known: {', '.join(KINDS)})")
