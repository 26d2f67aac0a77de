"""The serial link to one reader: the only module that touches pyserial.

Theory of operation
-------------------
A :class:`ReaderLink` owns one thread that loops: open the port (any pyserial URL),
send IDENTIFY, wait for HELLO, and then pump bytes from the port through a
:class:`~firmware_bridge.decoder.FrameDecoder`. Lifecycle (``on_state`` is called on
every change)::

    CONNECTING --open ok--> HANDSHAKE --HELLO, right id--> ONLINE <--any frame-- STALE
        ^  |                    |  \\--HELLO, wrong id--> WRONG_READER       ^
        |  open failed          |   \\--only other-version frames--> INCOMPATIBLE
        |  v                    |                                         |
    DISCONNECTED <-- port error (unplug: SerialException / OSError) ------+
                                         ONLINE --silence > 1.5 heartbeats--> STALE

* Only ONLINE and STALE deliver messages, so a reader plugged into the wrong USB
  port (WRONG_READER) never delivers a card. IDENTIFY is re-sent periodically in
  HANDSHAKE, WRONG_READER, INCOMPATIBLE and STALE, so the link recovers by itself.
* On entering ONLINE (handshake, HELLO after a reader reboot, or leaving STALE) the
  link requests a full inventory: the host reconciles whatever it missed.
* Reconnect attempts back off exponentially from :data:`RECONNECT_BACKOFF_INITIAL`
  to :data:`RECONNECT_BACKOFF_MAX`; the backoff resets once ONLINE. CONNECTING is
  only the first attempt: a port that cannot be opened keeps the link DISCONNECTED
  through every retry, so the state (and whatever a consumer shows of it) does not
  flap with the retries.

Why a link does not deliver is a :class:`LinkProblem` (port missing, permission
denied, port busy, port lost, no HELLO, wrong reader id, ...) with a one-line
detail, in :attr:`LinkStats.problem`. It is logged once, as a warning, when it
changes (and ``reader_online`` once when the link comes back), and ``on_state``
is called on a change of problem as on a change of state. Retries, state changes
and each failed open are debug lines only: a reader missing all night writes one
warning, not two lines every two seconds.

Every callback gets the ``time.monotonic()`` taken right after the read that
returned the frame's last byte. Callbacks run on the link's thread: keep them short
(put things on a queue); an exception in one is logged and does not stop the link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Final

import serial
import structlog

from firmware_bridge.decoder import DecoderStats, FrameDecoder, Received
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.messages import (
    Direction,
    Heartbeat,
    Hello,
    HostMessage,
    Identify,
    Inventory,
    ReaderFault,
    ReaderMessage,
    RequestInventory,
    TagArrived,
    TagLeft,
)

log = structlog.get_logger(__name__)

BAUDRATE: Final = 115200
"""Line speed asked for; USB CDC-ACM ignores it, a real UART bridge needs it."""

READ_TIMEOUT: Final = 0.05
"""Seconds a read may block: bounds the latency of stop(), supervision and writes."""

WRITE_TIMEOUT: Final = 1.0
"""Seconds a write may block; a reader that stops taking bytes counts as gone."""

RECONNECT_BACKOFF_INITIAL: Final = 0.1
RECONNECT_BACKOFF_FACTOR: Final = 2.0
RECONNECT_BACKOFF_MAX: Final = 2.0
"""Cap on the wait between reconnect attempts: a replugged reader is back within
this plus one handshake (well under the 5 s the table needs)."""

HANDSHAKE_RETRY_PERIOD: Final = 0.5
"""Seconds between IDENTIFY requests while waiting for a HELLO."""

WRONG_READER_RETRY_PERIOD: Final = 2.0
"""Seconds between IDENTIFY requests to a reader that answered with the wrong id."""

STALE_AFTER_PERIODS: Final = 1.5
"""Heartbeat periods of silence before ONLINE becomes STALE. With the read timeout
added this stays under the required two periods."""

DEFAULT_HEARTBEAT_PERIOD: Final = 1.0

GAP_INVENTORY_MIN_INTERVAL: Final = 0.25
"""Seconds between inventories requested for sequence gaps: one per burst of loss."""

NO_HELLO_AFTER: Final = 3.0
"""Seconds an open port may stay silent to IDENTIFY (six requests) before the link
says why nothing arrives (:attr:`LinkProblem.NO_HELLO`). A reader answers within
one request; a reader still booting within a second or two."""


class LinkProblem(Enum):
    """Why a reader link is not delivering messages (see :attr:`LinkStats.problem`)."""

    PORT_MISSING = "port_missing"
    """The device does not exist: reader unplugged, wrong path in the layout."""
    PERMISSION_DENIED = "permission_denied"
    """The device exists but this user may not open it (e.g. not in ``dialout``)."""
    PORT_BUSY = "port_busy"
    """Another process holds the port (a stray terminal program, a second daemon)."""
    OPEN_FAILED = "open_failed"
    """The port could not be opened for another reason (see the detail)."""
    PORT_LOST = "port_lost"
    """The open port failed (unplugged, I/O error)."""
    NO_HELLO = "no_hello"
    """The port opens but nothing answers IDENTIFY with a HELLO."""
    WRONG_READER = "wrong_reader"
    """A reader with another id answered on this port."""
    INCOMPATIBLE = "incompatible"
    """The device only sends frames of another protocol version."""
    SILENT = "silent"
    """The reader was online and stopped sending (no heartbeat)."""


_PROBLEM_HINTS: Final = {
    LinkProblem.PORT_MISSING: "is the reader plugged in, and is the layout's device path right?",
    LinkProblem.PERMISSION_DENIED: "give the daemon's user access to the port"
    " (e.g. the dialout group)",
    LinkProblem.PORT_BUSY: "another program has the port open; close it",
    LinkProblem.OPEN_FAILED: "see the detail",
    LinkProblem.PORT_LOST: "unplugged or failing cable; retrying",
    LinkProblem.NO_HELLO: "the device on this port does not speak the reader protocol"
    " (another device, or a reader not running its firmware)",
    LinkProblem.WRONG_READER: "a reader plugged into the wrong USB port; its tags are ignored",
    LinkProblem.INCOMPATIBLE: "reader firmware with another protocol version",
    LinkProblem.SILENT: "the reader stopped sending heartbeats; probing it",
}
"""What to do about each problem: one clause for the log line."""


def problem_hint(problem: LinkProblem) -> str:
    """What to do about ``problem``: one clause for a person (log line, terminal view)."""
    return _PROBLEM_HINTS[problem]


def open_problem(exc: BaseException) -> LinkProblem:
    """The :class:`LinkProblem` of a failed port open (pyserial keeps the OS ``errno``)."""
    code = getattr(exc, "errno", None)
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        return LinkProblem.PORT_MISSING
    if code in (errno.EACCES, errno.EPERM):
        return LinkProblem.PERMISSION_DENIED
    if code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK):
        return LinkProblem.PORT_BUSY
    return LinkProblem.OPEN_FAILED


class ConnectionState(Enum):
    """Where a reader link is in its lifecycle (published by higher layers)."""

    DISCONNECTED = "disconnected"
    """Port not open (unplugged, missing, or lost); retrying with backoff."""
    CONNECTING = "connecting"
    """Opening the port."""
    HANDSHAKE = "handshake"
    """Port open, IDENTIFY sent, waiting for HELLO."""
    ONLINE = "online"
    """The expected reader answered; messages are delivered."""
    STALE = "stale"
    """Port open but the reader has been silent too long; probing it."""
    WRONG_READER = "wrong_reader"
    """A reader with another id is on this port; nothing is delivered."""
    INCOMPATIBLE = "incompatible"
    """The reader only sends frames of another protocol version."""
    STOPPED = "stopped"
    """stop() was called."""


@dataclass(frozen=True, slots=True)
class LinkStats:
    """Counters of one link since it was created (decoder counters summed over
    connections) plus the link's own."""

    frames_ok: int = 0
    crc_errors: int = 0
    framing_errors: int = 0
    oversized: int = 0
    truncated: int = 0
    unknown_type: int = 0
    unsupported_version: int = 0
    malformed: int = 0
    frames_missed: int = 0
    sequence_resets: int = 0
    bytes_received: int = 0
    frames_discarded: int = 0
    """Good frames not delivered: before the handshake or from a wrong reader."""
    bad_antenna: int = 0
    """Tag messages for an antenna beyond the count the reader announced."""
    connects: int = 0
    """Times the port was opened."""
    disconnects: int = 0
    """Times an open port failed (unplug, I/O error)."""
    reconnects: int = 0
    """Times the link came ONLINE again after having been ONLINE before."""
    gap_inventories: int = 0
    """Full inventories requested because frames went missing (sequence gaps)."""
    last_heartbeat: float | None = None
    """``time.monotonic()`` of the last HEARTBEAT from the expected reader, or ``None``."""
    last_frame: float | None = None
    """``time.monotonic()`` of the last good frame, or ``None``."""
    hello: Hello | None = None
    """The last HELLO from the expected reader."""
    state_since: float | None = None
    """``time.monotonic()`` when the current state was entered."""
    problem: LinkProblem | None = None
    """Why the link is not delivering, once known; ``None`` while ONLINE (and
    before the first attempt has failed)."""
    problem_detail: str = ""
    """One line about :attr:`problem` (the OS error, the id that answered, ...)."""

    @property
    def errors(self) -> int:
        """All corrupt or rejected frames, whatever the kind."""
        return (
            self.crc_errors
            + self.framing_errors
            + self.oversized
            + self.truncated
            + self.unknown_type
            + self.unsupported_version
            + self.malformed
        )


MessageCallback = Callable[[int, ReaderMessage, float], None]
"""``on_message(reader_id, message, monotonic_time)``."""

StateCallback = Callable[[int, ConnectionState, LinkStats], None]
"""``on_state(reader_id, state, stats)``, on a change of state or of ``stats.problem``;
``stats.state_since`` is the monotonic time the state was entered."""

_DELIVERING: Final = (ConnectionState.ONLINE, ConnectionState.STALE)

_DECODER_COUNTERS: Final = tuple(field.name for field in fields(DecoderStats))
"""The decoder's counters, named once. ``dataclasses.asdict`` (and ``fields``)
build this tuple anew on every call by resizing a 10-slot tuple, which leaves
one tuple on CPython's free list of 11-slot tuples per call; only a full
garbage collection empties it, and a long-running daemon hardly ever runs one:
:attr:`ReaderLink.stats` (every reader status refresh) grew the daemon's memory
by one 112-byte block a call (issue 9 item 26)."""


class PortGoneError(Exception):
    """The port failed mid-session (wraps SerialException / OSError)."""


class SupervisedLink:
    """What every reader link does around its own protocol (:class:`ReaderLink`,
    ``feig.link.FeigReaderLink``): one thread that opens the port, runs a session on
    it and reconnects with backoff; the state and the problem, logged and reported to
    ``on_state`` once per change; start and stop. A subclass gives :meth:`_session`
    (raising :class:`PortGoneError` when the port fails) and :attr:`THREAD_NAME`."""

    THREAD_NAME: str = "reader-link"
    """The link thread's name, before ``-<reader id>``."""
    PORT_READ_TIMEOUT: float = READ_TIMEOUT
    """Seconds a read of the port may block."""

    def __init__(self, url: str, expected_reader_id: int, on_message: MessageCallback,
                 on_state: StateCallback, *, heartbeat_period: float,
                 logger: structlog.typing.FilteringBoundLogger) -> None:
        """The link's fields; nothing is opened before :meth:`start`."""
        self.url = url
        self.reader_id = expected_reader_id
        self.heartbeat_period = heartbeat_period
        self._on_message = on_message
        self._on_state = on_state
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._state = ConnectionState.DISCONNECTED
        self._state_since: float | None = None
        self._last_heartbeat: float | None = None
        self._last_frame: float | None = None
        self._hello: Hello | None = None
        self._problem: LinkProblem | None = None
        self._problem_detail = ""
        self._been_online = False
        self._counts: dict[str, int] = {"connects": 0, "disconnects": 0, "reconnects": 0}
        self._log = logger

    @property
    def state(self) -> ConnectionState:
        """The current lifecycle state."""
        return self._state

    @property
    def stats(self) -> LinkStats:
        """A consistent snapshot of the counters (the subclass's)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the link's I/O thread."""
        if self._thread is not None:
            raise RuntimeError("link already started")
        self._thread = threading.Thread(
            target=self._run, name=f"{self.THREAD_NAME}-{self.reader_id}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and close the port (state becomes STOPPED)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _session(self, port: serial.SerialBase) -> bool:
        """Talk to an open port until it fails or stop(); True if it reached ONLINE."""
        raise NotImplementedError

    def _path_moved(self, port: serial.SerialBase) -> bool:
        """Whether the device path now leads to another device than the one open (or
        to none): then the session should end and the link reopen the path.

        Why: a link that reopens the path while the reader is away can open whatever
        got the old device name meanwhile (a pts number, a ``ttyUSB`` index another
        adapter took). That device never answers, and the reader plugged in again is
        behind the path, not behind the open port: without this check the link waits
        in HANDSHAKE (or STALE) on the wrong device for ever; one that reached a
        reader of the same id there would deliver another table's cards. A URL that
        is no file path (``socket://``, ``loop://``) never moves."""
        if "://" in self.url:
            return False
        try:
            opened = os.fstat(port.fileno()).st_rdev
        except (AttributeError, OSError, ValueError, serial.SerialException):
            return False  # a port without a file descriptor: nothing to compare
        try:
            behind = os.stat(self.url).st_rdev
        except OSError:
            # Gone: a reader still sending is not left for a link udev re-creates;
            # one that does not answer is (its port fails by itself when unplugged).
            if self._state in _DELIVERING:
                return False
            behind = None
        if behind == opened:
            return False
        self._set_problem(LinkProblem.PORT_LOST,
                          "the device path now leads to another device than the one open"
                          if behind is not None else "the device path is gone")
        return True

    def _run(self) -> None:
        backoff = RECONNECT_BACKOFF_INITIAL
        # Only the first attempt shows as CONNECTING: retries stay DISCONNECTED
        # until a port opens (HANDSHAKE), so a missing reader does not flap.
        self._set_state(ConnectionState.CONNECTING, time.monotonic())
        while not self._stop.is_set():
            port = self._open()
            if port is not None:
                self._count("connects")
                went_online = False
                try:
                    went_online = self._session(port)
                except PortGoneError as exc:
                    self._count("disconnects")
                    self._set_problem(LinkProblem.PORT_LOST, str(exc.__cause__))
                finally:
                    _close_quietly(port)
                if went_online:
                    backoff = RECONNECT_BACKOFF_INITIAL
            if self._stop.is_set():
                break
            self._set_state(ConnectionState.DISCONNECTED, time.monotonic())
            self._stop.wait(backoff)
            backoff = min(backoff * RECONNECT_BACKOFF_FACTOR, RECONNECT_BACKOFF_MAX)
        self._set_state(ConnectionState.STOPPED, time.monotonic())

    def _open(self) -> serial.SerialBase | None:
        try:
            port = serial.serial_for_url(
                self.url,
                do_not_open=True,
                baudrate=BAUDRATE,
                timeout=self.PORT_READ_TIMEOUT,
                write_timeout=WRITE_TIMEOUT,
                # flock() on POSIX device ports: a second process (a stray
                # minicom, a second daemon) cannot read half our frames.
                exclusive=True,
            )
            port.open()
        except (serial.SerialException, OSError, ValueError) as exc:
            # Every retry fails the same way while the cause lasts: debug only;
            # the cause itself is logged once, when it changes.
            self._log.debug("reader_open_failed", error=str(exc))
            self._set_problem(open_problem(exc), str(exc))
            return None
        return port

    def _enter_online(self, now: float) -> None:
        """Enter ONLINE (again, unless it is already): a reconnect counted, the problem
        cleared and ``reader_online`` logged with what it was."""
        if self._state is ConnectionState.ONLINE:
            return
        if self._state is not ConnectionState.STALE and self._been_online:
            self._count("reconnects")
        self._been_online = True
        with self._lock:
            was, self._problem, self._problem_detail = self._problem, None, ""
        self._log.info("reader_online", after=was.value if was else None)
        self._set_state(ConnectionState.ONLINE, now)

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _set_state(self, state: ConnectionState, now: float) -> None:
        if state is self._state:
            return
        with self._lock:
            self._state = state
            self._state_since = now
        # Debug: what matters to a person is the problem (logged when it changes)
        # and coming back online, not every step of every retry.
        self._log.debug("reader_state", state=state.value)
        self._notify()

    def _set_problem(self, problem: LinkProblem, detail: str) -> None:
        """Record why the link is not delivering; log and notify only on a change."""
        with self._lock:
            if problem is self._problem and detail == self._problem_detail:
                return
            self._problem, self._problem_detail = problem, detail
        self._log.warning("reader_unavailable", reason=problem.value, detail=detail,
                          hint=_PROBLEM_HINTS[problem])
        self._notify()

    def _notify(self) -> None:
        stats = self.stats
        try:
            self._on_state(self.reader_id, self._state, stats)
        except Exception:
            self._log.exception("on_state_callback_failed")


class ReaderLink(SupervisedLink):
    """The supervised serial connection to the reader ``expected_reader_id`` at ``url``.

    ``url`` is anything ``serial.serial_for_url`` takes: a device path (best a
    ``/dev/serial/by-id/...`` link, which names the USB port), ``/dev/pts/N``,
    ``socket://host:port`` or ``loop://``.
    """

    def __init__(
        self,
        url: str,
        expected_reader_id: int,
        on_message: MessageCallback,
        on_state: StateCallback,
        heartbeat_period: float = DEFAULT_HEARTBEAT_PERIOD,
    ) -> None:
        super().__init__(url, expected_reader_id, on_message, on_state,
                         heartbeat_period=heartbeat_period,
                         logger=log.bind(reader_id=expected_reader_id, url=url))
        self._decoder = FrameDecoder(Direction.READER_TO_HOST)
        self._encoder = FrameEncoder()
        self._outgoing: deque[HostMessage] = deque()
        self._counts.update(frames_discarded=0, bad_antenna=0, gap_inventories=0)
        self._missed_seen = 0
        self._last_gap_request = -GAP_INVENTORY_MIN_INTERVAL

    # -- public API --------------------------------------------------------------

    @property
    def stats(self) -> LinkStats:
        """A consistent snapshot of the counters."""
        with self._lock:
            decoder = self._decoder.stats
            return LinkStats(
                **{name: getattr(decoder, name) for name in _DECODER_COUNTERS},
                **self._counts,
                last_heartbeat=self._last_heartbeat,
                last_frame=self._last_frame,
                hello=self._hello,
                state_since=self._state_since,
                problem=self._problem,
                problem_detail=self._problem_detail,
            )

    def request_inventory(self, antenna: int | None = None) -> None:
        """Ask the reader for INVENTORY of ``antenna`` (or all); sent if connected."""
        with self._lock:
            self._outgoing.append(RequestInventory(antenna))

    # -- the thread ------------------------------------------------------------------

    def _session(self, port: serial.SerialBase) -> bool:
        """Talk to an open port until it fails or stop(); True if it reached ONLINE."""
        with self._lock:
            self._decoder.reset_stream()
            self._outgoing.clear()  # requests made while disconnected are moot
        versions_before = self._decoder.stats.unsupported_version
        now = time.monotonic()
        self._set_state(ConnectionState.HANDSHAKE, now)
        self._send(port, Identify())
        opened = now
        last_probe = now
        last_frame = now
        last_path_check = now
        went_online = False
        while not self._stop.is_set():
            if self._state in _DELIVERING:
                self._flush_outgoing(port)
            try:
                # Block up to READ_TIMEOUT for one byte, then take whatever else is there.
                data = port.read(1)
                if data:
                    data += port.read_all() or b""
            except (serial.SerialException, OSError) as exc:
                raise PortGoneError from exc
            now = time.monotonic()  # the edge: right after the frame's last byte arrived
            if data:
                with self._lock:
                    received = self._decoder.feed(data)
                for item in received:
                    last_frame = now
                    self._on_frame(port, item, now)
                    went_online = went_online or self._state is ConnectionState.ONLINE
            if now - last_path_check >= HANDSHAKE_RETRY_PERIOD:
                last_path_check = now
                if self._path_moved(port):
                    break  # the reader is behind the path again, not behind this port
            # Supervision: probe a silent or not-yet-identified reader periodically.
            state = self._state
            if state is ConnectionState.ONLINE:
                if now - last_frame > STALE_AFTER_PERIODS * self.heartbeat_period:
                    self._set_state(ConnectionState.STALE, now)
                    self._set_problem(LinkProblem.SILENT,
                                      f"no frame for {now - last_frame:.1f} s")
                    self._send(port, Identify())
                    last_probe = now
                continue
            if (
                state is ConnectionState.HANDSHAKE
                and self._decoder.stats.unsupported_version > versions_before
            ):
                self._set_problem(LinkProblem.INCOMPATIBLE,
                                  "only frames of another protocol version arrive")
                self._set_state(ConnectionState.INCOMPATIBLE, now)
            elif (
                state is ConnectionState.HANDSHAKE
                and now - opened >= NO_HELLO_AFTER
                and self._problem is not LinkProblem.NO_HELLO
            ):
                self._set_problem(
                    LinkProblem.NO_HELLO,
                    f"port open, no HELLO in {now - opened:.0f} s of IDENTIFY requests",
                )
            probe_period = {
                ConnectionState.WRONG_READER: WRONG_READER_RETRY_PERIOD,
                ConnectionState.STALE: self.heartbeat_period,
            }.get(self._state, HANDSHAKE_RETRY_PERIOD)
            if now - last_probe >= probe_period:
                self._send(port, Identify())
                last_probe = now
        return went_online

    def _on_frame(self, port: serial.SerialBase, item: Received, now: float) -> None:
        message = item.message
        with self._lock:
            self._last_frame = now
        if isinstance(message, Hello):
            if message.reader_id != self.reader_id:
                # Said once (the problem), not on every HELLO the retries bring.
                self._count("frames_discarded")
                self._set_problem(
                    LinkProblem.WRONG_READER,
                    f"reader {message.reader_id} answered, {self.reader_id} expected",
                )
                self._set_state(ConnectionState.WRONG_READER, now)
                return
            with self._lock:
                self._hello = message
            if self._state is not ConnectionState.ONLINE or item.seq == 0:
                # Entering ONLINE, or the reader rebooted (it numbers from 0 at boot);
                # a HELLO answering our own IDENTIFY probe needs no new inventory.
                self._go_online(port, now)
            self._deliver(message, now)
            return
        state = self._state
        if state is ConnectionState.STALE:
            self._go_online(port, now)
        elif state is not ConnectionState.ONLINE:
            self._count("frames_discarded")
            return
        else:
            self._reconcile_after_gap(port, now)
        if isinstance(message, Heartbeat):
            # Only the expected reader's: a wrong reader's heartbeats (discarded
            # above) would show as this reader's and move its retained topic.
            with self._lock:
                self._last_heartbeat = now
        if isinstance(message, TagArrived | TagLeft | Inventory) or (
            isinstance(message, ReaderFault) and message.antenna is not None
        ):
            antenna = message.antenna
            hello = self._hello
            if antenna is not None and hello is not None and antenna >= hello.antenna_count:
                self._count("bad_antenna")
                return
        if isinstance(message, Hello | TagArrived | TagLeft | Inventory | Heartbeat | ReaderFault):
            self._deliver(message, now)

    def _reconcile_after_gap(self, port: serial.SerialBase, now: float) -> None:
        """Frames went missing (a sequence gap): ask for a full inventory at once
        rather than wait for the periodic one, so a lost TAG_ARRIVED or TAG_LEFT
        costs one round trip. Rate-limited: a noisy wire must not flood the reader."""
        missed = self._decoder.stats.frames_missed
        if missed <= self._missed_seen:
            return
        self._missed_seen = missed
        if now - self._last_gap_request >= GAP_INVENTORY_MIN_INTERVAL:
            self._last_gap_request = now
            self._count("gap_inventories")
            self._send(port, RequestInventory(None))

    def _go_online(self, port: serial.SerialBase, now: float) -> None:
        """Enter ONLINE (again) and ask for a full inventory to reconcile."""
        with self._lock:
            self._outgoing.clear()
        self._send(port, RequestInventory(None))
        self._enter_online(now)

    def _deliver(self, message: ReaderMessage, now: float) -> None:
        try:
            self._on_message(self.reader_id, message, now)
        except Exception:
            self._log.exception("on_message_callback_failed")

    def _flush_outgoing(self, port: serial.SerialBase) -> None:
        while True:
            with self._lock:
                if not self._outgoing:
                    return
                message = self._outgoing.popleft()
            self._send(port, message)

    def _send(self, port: serial.SerialBase, message: HostMessage) -> None:
        with self._lock:
            data = self._encoder.encode(message)
        try:
            port.write(data)
        except (serial.SerialException, OSError) as exc:
            raise PortGoneError from exc


def _close_quietly(port: serial.SerialBase) -> None:
    # The device may already be gone; there is nothing left to release then.
    with contextlib.suppress(serial.SerialException, OSError):
        port.close()
