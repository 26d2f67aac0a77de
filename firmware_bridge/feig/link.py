"""The FEIG ISC reader kind on a serial port: polled antenna by antenna, delivered as
our own reader messages.

Our firmware pushes events; a FEIG reader in host mode answers requests
(:mod:`firmware_bridge.feig.protocol`). :class:`FeigPoller` (pure: responses and clock values in,
requests and messages out) asks each antenna of the layout in turn for an inventory
([0xB0][0x01] with ``ANT_SEL``), and turns the answers into exactly what
:class:`~firmware_bridge.link.ReaderLink` delivers for our boards: a HELLO when the
reader first answers, TAG_ARRIVED / TAG_LEFT as tags come and go (a tag must miss
``leave_after_misses`` polls in a row to leave: stacked cards drop out of single
polls), an INVENTORY of every antenna every ``inventory_every`` cycles, and a
HEARTBEAT per cycle. So the daemon, the deck tools and the readers view take either
kind through the same callbacks.

:class:`FeigReaderLink` is the I/O edge, with ReaderLink's interface (``start``,
``stop``, ``request_inventory``, ``state``, ``stats``): it opens the port, polls, and
reports states and problems the same way. Identity: the reader's bus address COM-ADR
is its reader id (0..254); requests go to COM-ADR 255, which every FEIG reader
answers ([MR101] 2.1), so a reader with another address on the port shows as
WRONG_READER instead of silence.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import serial
import structlog

from firmware_bridge.feig.protocol import (
    BROADCAST_ADR,
    CONTROL_ISO_HOST,
    FeigDecoder,
    FeigError,
    Frame,
    Side,
    decode_inventory,
    encode_frame,
    inventory_request,
)
from firmware_bridge.link import (
    STALE_AFTER_PERIODS,
    ConnectionState,
    LinkProblem,
    LinkStats,
    MessageCallback,
    PortGoneError,
    StateCallback,
    SupervisedLink,
)
from firmware_bridge.messages import (
    MAX_INVENTORY_TAGS,
    Heartbeat,
    Hello,
    Inventory,
    ReaderMessage,
    TagArrived,
    TagLeft,
)

__all__ = ["FEIG_MAX_ANTENNAS", "FeigPoller", "FeigReaderLink"]

FEIG_MAX_ANTENNAS: Final = 8
"""ANT_SEL is one byte, a bit per antenna output ([MU02] 10.1.1)."""

POLL_INTERVAL: Final = 0.025
"""Seconds from one request to the next at the least: about what a real reader takes
for a 16-slot ISO 15693 inventory, so a fast emulator does not spin the host's CPU."""

RESPONSE_TIMEOUT: Final = 0.5
"""Seconds to wait for an answer before the poll counts as a miss. An ISO 15693
inventory with 16 slots takes about 20 ms on air; 0.5 s covers a loaded host."""

DEFAULT_LEAVE_AFTER_MISSES: Final = 2
DEFAULT_INVENTORY_EVERY: Final = 10
"""Cycles between full INVENTORY messages (about 2 s at 8 antennas x 25 ms)."""


@dataclass
class FeigPoller:
    """Which antenna to ask next, and what its answers mean (see the module doc)."""

    reader_id: int
    antennas: tuple[int, ...]
    leave_after_misses: int = DEFAULT_LEAVE_AFTER_MISSES
    inventory_every: int = DEFAULT_INVENTORY_EVERY
    _index: int = 0
    _cycles: int = 0
    _started_at: float | None = None
    _online: bool = False
    _present: dict[int, dict[str, int]] = field(default_factory=dict)
    _gathered: set[str] = field(default_factory=set)
    _full_inventory_due: bool = False

    def __post_init__(self) -> None:
        if not self.antennas or len(set(self.antennas)) != len(self.antennas):
            raise ValueError("a FEIG reader needs distinct antenna outputs")
        if not all(0 <= a < FEIG_MAX_ANTENNAS for a in self.antennas):
            raise ValueError(f"FEIG antenna outputs are 0..{FEIG_MAX_ANTENNAS - 1}")
        if not 0 <= self.reader_id < BROADCAST_ADR:
            raise ValueError("a FEIG reader id is its COM-ADR, 0..254")
        self.antennas = tuple(sorted(self.antennas))
        self._present = {antenna: {} for antenna in self.antennas}

    @property
    def antenna(self) -> int:
        """The antenna output being polled now."""
        return self.antennas[self._index]

    def request(self, *, more: bool = False) -> bytes:
        """The bytes of the next inventory request."""
        return encode_frame(inventory_request(BROADCAST_ADR, self.antenna, more=more))

    def request_full_inventory(self) -> None:
        """INVENTORY of every antenna at the end of this cycle (the host asked)."""
        self._full_inventory_due = True

    def reset(self) -> None:
        """A new connection: start over (a HELLO again, every tag new)."""
        self._index, self._online, self._started_at = 0, False, None
        self._present = {antenna: {} for antenna in self.antennas}
        self._gathered.clear()

    def answered(self, frame: Frame, now: float) -> tuple[list[ReaderMessage], bool]:
        """A response to the current request: (messages, ask the same antenna again for
        MORE). Raises :class:`FeigError` for a frame that is not a valid answer."""
        if frame.control != CONTROL_ISO_HOST or frame.status is None:
            raise FeigError(f"unexpected CONTROL 0x{frame.control:02X}")
        messages: list[ReaderMessage] = []
        if not self._online:
            self._online, self._started_at = True, now
            messages.append(Hello(self.reader_id, (0, 0, 0), max(self.antennas) + 1))
        # STATUS 0x01 "No Transponder" (or any status without data) decodes to no tags.
        response = decode_inventory(frame, with_antennas=True)
        # A data set read on another output than asked is not this antenna's.
        self._gathered.update(tag.uid for tag in response.tags
                              if not tag.antennas or any(a == self.antenna
                                                         for a, _ in tag.antennas))
        if response.more:
            return messages, True
        messages += self._settle(set(self._gathered), now)
        return messages, False

    def missed(self, now: float) -> list[ReaderMessage]:
        """No (valid) answer in time: the antenna saw nothing this time."""
        if not self._online:
            return []
        # A lost answer and an empty one count alike: one miss for each tag.
        return self._settle(set(), now)

    def _settle(self, seen: set[str], now: float) -> list[ReaderMessage]:
        antenna = self.antenna
        self._gathered.clear()
        present = self._present[antenna]
        messages: list[ReaderMessage] = []
        for uid in sorted(seen):
            if uid not in present:
                messages.append(TagArrived(antenna, uid))
            present[uid] = 0
        for uid in sorted(set(present) - seen):
            present[uid] += 1
            if present[uid] >= self.leave_after_misses:
                del present[uid]
                messages.append(TagLeft(antenna, uid))
        self._index += 1
        if self._index == len(self.antennas):
            self._index = 0
            self._cycles += 1
            started = self._started_at if self._started_at is not None else now
            uptime = int((now - started) * 1000) & 0xFFFF_FFFF
            messages.append(Heartbeat(uptime, self._cycles & 0xFFFF_FFFF))
            if self._full_inventory_due or self._cycles % self.inventory_every == 0:
                self._full_inventory_due = False
                messages += self.inventories()
        return messages

    def inventories(self) -> list[Inventory]:
        """INVENTORY of every antenna, as believed now."""
        return [Inventory(antenna, self._cycles & 0xFFFF_FFFF,
                          tuple(sorted(self._present[antenna]))[:MAX_INVENTORY_TAGS])
                for antenna in self.antennas]


class FeigReaderLink(SupervisedLink):
    """A FEIG ISC reader on ``url``, delivering our reader messages (module doc)."""

    THREAD_NAME = "feig-link"
    PORT_READ_TIMEOUT = 0.02

    def __init__(
        self,
        url: str,
        expected_reader_id: int,
        on_message: MessageCallback,
        on_state: StateCallback,
        heartbeat_period: float = 2.0,
        *,
        antennas: Iterable[int] = (0,),
        response_timeout: float = RESPONSE_TIMEOUT,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        super().__init__(url, expected_reader_id, on_message, on_state,
                         heartbeat_period=heartbeat_period,
                         logger=structlog.get_logger(__name__).bind(
                             reader=expected_reader_id, kind="feig"))
        self.response_timeout = response_timeout
        self.poll_interval = poll_interval
        self._poller = FeigPoller(expected_reader_id, tuple(antennas))
        self._decoder = FeigDecoder(Side.READER, frozenset({CONTROL_ISO_HOST}))
        self._counts.update(frames_discarded=0, malformed=0)

    @property
    def stats(self) -> LinkStats:
        """Counters in ReaderLink's terms (no sequence numbers in this protocol)."""
        with self._lock:
            decoder = self._decoder.stats
            return LinkStats(
                frames_ok=decoder.frames_ok, crc_errors=decoder.crc_errors,
                oversized=decoder.oversized, truncated=decoder.truncated,
                malformed=self._counts["malformed"], bytes_received=decoder.bytes_received,
                frames_discarded=self._counts["frames_discarded"],
                connects=self._counts["connects"], disconnects=self._counts["disconnects"],
                reconnects=self._counts["reconnects"], last_heartbeat=self._last_heartbeat,
                last_frame=self._last_frame, hello=self._hello, state_since=self._state_since,
                problem=self._problem, problem_detail=self._problem_detail,
            )

    def request_inventory(self, antenna: int | None = None) -> None:
        """INVENTORY of every antenna after the current cycle (``antenna`` is ignored:
        one cycle reads them all anyway)."""
        del antenna
        with self._lock:
            self._poller.request_full_inventory()

    # -- the thread ----------------------------------------------------------------------

    def _session(self, port: serial.SerialBase) -> bool:
        """Poll the open port until it fails or stop(); True if it reached ONLINE."""
        try:
            return self._poll(port)
        except (serial.SerialException, OSError) as exc:
            raise PortGoneError from exc

    def _poll(self, port: serial.SerialBase) -> bool:
        with self._lock:
            self._decoder.reset_stream()
            self._poller.reset()
        now = time.monotonic()
        self._set_state(ConnectionState.HANDSHAKE, now)
        opened, went_online, more = now, False, False
        last_answer = now
        next_poll = now
        while not self._stop.is_set():
            self._stop.wait(max(0.0, next_poll - time.monotonic()))
            next_poll = time.monotonic() + self.poll_interval
            with self._lock:
                request = self._poller.request(more=more)
            port.write(request)
            frame = self._await(port)
            now = time.monotonic()
            if frame is None:
                with self._lock:
                    messages = self._poller.missed(now)
                more = False
                self._deliver_all(messages, now)
                self._supervise(now, opened, last_answer)
                if self._state is not ConnectionState.ONLINE and self._path_moved(port):
                    return went_online  # the reader came back behind the path: reopen it
                continue
            if frame.com_adr != self.reader_id:
                with self._lock:
                    self._counts["frames_discarded"] += 1
                self._set_problem(LinkProblem.WRONG_READER, f"reader {frame.com_adr} answered,"
                                  f" {self.reader_id} expected")
                self._set_state(ConnectionState.WRONG_READER, now)
                self._stop.wait(1.0)
                continue
            try:
                with self._lock:
                    messages, more = self._poller.answered(frame, now)
            except FeigError as exc:
                with self._lock:
                    self._counts["malformed"] += 1
                self._log.debug("feig_malformed", error=str(exc))
                more = False
                continue
            last_answer = now
            with self._lock:
                self._last_frame = now
            if self._state is not ConnectionState.ONLINE:
                self._enter_online(now)
                went_online = True
            self._deliver_all(messages, now)
        return went_online

    def _await(self, port: serial.SerialBase) -> Frame | None:
        """The next frame, or None after :attr:`response_timeout` (then resynchronised)."""
        deadline = time.monotonic() + self.response_timeout
        while time.monotonic() < deadline and not self._stop.is_set():
            data = port.read(1)
            if data:
                data += port.read_all() or b""
                with self._lock:
                    frames = self._decoder.feed(data)
                if frames:
                    return frames[-1]
        with self._lock:
            frames = self._decoder.resync()
        return frames[-1] if frames else None

    def _supervise(self, now: float, opened: float, last_answer: float) -> None:
        state = self._state
        if state is ConnectionState.ONLINE and (
                now - last_answer > STALE_AFTER_PERIODS * self.heartbeat_period):
            self._set_state(ConnectionState.STALE, now)
            self._set_problem(LinkProblem.SILENT, f"no answer for {now - last_answer:.1f} s")
        elif state is ConnectionState.HANDSHAKE and now - opened >= 3.0:
            self._set_problem(LinkProblem.NO_HELLO, "port open, no answer to inventory"
                              " requests (not a FEIG reader in host mode?)")

    def _deliver_all(self, messages: list[ReaderMessage], now: float) -> None:
        for message in messages:
            if isinstance(message, Hello):
                with self._lock:
                    self._hello = message
            elif isinstance(message, Heartbeat):
                with self._lock:
                    self._last_heartbeat = now
            try:
                self._on_message(self.reader_id, message, now)
            except Exception:
                self._log.exception("on_message_callback_failed")
