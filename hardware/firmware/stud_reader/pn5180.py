"""NXP PN5180 driver (ISO/IEC 15693), one module per antenna zone behind one SPI bus.

For the zones where cards stack (a seat's down cards, burn, muck): ISO 15693 inlays
answer a 16-slot inventory in turn, where ISO 14443 A readers stall on two stacked
cards (hardware/readers.md). Beside ``mfrc522.py`` and behind the same HAL
(``select_port`` / ``scan``), so ``reader.py`` does not change.

References: the PN5180 host interface (SPI mode 0, a BUSY line: wait for BUSY low
before a frame, and after it until the command is done; commands WRITE_REGISTER
0x00, WRITE_REGISTER_OR_MASK 0x01, WRITE_REGISTER_AND_MASK 0x02, READ_REGISTER
0x04, READ_EEPROM 0x07, SEND_DATA 0x09, READ_DATA 0x0A, LOAD_RF_CONFIG 0x11, RF_ON
0x16, RF_OFF 0x17; 32-bit register values LSB first), the ISO 15693 inventory
sequence of NXP's application note for the PN5180 (its steps: load the ISO 15693 RF
configuration 0x0D/0x8D and switch the field on; clear IRQ_STATUS; SEND_DATA the
inventory; per slot read RX_STATUS, and on a response READ_DATA; then clear
TX_CONFIG's data bits (AND 0xFFFFFB3F) so the next SEND_DATA sends only an EOF, which
opens the next slot; field off after the 16th), and ISO/IEC 15693-3 (the inventory
request: flags, command 0x01, mask length, mask; 16 slots, the slot of a tag being
the next 4 bits of its UID after the mask; a collision is resolved by a new round
with the mask extended by the slot number). The register addresses and bits used
were cross-checked against public PN5180 drivers (the ATrappmann/tueddy PN5180
library family). Written from those; NOT run on hardware: hardware/firmware/README.md,
"Bring-up checklist".

Timing (ISO/IEC 15693-2, high data rate, 1-out-of-4 coding, one subcarrier): the
16-slot request (5 bytes with CRC) takes 1.6 ms on air, each tag's answer (12 bytes)
3.9 ms plus t1 = 320.9 us before it and t2 = 309.2 us before the next EOF; an empty
slot costs t1 and the EOF. So a round costs about 1.6 + 16 x 0.5 ms with no tag, and
4.6 ms more per tag: 12 tags in about 65 ms; a collision costs a further round.

Wiring (README.md, "PN5180 wiring"): one PN5180 module per zone; SCK, MOSI shared;
each module's MISO through a 74LVC1G125 buffer enabled by that module's NSS (the bus
never depends on whether an idle chip releases MISO); NSS through a CD74HC4067 whose
common pin is the Pico's chip select, BUSY back through a second CD74HC4067 on the
same address lines (a pull-down on its common pin); RST shared. Only the selected
module's field is ever on, and it is switched off after each scan.
"""

import time

from stud_reader.compat import const
from stud_reader.muxed import FrontEndError, MuxedPorts

# Host interface commands.
_WRITE_REGISTER = const(0x00)
_WRITE_REGISTER_OR_MASK = const(0x01)
_WRITE_REGISTER_AND_MASK = const(0x02)
_READ_REGISTER = const(0x04)
_READ_EEPROM = const(0x07)
_SEND_DATA = const(0x09)
_READ_DATA = const(0x0A)
_LOAD_RF_CONFIG = const(0x11)
_RF_ON = const(0x16)
_RF_OFF = const(0x17)

# Registers.
SYSTEM_CONFIG = const(0x00)
IRQ_STATUS = const(0x02)
IRQ_CLEAR = const(0x03)
RX_STATUS = const(0x13)
TX_CONFIG = const(0x18)

# IRQ_STATUS bits.
RX_IRQ = const(0x00000001)
TX_RFOFF_IRQ = const(0x00000100)
TX_RFON_IRQ = const(0x00000200)
GENERAL_ERROR_IRQ = const(0x00020000)
ALL_IRQS = const(0x000FFFFF)

# RX_STATUS fields.
RX_BYTES_MASK = const(0x000001FF)
RX_COLLISION = const(0x00040000)

# EEPROM.
PRODUCT_VERSION = const(0x10)

# ISO 15693.
ISO15693_TX_CONFIG = const(0x0D)
ISO15693_RX_CONFIG = const(0x8D)
FLAGS_16_SLOTS = const(0x06)
"""Request flags: high data rate (0x02) and inventory (0x04); Nb_slots clear: 16 slots."""
FLAGS_1_SLOT = const(0x26)
"""The same with Nb_slots (0x20): one slot, every tag answers at once."""
CMD_INVENTORY = const(0x01)
RESPONSE_ERROR_FLAG = const(0x01)
UID_BITS = const(64)
EOF_ONLY_MASK = const(0xFFFFFB3F)
"""AND mask on TX_CONFIG: the next SEND_DATA sends only an EOF (the next slot)."""

MAX_ROUNDS = const(64)
"""Guard on collision rounds: enough for a full deck on one antenna; a pile that
needs more is reported by what it could read, never an endless loop."""


class ScanReport:
    """What one inventory did (diagnostics, host tests): rounds run, slots opened,
    collisions seen, answers that failed their check, and collisions left unresolved
    when the round guard stopped the scan."""

    def __init__(self):
        self.rounds = 0
        self.slots = 0
        self.collisions = 0
        self.bad_answers = 0
        self.unresolved = 0


class PN5180:
    """Host interface and ISO 15693 inventory on the currently selected module."""

    def __init__(self, spi, cs, busy, timeout_ms=50, slot_ms=6):
        self.spi = spi
        self.cs = cs
        self.busy = busy
        self.timeout_ms = timeout_ms
        """How long BUSY or an RF on/off may take before the module counts as failed."""
        self.slot_ms = slot_ms
        """How long a slot is listened to for an answer (3.9 ms answer + t1, t2)."""
        self.last_report = ScanReport()

    # -- the SPI frames ----------------------------------------------------------------

    def _wait_idle(self):
        deadline = time.ticks_add(time.ticks_ms(), self.timeout_ms)
        while self.busy():
            if time.ticks_diff(deadline, time.ticks_ms()) < 0:
                raise FrontEndError("PN5180 BUSY stays high")
            time.sleep_ms(1)

    def _send(self, frame):
        self._wait_idle()
        self.cs(0)
        try:
            self.spi.write(frame)
        finally:
            self.cs(1)
        self._wait_idle()  # BUSY rises at NSS high and falls when the command is done

    def _receive(self, count):
        result = bytearray(count)
        self._wait_idle()
        self.cs(0)
        try:
            self.spi.write_readinto(b"\xff" * count, result)
        finally:
            self.cs(1)
        self._wait_idle()
        return result

    def write_register(self, reg, value):
        """WRITE_REGISTER: ``reg`` = the 32-bit ``value``."""
        self._send(bytes((_WRITE_REGISTER, reg)) + value.to_bytes(4, "little"))

    def or_register(self, reg, mask):
        """WRITE_REGISTER_OR_MASK."""
        self._send(bytes((_WRITE_REGISTER_OR_MASK, reg)) + mask.to_bytes(4, "little"))

    def and_register(self, reg, mask):
        """WRITE_REGISTER_AND_MASK."""
        self._send(bytes((_WRITE_REGISTER_AND_MASK, reg)) + mask.to_bytes(4, "little"))

    def read_register(self, reg):
        """READ_REGISTER: the 32-bit value."""
        self._send(bytes((_READ_REGISTER, reg)))
        return int.from_bytes(self._receive(4), "little")

    def read_eeprom(self, address, count):
        """READ_EEPROM: ``count`` bytes from ``address``."""
        self._send(bytes((_READ_EEPROM, address, count)))
        return bytes(self._receive(count))

    def send_data(self, data, last_bits=0):
        """Idle, then transceive, then SEND_DATA (``data`` may be empty: an EOF)."""
        self.and_register(SYSTEM_CONFIG, 0xFFFFFFF8)  # COMMAND = idle (stop a transceive)
        self.or_register(SYSTEM_CONFIG, 0x00000003)  # COMMAND = transceive
        self._send(bytes((_SEND_DATA, last_bits)) + bytes(data))

    def read_data(self, count):
        """READ_DATA: the ``count`` bytes received."""
        self._send(bytes((_READ_DATA, 0x00)))
        return bytes(self._receive(count))

    # -- RF ------------------------------------------------------------------------

    def init(self):
        """Check a chip answers (its product version); raises :class:`FrontEndError`."""
        version = self.read_eeprom(PRODUCT_VERSION, 2)
        if version in (b"\xff\xff", b"\x00\x00"):
            raise FrontEndError(f"no PN5180 (product version {version[1]:02X}.{version[0]:02X})")
        self.rf(False)

    def rf(self, on):
        """RF_ON / RF_OFF, and wait for the chip to confirm (TX_RFON / TX_RFOFF)."""
        bit = TX_RFON_IRQ if on else TX_RFOFF_IRQ
        self.write_register(IRQ_CLEAR, bit)
        self._send(bytes((_RF_ON if on else _RF_OFF, 0x00)))
        deadline = time.ticks_add(time.ticks_ms(), self.timeout_ms)
        while not self.read_register(IRQ_STATUS) & bit:
            if time.ticks_diff(deadline, time.ticks_ms()) < 0:
                if not on:
                    return  # already off: nothing to confirm
                raise FrontEndError("PN5180 field does not come on")
            time.sleep_ms(1)
        self.write_register(IRQ_CLEAR, bit)

    def _listen(self):
        """RX_STATUS once the slot's answer came in (RX_IRQ), or once the slot is over."""
        deadline = time.ticks_add(time.ticks_ms(), self.slot_ms)
        while True:
            irq = self.read_register(IRQ_STATUS)
            if irq & GENERAL_ERROR_IRQ:
                raise FrontEndError("PN5180 general error")
            if irq & RX_IRQ or time.ticks_diff(deadline, time.ticks_ms()) < 0:
                return self.read_register(RX_STATUS)
            time.sleep_ms(1)

    # -- ISO 15693 inventory -----------------------------------------------------------

    def inventory(self, slots=16):
        """Every tag's UID (8 bytes, most significant first: ``E0 04 ...``), field on
        for the scan only. ``slots``: 16 (anticollision) or 1 (one answer at once;
        on a collision it goes on in 16-slot rounds)."""
        report = ScanReport()
        self.last_report = report
        uids = []
        self.load_rf_config()
        self.rf(True)
        try:
            masks = [(0, 0)]  # (mask value, mask length in bits): UID bits, LSB first
            while masks:
                if report.rounds >= MAX_ROUNDS:
                    report.unresolved += len(masks)
                    break
                value, length = masks.pop(0)
                report.rounds += 1
                count = 16 if slots == 16 else 1
                request = bytearray((FLAGS_16_SLOTS if count == 16 else FLAGS_1_SLOT,
                                     CMD_INVENTORY, length))
                request.extend(value.to_bytes((length + 7) // 8, "little"))
                self.write_register(IRQ_CLEAR, ALL_IRQS)
                self.send_data(request)
                for slot in range(count):
                    report.slots += 1
                    status = self._listen()
                    if status & RX_COLLISION:
                        report.collisions += 1
                        if count == 1:
                            slots = 16  # one slot cannot separate them: 16-slot rounds
                            masks.append((value, length))
                        elif length + 4 <= UID_BITS:
                            masks.append((value | (slot << length), length + 4))
                        else:
                            report.unresolved += 1
                    elif status & RX_BYTES_MASK:
                        self._take(self.read_data(status & RX_BYTES_MASK), uids, report)
                    if slot + 1 < count:
                        self.and_register(TX_CONFIG, EOF_ONLY_MASK)  # next: EOF only
                        self.write_register(IRQ_CLEAR, ALL_IRQS)
                        self.send_data(b"")
        finally:
            self.rf(False)
        return uids

    def load_rf_config(self):
        """LOAD_RF_CONFIG: the chip's ISO 15693 transmitter and receiver settings."""
        self._send(bytes((_LOAD_RF_CONFIG, ISO15693_TX_CONFIG, ISO15693_RX_CONFIG)))

    def _take(self, answer, uids, report):
        # flags, DSFID, UID (8 bytes, least significant first); CRC checked by the chip.
        if len(answer) != 10 or answer[0] & RESPONSE_ERROR_FLAG:
            report.bad_answers += 1
            return
        uid = bytes(reversed(answer[2:10]))
        if uid not in uids:
            uids.append(uid)


class PN5180FrontEnd(MuxedPorts):
    """One PN5180 per antenna port: NSS and BUSY routed by two CD74HC4067 on the same
    address lines (``select_pins``). ``slots``: 16 or 1 (see :meth:`PN5180.inventory`)."""

    def __init__(self, spi, cs, rst, select_pins, ports, *, busy, slots=16, slot_ms=6):
        self.slots = slots
        super().__init__(PN5180(spi, cs, busy, slot_ms=slot_ms), cs, rst, select_pins, ports,
                         settle_ms=10, sleep_ms=time.sleep_ms)

    def inventory_selected(self):
        """ISO 15693 inventory of the selected module in :attr:`slots` slots."""
        return self.chip.inventory(self.slots)
