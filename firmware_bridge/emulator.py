"""A software reader: the firmware's behaviour, a noisy wire, and a pseudo-terminal.

Three layers, each usable alone:

* :class:`FirmwareModel` (pure): tags placed on antennas, one scan cycle at a time
  with a per-tag dropout probability (stacked cards) or, when given one, what an RF
  channel (:mod:`firmware_bridge.rf_channel`) says each antenna reads, the messages the firmware
  sends (TAG_ARRIVED / TAG_LEFT on change, INVENTORY, HEARTBEAT, HELLO) and its
  answers to host commands. No clock, no I/O: the caller says when a cycle happens.
* :class:`NoiseChannel` (pure): byte errors, random insertions and deletions, and
  whole dropped frames, applied to wire bytes. With :class:`FrameEncoder` and
  :func:`sample_traffic` it is the in-memory mode used by the noise test and the
  benchmark.
* :class:`ReaderEmulator`: the model driven by its own thread on a pseudo-terminal,
  with a stable symlink ``<dir>/reader-<id>`` (like ``/dev/serial/by-id``) that the
  host opens through pyserial exactly as it opens a real reader. ``unplug()`` closes
  the pty (the host gets EIO, the symlink dangles); ``replug()`` makes a new pty,
  re-points the symlink and boots again (HELLO, sequence from 0).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import select
import threading
import time
import tty
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

from firmware_bridge.decoder import FrameDecoder
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.frames import PROTOCOL_VERSION
from firmware_bridge.messages import (
    MAX_ANTENNAS,
    MAX_INVENTORY_TAGS,
    MAX_RSSI_DBM,
    MIN_RSSI_DBM,
    U32_MAX,
    Direction,
    FaultCode,
    Heartbeat,
    Hello,
    HostMessage,
    Identify,
    Inventory,
    Message,
    ReaderFault,
    ReaderMessage,
    RequestInventory,
    TagArrived,
    TagLeft,
    normalize_uid,
)

DEFAULT_SCAN_PERIOD: Final = 0.15
"""Seconds per scan cycle (all antennas in turn); real boards take ~100-250 ms."""

DEFAULT_HEARTBEAT_PERIOD: Final = 1.0
DEFAULT_INVENTORY_PERIOD: Final = 2.0
"""Seconds between full inventories of every antenna (lets the host reconcile)."""

_READ_CHUNK: Final = 4096

ChannelReads = Callable[[int, float], Sequence[str | tuple[str, float]]]
"""(antenna, scan time) -> the UIDs that antenna reads in that scan (an RF channel),
each alone or with the read's strength in dBm, which the firmware then reports."""


class FirmwareModel:
    """What the reader firmware reports, as a pure state machine (see module doc).

    ``leave_after_misses`` is the firmware's own debounce: a reported tag is declared
    gone after that many consecutive scans without it. The default, 1, reports every
    dropout, the worst case the host must cope with.

    ``reads``, if set, replaces the placed tags and the dropout: called per antenna
    per scan with the scan's time, it returns the UIDs that antenna reads (the RF
    channel's view, which includes cross-reads of tags lying on other antennas and
    leaves out tags it does not read). A read that comes with a strength is reported
    with it (TAG_ARRIVED and INVENTORY carry the RSSI byte, docs/protocol.md), as a
    front end that measures one does.
    """

    def __init__(
        self,
        reader_id: int,
        *,
        antenna_count: int = 8,
        firmware_version: tuple[int, int, int] = (1, 0, 0),
        dropout_probability: float = 0.0,
        leave_after_misses: int = 1,
        rng: random.Random | None = None,
        reads: ChannelReads | None = None,
    ) -> None:
        if not 1 <= antenna_count <= MAX_ANTENNAS:
            raise ValueError(f"antenna count {antenna_count} outside 1..{MAX_ANTENNAS}")
        if leave_after_misses < 1:
            raise ValueError("leave_after_misses must be at least 1")
        self.hello_message = Hello(reader_id, firmware_version, antenna_count)
        self.dropout_probability = dropout_probability
        self.leave_after_misses = leave_after_misses
        self.rng = rng if rng is not None else random.Random()
        self.reads = reads
        # dicts, not sets: insertion order keeps inventories stable and readable.
        self._placed: list[dict[str, None]] = [{} for _ in range(antenna_count)]
        self._reported: list[dict[str, None]] = [{} for _ in range(antenna_count)]
        # The strength (dBm, on the wire's scale) of each reported tag's last read.
        self._rssi: list[dict[str, int]] = [{} for _ in range(antenna_count)]
        self._misses: dict[tuple[int, str], int] = {}
        self.scan_cycles = 0

    @property
    def antenna_count(self) -> int:
        """Number of antenna ports on this reader."""
        return self.hello_message.antenna_count

    def boot(self) -> None:
        """Power-on: nothing reported yet, scan counter from zero (tags stay on the table)."""
        for reported in self._reported:
            reported.clear()
        for strengths in self._rssi:
            strengths.clear()
        self._misses.clear()
        self.scan_cycles = 0

    def place(self, antenna: int, uid: str | bytes) -> str:
        """Put a tag on ``antenna``; returns its normalised UID."""
        self._check_antenna(antenna)
        normal = normalize_uid(uid)
        self._placed[antenna][normal] = None
        return normal

    def remove(self, antenna: int, uid: str | bytes) -> None:
        """Take a tag off ``antenna`` (no error if it was not there)."""
        self._check_antenna(antenna)
        self._placed[antenna].pop(normalize_uid(uid), None)

    def placed(self, antenna: int) -> tuple[str, ...]:
        """Tags physically on ``antenna``."""
        return tuple(self._placed[antenna])

    def reported(self, antenna: int) -> tuple[str, ...]:
        """Tags the firmware currently reports on ``antenna``."""
        return tuple(self._reported[antenna])

    def scan(self, now: float = 0.0) -> list[ReaderMessage]:
        """Run one scan cycle over every antenna (at time ``now``, which only an RF
        channel reads); return the arrivals and departures."""
        self.scan_cycles = (self.scan_cycles + 1) & U32_MAX
        out: list[ReaderMessage] = []
        dropout = self.dropout_probability
        reads = self.reads
        for antenna, placed in enumerate(self._placed):
            strengths = self._rssi[antenna]
            if reads is not None:
                seen = []
                for read in reads(antenna, now):
                    if isinstance(read, str):
                        seen.append(read)
                    else:
                        seen.append(read[0])
                        strengths[read[0]] = wire_rssi(read[1])
                seen = list(dict.fromkeys(seen))
            elif dropout > 0.0:
                seen = [uid for uid in placed if self.rng.random() >= dropout]
            else:
                seen = list(placed)
            reported = self._reported[antenna]
            for uid in seen:
                self._misses.pop((antenna, uid), None)
                if uid not in reported and len(reported) < MAX_INVENTORY_TAGS:
                    reported[uid] = None
                    out.append(TagArrived(antenna, uid, strengths.get(uid)))
            seen_set = set(seen)
            for uid in [uid for uid in reported if uid not in seen_set]:
                misses = self._misses.get((antenna, uid), 0) + 1
                if misses >= self.leave_after_misses:
                    del reported[uid]
                    strengths.pop(uid, None)
                    self._misses.pop((antenna, uid), None)
                    out.append(TagLeft(antenna, uid))
                else:
                    self._misses[(antenna, uid)] = misses
        return out

    def inventory(self, antenna: int) -> Inventory:
        """The INVENTORY message for one antenna (the reported tags)."""
        self._check_antenna(antenna)
        uids = tuple(self._reported[antenna])
        strengths = self._rssi[antenna]
        # The strength block only from a front end that measured some (old readers
        # send the inventory as before).
        rssi = tuple(strengths.get(uid) for uid in uids) if strengths else None
        return Inventory(antenna, self.scan_cycles, uids, rssi)

    def inventories(self) -> list[Inventory]:
        """INVENTORY messages for every antenna, empty ones included."""
        return [self.inventory(antenna) for antenna in range(self.antenna_count)]

    def heartbeat(self, uptime_ms: int) -> Heartbeat:
        """A HEARTBEAT with the given uptime (wrapped to u32)."""
        return Heartbeat(uptime_ms & U32_MAX, self.scan_cycles)

    def handle(self, command: HostMessage) -> list[ReaderMessage]:
        """The firmware's answer to a host command."""
        match command:
            case Identify():
                return [self.hello_message]
            case RequestInventory(antenna=None):
                return list(self.inventories())
            case RequestInventory(antenna=antenna) if antenna is not None:
                if antenna >= self.antenna_count:
                    return [ReaderFault(FaultCode.ANTENNA_OPEN, antenna, "no such antenna")]
                return [self.inventory(antenna)]
        return []

    def _check_antenna(self, antenna: int) -> None:
        if not 0 <= antenna < self.antenna_count:
            raise ValueError(f"antenna {antenna} outside 0..{self.antenna_count - 1}")


class NoiseChannel:
    """Corrupts wire bytes: byte errors, insertions, deletions, and dropped frames.

    Events are a Bernoulli process over the byte stream (the gap to the next event
    is drawn geometrically, so a clean channel costs nothing per byte); the rates are
    per byte and may be changed at any time. ``rng`` makes runs reproducible.
    """

    def __init__(
        self,
        *,
        byte_error_rate: float = 0.0,
        insert_rate: float = 0.0,
        delete_rate: float = 0.0,
        frame_drop_probability: float = 0.0,
        rng: random.Random | None = None,
    ) -> None:
        self.byte_error_rate = byte_error_rate
        self.insert_rate = insert_rate
        self.delete_rate = delete_rate
        self.frame_drop_probability = frame_drop_probability
        self.rng = rng if rng is not None else random.Random()
        self._gap: int | None = None

    def drop_frame(self) -> bool:
        """Decide whether the next whole frame is lost."""
        return self.frame_drop_probability > 0.0 and self.rng.random() < self.frame_drop_probability

    def corrupt(self, data: bytes) -> bytes:
        """``data`` after the channel: some bytes flipped, inserted or deleted."""
        total = self.byte_error_rate + self.insert_rate + self.delete_rate
        if total <= 0.0:
            return data
        rng = self.rng
        out = bytearray()
        index = 0
        length = len(data)
        while True:
            if self._gap is None:
                self._gap = self._draw_gap(total)
            if index + self._gap >= length:
                self._gap -= length - index
                out += data[index:]
                return bytes(out)
            position = index + self._gap
            out += data[index:position]
            self._gap = None
            kind = rng.random() * total
            if kind < self.byte_error_rate:
                out.append(data[position] ^ rng.randrange(1, 256))
                index = position + 1
            elif kind < self.byte_error_rate + self.insert_rate:
                out.append(rng.randrange(256))
                index = position
            else:
                index = position + 1

    def _draw_gap(self, rate: float) -> int:
        if rate >= 1.0:
            return 0
        return int(math.log(1.0 - self.rng.random()) / math.log(1.0 - rate))


def wire_rssi(dbm: float) -> int:
    """A strength in dBm as the wire carries it: whole dB, within the byte's range."""
    return max(MIN_RSSI_DBM, min(MAX_RSSI_DBM, round(dbm)))


def random_uid(rng: random.Random) -> str:
    """A random UID of a real length: 4, 7 or 10 bytes (ISO 14443A) or 8 (ISO 15693)."""
    length = rng.choice((4, 7, 7, 8, 8, 10))
    return rng.randbytes(length).hex().upper()


def sample_traffic(
    rng: random.Random, count: int, *, antenna_count: int = 8
) -> list[ReaderMessage]:
    """A realistic reader-to-host message mix for tests and benchmarks.

    Mostly tag arrivals and departures (cards dealt, stacked-card dropouts), about one
    in eight an INVENTORY of a few tags, heartbeats, and rare HELLO / READER_FAULT.
    """
    messages: list[ReaderMessage] = []
    for scan in range(1, count + 1):
        roll = rng.random()
        antenna = rng.randrange(antenna_count)
        message: ReaderMessage
        if roll < 0.38:
            message = TagArrived(antenna, random_uid(rng))
        elif roll < 0.76:
            message = TagLeft(antenna, random_uid(rng))
        elif roll < 0.89:
            tags = tuple(random_uid(rng) for _ in range(rng.randrange(7)))
            message = Inventory(antenna, scan, tags)
        elif roll < 0.98:
            message = Heartbeat(scan * 150, scan)
        elif roll < 0.99:
            message = Hello(rng.randrange(1, 0x10000), (1, rng.randrange(10), 0), antenna_count)
        else:
            message = ReaderFault(FaultCode.ANTENNA_OPEN, antenna, "antenna open circuit")
        messages.append(message)
    return messages


class ReaderEmulator:
    """A reader on a pseudo-terminal, reachable at the symlink :attr:`path`.

    Call :meth:`start` (or use it as a context manager); tags are placed with
    :meth:`place` / :meth:`remove` from any thread. Timing: a scan cycle every
    ``scan_period`` seconds, HEARTBEAT every ``heartbeat_period``, INVENTORY of every
    antenna every ``inventory_period``. Noise settings live on :attr:`noise`.
    """

    def __init__(
        self,
        link_dir: str | os.PathLike[str],
        reader_id: int,
        *,
        antenna_count: int = 8,
        firmware_version: tuple[int, int, int] = (1, 0, 0),
        scan_period: float = DEFAULT_SCAN_PERIOD,
        heartbeat_period: float = DEFAULT_HEARTBEAT_PERIOD,
        inventory_period: float = DEFAULT_INVENTORY_PERIOD,
        dropout_probability: float = 0.0,
        leave_after_misses: int = 1,
        protocol_version: int = PROTOCOL_VERSION,
        noise: NoiseChannel | None = None,
        seed: int | None = None,
    ) -> None:
        rng = random.Random(seed)
        self.model = FirmwareModel(
            reader_id,
            antenna_count=antenna_count,
            firmware_version=firmware_version,
            dropout_probability=dropout_probability,
            leave_after_misses=leave_after_misses,
            rng=rng,
        )
        self.path = Path(link_dir) / f"reader-{reader_id}"
        self.scan_period = scan_period
        self.heartbeat_period = heartbeat_period
        self.inventory_period = inventory_period
        self.noise = noise if noise is not None else NoiseChannel(rng=random.Random(rng.random()))
        self._encoder = FrameEncoder(protocol_version=protocol_version)
        self._commands = FrameDecoder(Direction.HOST_TO_READER)
        self._lock = threading.RLock()
        self._master: int | None = None
        self._slave: int | None = None
        self._generation = 0
        self._pty_name = ""
        self._boot_time = time.monotonic()
        self._silent = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.commands_received: list[HostMessage] = []
        """Every host command decoded, in order (tests check the host's requests)."""
        self.frames_sent = 0
        self.frames_dropped = 0
        """Frames lost on purpose (noise), unplugged, or because the pty buffer was full."""
        self.on_frame_written: Callable[[Message, float], None] | None = None
        """Off (None) by default. If set, called on the emulator's thread (under its
        lock: keep it short) after each frame is written whole to the pty, with the
        message and the ``time.time()`` taken just before the ``os.write`` call that
        wrote it. Taken before, not after: ``os.write`` releases the GIL, and getting
        it back can take a switch interval (5 ms) in a busy process, while the
        write itself takes microseconds. The latency benchmark starts its clock
        there; wall time, so another process (a subscriber) can stop it."""

    # -- lifecycle ---------------------------------------------------------------

    @property
    def reader_id(self) -> int:
        """The id this reader announces in HELLO."""
        return self.model.hello_message.reader_id

    @property
    def pty_name(self) -> str:
        """The current slave device (``/dev/pts/N``), or ``""`` while unplugged."""
        return self._pty_name

    @property
    def plugged(self) -> bool:
        """True while the pty exists."""
        return self._master is not None

    def start(self) -> ReaderEmulator:
        """Plug in and start the firmware thread."""
        self.replug()
        self._thread = threading.Thread(
            target=self._run, name=f"reader-emulator-{self.reader_id}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread, close the pty and remove the symlink (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self.unplug()
        self.path.unlink(missing_ok=True)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> ReaderEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def unplug(self) -> None:
        """Pull the USB cable: close the pty (host reads fail with EIO); symlink dangles."""
        with self._lock:
            for fd in (self._master, self._slave):
                if fd is not None:
                    os.close(fd)
            self._master = None
            self._slave = None
            self._pty_name = ""
            self._generation += 1
        self._wake()

    def replug(self) -> None:
        """Plug in again: new pty, symlink re-pointed, firmware boots and says HELLO."""
        with self._lock:
            if self._master is not None:
                self.unplug()
            master, slave = os.openpty()
            # Raw mode before anyone opens the slave: with the default cooked mode the
            # line discipline would echo our own frames back to us and mangle bytes.
            tty.setraw(slave)
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            self._generation += 1
            self._pty_name = os.ttyname(slave)
            temporary = self.path.with_name(f".{self.path.name}.tmp")
            temporary.unlink(missing_ok=True)
            os.symlink(self._pty_name, temporary)
            os.replace(temporary, self.path)  # atomic: the path never goes missing
            self._boot_time = time.monotonic()
            self._encoder.reset()
            self._commands.reset_stream()
            self.model.boot()
            self._send_locked([self.model.hello_message])
        self._wake()

    # -- the table ------------------------------------------------------------------

    def place(self, antenna: int, uid: str | bytes) -> str:
        """Put a tag on ``antenna``; it is reported at the next scan cycle."""
        with self._lock:
            return self.model.place(antenna, uid)

    def remove(self, antenna: int, uid: str | bytes) -> None:
        """Take a tag off ``antenna``."""
        with self._lock:
            self.model.remove(antenna, uid)

    def set_silent(self, silent: bool) -> None:
        """Freeze the firmware (no scans, no frames, commands unread): a hung reader."""
        with self._lock:
            self._silent = silent
        self._wake()

    # -- raw output for tests ---------------------------------------------------------

    def send(self, messages: Iterable[Message]) -> None:
        """Encode and send messages now (through the noise channel)."""
        with self._lock:
            self._send_locked(list(messages))

    def send_fault(self, code: int, antenna: int | None, text: str) -> None:
        """Report a READER_FAULT now."""
        self.send([ReaderFault(code, antenna, text)])

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the wire exactly as given (garbage, hand-made frames)."""
        with self._lock:
            self._write_locked(data)

    def set_protocol_version(self, version: int) -> None:
        """Write this version into the header of every later frame."""
        with self._lock:
            self._encoder.protocol_version = version

    # -- internals ------------------------------------------------------------------------

    def _wake(self) -> None:
        if self._closed and self._thread is None:
            return  # the wake pipe is closed (or closing): its fd numbers may be reused
        # A full pipe means the thread is already being woken.
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _send_locked(self, messages: Sequence[Message]) -> None:
        for message in messages:
            frame = self._encoder.encode(message)
            if self._master is None or self.noise.drop_frame():
                self.frames_dropped += 1
                continue
            data = self.noise.corrupt(frame)
            written_at = time.time()
            if self._write_locked(data):
                self.frames_sent += 1
                if self.on_frame_written is not None:
                    self.on_frame_written(message, written_at)
            else:
                self.frames_dropped += 1

    def _write_locked(self, data: bytes) -> bool:
        if self._master is None:
            return False
        try:
            written = os.write(self._master, data)
        except BlockingIOError:
            return False  # nobody reading and the pty buffer is full: firmware drops
        except OSError:
            return False
        return written == len(data)

    def _run(self) -> None:
        now = time.monotonic()
        next_scan = now + self.scan_period
        next_heartbeat = now + self.heartbeat_period
        next_inventory = now + self.inventory_period
        while not self._stop.is_set():
            timeout = max(0.0, min(next_scan, next_heartbeat, next_inventory) - time.monotonic())
            with self._lock:
                master = None if self._silent else self._master
                generation = self._generation
            watch = [self._wake_r] if master is None else [self._wake_r, master]
            try:
                readable, _, _ = select.select(watch, [], [], timeout)
            except (OSError, ValueError):
                # unplug() closed the master while we were about to wait on it.
                continue
            if self._wake_r in readable:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, _READ_CHUNK)
            if master is not None and master in readable:
                self._read_commands(generation)
            now = time.monotonic()
            with self._lock:
                if self._master is None or self._silent:
                    # Unpowered or hung: time passes without scanning.
                    next_scan, next_heartbeat, next_inventory = (
                        max(next_scan, now),
                        max(next_heartbeat, now),
                        max(next_inventory, now),
                    )
                    continue
                if now >= next_scan:
                    next_scan = max(next_scan + self.scan_period, now)
                    self._send_locked(self.model.scan(now))
                if now >= next_heartbeat:
                    next_heartbeat = max(next_heartbeat + self.heartbeat_period, now)
                    uptime_ms = int((now - self._boot_time) * 1000)
                    self._send_locked([self.model.heartbeat(uptime_ms)])
                if now >= next_inventory:
                    next_inventory = max(next_inventory + self.inventory_period, now)
                    self._send_locked(list(self.model.inventories()))

    def _read_commands(self, generation: int) -> None:
        with self._lock:
            # The pty may have been unplugged/replugged since select(): the fd number
            # could now belong to a new pty, so read only if it is still the same one.
            if generation != self._generation or self._master is None:
                return
            try:
                data = os.read(self._master, _READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            for received in self._commands.feed(data):
                command = received.message
                if isinstance(command, Identify | RequestInventory):
                    self.commands_received.append(command)
                    self._send_locked(self.model.handle(command))
