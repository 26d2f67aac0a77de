"""The reader's main loop: HELLO, scan cycles, heartbeat, inventories, host commands.

Theory of operation
-------------------
:meth:`Reader.boot` numbers frames from 0 and says HELLO (docs/protocol.md 4).
Each :meth:`Reader.step` then

1. reads what the host sent and answers it: IDENTIFY -> HELLO, REQUEST_INVENTORY
   -> INVENTORY of one antenna or all (a port the board does not have -> a
   READER_FAULT, as the emulator does);
2. runs one scan cycle: every antenna port in turn (``hal.select_port`` then
   ``hal.scan``), debounced by :class:`~stud_reader.scan.AntennaTags`, and sends
   TAG_ARRIVED / TAG_LEFT for the changes; host commands are polled between ports
   so that an answer never waits a whole cycle;
3. sends HEARTBEAT every ``heartbeat_ms`` and the INVENTORY of every antenna every
   ``inventory_ms`` (the host's reconciliation point after lost frames).

Sequence gaps. The host reconciles gaps in *our* numbering by asking for an
inventory (its link does that at once). The reader does the same for the host's
numbering: a gap in the host's frames means a command was lost, perhaps a
REQUEST_INVENTORY, so the reader sends every antenna's INVENTORY unasked. IDENTIFY
starts a new count (the host's link numbers from 0 after it reopens the port).

Nothing lost silently. A short write to the USB port (the host not reading, its
buffer full) loses frames; the reader notes it and, once a write goes through whole
again, ends that step with READER_FAULT 0x04 (events lost) and every antenna's
INVENTORY. A front end that fails on a port is reported once (0x03, with the
antenna) until that port scans again; a failed scan changes nothing (no tag is
declared gone because the chip did not answer). More than 64 tags on one antenna
is reported as 0x04 too, once until it clears.

The clock is ``hal.ticks_ms()``; all waiting is the caller's (``main.py`` runs
``step`` in a loop). Nothing here prints: stdout *is* the wire on a Pico.
"""

from stud_reader import FIRMWARE_VERSION
from stud_reader.compat import const, ticks_diff
from stud_reader.protocol import (
    ALL_ANTENNAS,
    FAULT_ANTENNA_OPEN,
    FAULT_EVENT_OVERFLOW,
    FAULT_RF_FRONTEND,
    HEARTBEAT,
    HELLO,
    IDENTIFY,
    INVENTORY,
    MAX_ANTENNAS,
    READER_FAULT,
    REQUEST_INVENTORY,
    SEQ_MODULUS,
    TAG_ARRIVED,
    TAG_LEFT,
    U32_MASK,
    FrameReader,
    FrameWriter,
    fault_payload,
    heartbeat_payload,
    hello_payload,
    inventory_payload,
    tag_payload,
)
from stud_reader.scan import AntennaTags

DEFAULT_HEARTBEAT_MS = const(1000)
DEFAULT_INVENTORY_MS = const(2000)


class Reader:
    """One reader board: ``hal`` is the hardware (see ``stud_reader.hal``)."""

    def __init__(
        self,
        hal,
        reader_id,
        antenna_count,
        *,
        arrive_scans=1,
        leave_scans=2,
        heartbeat_ms=DEFAULT_HEARTBEAT_MS,
        inventory_ms=DEFAULT_INVENTORY_MS,
        firmware_version=FIRMWARE_VERSION,
    ):
        if not 1 <= antenna_count <= MAX_ANTENNAS:
            raise ValueError("antenna_count outside 1..16")
        if not 0 <= reader_id <= 0xFFFF:
            raise ValueError("reader_id outside 0..65535")
        self.hal = hal
        self.reader_id = reader_id
        self.antenna_count = antenna_count
        self.heartbeat_ms = heartbeat_ms
        self.inventory_ms = inventory_ms
        self._hello = hello_payload(reader_id, antenna_count, firmware_version)
        self.antennas = [AntennaTags(arrive_scans, leave_scans) for _ in range(antenna_count)]
        self.writer = FrameWriter()
        self.commands = FrameReader()
        self.scan_cycles = 0
        self.uptime_ms = 0
        self.frames_sent = 0
        self.frames_lost = 0
        """Frames the port did not take whole (reported, then reconciled)."""
        self.host_frames_missed = 0
        self.inventory_requests = 0
        """REQUEST_INVENTORY commands answered (a diagnostic; the host asks after
        every (re)connect, reboot and sequence gap)."""
        self.commands_ignored = 0
        """Good host frames of a type or payload the reader does not act on."""
        self._lost_pending = False
        self._reconcile_due = False
        self._last_host_seq = None
        self._port_failed = [False] * antenna_count
        self._overfull = [False] * antenna_count
        self._last_tick = 0
        self._next_heartbeat = 0
        self._next_inventory = 0

    # ------------------------------------------------------------------ lifecycle

    def boot(self, reset_fault=None):
        """Power-on: frames from 0, HELLO; ``reset_fault`` (code, text) if the last
        reset was not a clean one (e.g. watchdog), reported right after the HELLO."""
        self.writer.reset()
        self.commands.reset()
        for antenna in self.antennas:
            antenna.clear()
        self.scan_cycles = 0
        self.uptime_ms = 0
        self._last_host_seq = None
        self._lost_pending = False
        self._reconcile_due = False
        now = self.hal.ticks_ms()
        self._last_tick = now
        self._next_heartbeat = self.heartbeat_ms
        self._next_inventory = self.inventory_ms
        self._send(HELLO, self._hello)
        if reset_fault is not None:
            self._send(READER_FAULT, fault_payload(reset_fault[0], None, reset_fault[1]))

    def step(self):
        """One pass of the main loop: commands, one scan cycle, timers."""
        self.poll_host()
        self.scan_cycle()
        self.timers()
        self.reconcile_if_lost()

    # ------------------------------------------------------------------ host side

    def poll_host(self):
        """Read and answer whatever the host sent."""
        data = self.hal.read()
        if not data:
            return
        for msg_type, seq, payload in self.commands.feed(data):
            self._track_host_seq(msg_type, seq)
            self._command(msg_type, payload)

    def _track_host_seq(self, msg_type, seq):
        last = self._last_host_seq
        self._last_host_seq = seq
        if last is None or msg_type == IDENTIFY:
            return
        gap = (seq - last - 1) % SEQ_MODULUS
        if gap == 0:
            return
        if gap < SEQ_MODULUS // 2:
            self.host_frames_missed += gap
        # A lost command may have been a REQUEST_INVENTORY: answer it unasked.
        self.send_inventories()

    def _command(self, msg_type, payload):
        if msg_type == IDENTIFY and len(payload) == 1:
            self._send(HELLO, self._hello)
        elif msg_type == REQUEST_INVENTORY and len(payload) == 1:
            antenna = payload[0]
            self.inventory_requests += 1
            if antenna == ALL_ANTENNAS:
                self.send_inventories()
            elif antenna < self.antenna_count:
                self._send_inventory(antenna)
            else:
                self._send(READER_FAULT, fault_payload(
                    FAULT_ANTENNA_OPEN, antenna if antenna < MAX_ANTENNAS else None,
                    "no such antenna"))
        else:
            # A reader-type frame echoed back, an unknown type or a bad payload: a
            # well-formed frame we do not act on. Counted, never fatal.
            self.commands_ignored += 1

    # ------------------------------------------------------------------ scanning

    def scan_cycle(self):
        """Scan every antenna port once and report the changes."""
        self.scan_cycles = (self.scan_cycles + 1) & U32_MASK
        for port in range(self.antenna_count):
            try:
                self.hal.select_port(port)
                seen = self.hal.scan()
            except Exception as exc:  # any driver failure is reported as a fault
                if not self._port_failed[port]:
                    self._port_failed[port] = True
                    self._send(READER_FAULT, fault_payload(
                        FAULT_RF_FRONTEND, port, "scan failed: " + str(exc)))
                continue  # what we cannot see has not changed
            self._port_failed[port] = False
            tags = self.antennas[port]
            arrived, left = tags.update(seen)
            for uid in arrived:
                self._send(TAG_ARRIVED, tag_payload(port, uid))
            for uid in left:
                self._send(TAG_LEFT, tag_payload(port, uid))
            if tags.withheld and not self._overfull[port]:
                self._overfull[port] = True
                self._send(READER_FAULT, fault_payload(
                    FAULT_EVENT_OVERFLOW, port, "over 64 tags: some not reported"))
            elif not tags.withheld:
                self._overfull[port] = False
            self.poll_host()

    def timers(self):
        """Advance the uptime; send the heartbeat and the periodic inventory when due."""
        now = self.hal.ticks_ms()
        elapsed = ticks_diff(now, self._last_tick)
        self._last_tick = now
        if elapsed > 0:
            self.uptime_ms += elapsed  # summed: ticks_ms itself wraps on MicroPython
        if self.uptime_ms >= self._next_heartbeat:
            self._next_heartbeat = self._due_after(self._next_heartbeat, self.heartbeat_ms)
            self._send(HEARTBEAT, heartbeat_payload(self.uptime_ms, self.scan_cycles))
        if self.uptime_ms >= self._next_inventory:
            self._next_inventory = self._due_after(self._next_inventory, self.inventory_ms)
            self.send_inventories()

    def _due_after(self, due, period):
        # After a stall, the next one is a period from now, not a burst to catch up.
        due += period
        if due <= self.uptime_ms:
            due = self.uptime_ms + period
        return due

    # ------------------------------------------------------------------ output

    def send_inventories(self):
        """INVENTORY of every antenna, empty ones included."""
        for antenna in range(self.antenna_count):
            self._send_inventory(antenna)

    def _send_inventory(self, antenna):
        self._send(INVENTORY, inventory_payload(
            antenna, self.scan_cycles, self.antennas[antenna].reported))

    def _send(self, msg_type, payload):
        data = self.writer.frame(msg_type, payload)
        try:
            written = self.hal.write(data)
        except OSError:
            written = 0
        if written is None:
            written = len(data)  # a port that does not count (blocking write)
        if written != len(data):
            self.frames_lost += 1
            self._lost_pending = True
            return
        self.frames_sent += 1
        if self._lost_pending:
            # The port takes frames again: reconcile at the end of this step (not
            # here: a port taking every other frame would nest the calls deeply).
            self._lost_pending = False
            self._reconcile_due = True

    def reconcile_if_lost(self):
        """After frames were lost and the port takes frames again: READER_FAULT 0x04
        (events lost), then every antenna's INVENTORY, so that the host can
        reconcile. Called at the end of every :meth:`step`."""
        if not self._reconcile_due:
            return
        self._reconcile_due = False
        self._send(READER_FAULT, fault_payload(
            FAULT_EVENT_OVERFLOW, None, "frames lost: port not read"))
        self.send_inventories()
