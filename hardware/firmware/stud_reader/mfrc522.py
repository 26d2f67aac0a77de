"""NXP MFRC522 driver (ISO/IEC 14443 A), several modules behind one SPI bus.

Reference: NXP MFRC522 data sheet rev. 3.9 (register map section 9, commands section
10, timer 8.5, collisions 9.3.1.15) and ISO/IEC 14443-3 (REQA/WUPA, anticollision
and SELECT per cascade level, HLTA). Written from those documents; it can only be
checked by hand on hardware, which has NOT been done for this version: see
hardware/firmware/README.md, "Bring-up checklist".

Wiring (hardware/firmware/README.md): one MFRC522 module per antenna port. The
modules share SCK, MOSI, MISO and RST; each module's NSS (SDA) has a 10 kOhm pull-up
and is reached through a CD74HC4067 16:1 multiplexer whose common pin is the Pico's
chip-select line: :meth:`MuxedFrontEnd.select_port` sets the multiplexer address,
so exactly one module listens to the bus. Only the selected module's RF field is
ever on (it is switched off after each scan), so an antenna never powers the tags
of the zone next to it.

A scan of one port: field on, 5 ms for the tags to power up, WUPA, then per tag the
anticollision loop of each cascade level (resolving bit collisions by choosing 1),
SELECT, and HLTA so that the tag stays silent; REQA again until no tag answers.
Field off. UIDs are 4, 7 or 10 bytes (``bytes``).
"""

import time

from stud_reader.compat import const
from stud_reader.muxed import FrontEndError, MuxedPorts

# Registers (data sheet table 20).
_COMMAND = const(0x01)
_COM_IRQ = const(0x04)
_DIV_IRQ = const(0x05)
_ERROR = const(0x06)
_FIFO_DATA = const(0x09)
_FIFO_LEVEL = const(0x0A)
_CONTROL = const(0x0C)
_BIT_FRAMING = const(0x0D)
_COLL = const(0x0E)
_MODE = const(0x11)
_TX_MODE = const(0x12)
_RX_MODE = const(0x13)
_TX_CONTROL = const(0x14)
_TX_ASK = const(0x15)
_CRC_RESULT_H = const(0x21)
_CRC_RESULT_L = const(0x22)
_MOD_WIDTH = const(0x24)
_RF_CFG = const(0x26)
_T_MODE = const(0x2A)
_T_PRESCALER = const(0x2B)
_T_RELOAD_H = const(0x2C)
_T_RELOAD_L = const(0x2D)
_VERSION = const(0x37)

# Commands (data sheet table 149).
_CMD_IDLE = const(0x00)
_CMD_CALC_CRC = const(0x03)
_CMD_TRANSCEIVE = const(0x0C)
_CMD_SOFT_RESET = const(0x0F)

# ISO/IEC 14443-3 type A.
_REQA = const(0x26)
_WUPA = const(0x52)
_SEL_CL = (0x93, 0x95, 0x97)
_CASCADE_TAG = const(0x88)
_HLTA = const(0x50)

# Transceive outcomes.
OK = const(0)
TIMEOUT = const(1)
COLLISION = const(2)
ERROR = const(3)

KNOWN_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0x12, 0xB2)
"""VersionReg values of MFRC522 chips and of the common clones (FM17522: 0x88,
0x12 and 0xB2 seen on cheap modules). Anything else: no chip answers on that port."""

MAX_TAGS_PER_SCAN = const(70)
"""Guard on the REQA loop: more than an INVENTORY's 64, so that an overfull pile is
seen and reported, never an endless loop on a tag that ignores HLTA."""


class MFRC522:
    """Register access and ISO 14443 A commands on the currently selected module."""

    def __init__(self, spi, cs, timeout_ms=2):
        self.spi = spi
        self.cs = cs
        self.timeout_ms = timeout_ms
        self._one = bytearray(1)
        self._two = bytearray(2)

    # -- SPI (data sheet 8.1.2: address byte (reg << 1), bit 7 set for a read) ---

    def write(self, reg, value):
        """Write one register."""
        self._two[0] = (reg << 1) & 0x7E
        self._two[1] = value
        self.cs(0)
        try:
            self.spi.write(self._two)
        finally:
            self.cs(1)

    def read(self, reg):
        """Read one register."""
        self._two[0] = ((reg << 1) & 0x7E) | 0x80
        self._two[1] = 0
        result = bytearray(2)
        self.cs(0)
        try:
            self.spi.write_readinto(self._two, result)
        finally:
            self.cs(1)
        return result[1]

    def set_bits(self, reg, mask):
        """Set the bits of ``mask`` in ``reg``."""
        self.write(reg, self.read(reg) | mask)

    def clear_bits(self, reg, mask):
        """Clear the bits of ``mask`` in ``reg``."""
        self.write(reg, self.read(reg) & (~mask & 0xFF))

    # -- set-up ---------------------------------------------------------------------

    def init(self):
        """Soft reset and configure; raises :class:`FrontEndError` if no chip answers."""
        version = self.read(_VERSION)
        if version not in KNOWN_VERSIONS:
            raise FrontEndError(f"no MFRC522 (version 0x{version:02X})")
        self.write(_COMMAND, _CMD_SOFT_RESET)
        time.sleep_ms(50)
        for _ in range(10):  # PowerDown bit (4) clears when the reset is done
            if not self.read(_COMMAND) & 0x10:
                break
            time.sleep_ms(5)
        else:
            raise FrontEndError("MFRC522 stays in reset")
        self.write(_TX_MODE, 0x00)  # 106 kbit/s, no CRC (added per command)
        self.write(_RX_MODE, 0x00)
        self.write(_MOD_WIDTH, 0x26)
        # Timer: TAuto, prescaler 0x0A9 -> 13.56 MHz / (2 * 169 + 1) = 40 kHz (25 us).
        # Reload: the receive timeout after each transmission (8.5).
        ticks = max(1, self.timeout_ms * 40)
        self.write(_T_MODE, 0x80)
        self.write(_T_PRESCALER, 0xA9)
        self.write(_T_RELOAD_H, ticks >> 8)
        self.write(_T_RELOAD_L, ticks & 0xFF)
        self.write(_TX_ASK, 0x40)  # 100 % ASK (type A)
        self.write(_MODE, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
        self.write(_RF_CFG, 0x70)  # receiver gain 48 dB: card stock under felt is far
        self.antenna(False)

    def antenna(self, on):
        """Switch the RF field (TX1 and TX2 drivers) on or off."""
        if on:
            self.set_bits(_TX_CONTROL, 0x03)
        else:
            self.clear_bits(_TX_CONTROL, 0x03)

    # -- transceive (data sheet 10.3.1.8) -------------------------------------------

    def transceive(self, data, tx_last_bits=0, rx_align=0, check_crc=False):
        """Send ``data``; return ``(status, received bytes, valid bits of the last byte)``.

        ``tx_last_bits``: bits of the last byte to send (0: all 8); ``rx_align``:
        where the first received bit lands in the first byte (anticollision).
        """
        self.write(_COMMAND, _CMD_IDLE)
        self.write(_COM_IRQ, 0x7F)  # clear every interrupt request bit
        self.write(_FIFO_LEVEL, 0x80)  # flush the FIFO
        for byte in data:
            self.write(_FIFO_DATA, byte)
        self.write(_BIT_FRAMING, ((rx_align & 0x07) << 4) | (tx_last_bits & 0x07))
        self.write(_COMMAND, _CMD_TRANSCEIVE)
        self.set_bits(_BIT_FRAMING, 0x80)  # StartSend
        # The chip's timer ends a silent exchange (TimerIRq); the loop bound is a
        # second guard against a module that stops answering mid-exchange.
        deadline = time.ticks_add(time.ticks_ms(), self.timeout_ms + 20)
        while True:
            irq = self.read(_COM_IRQ)
            if irq & 0x30:  # RxIRq or IdleIRq: the exchange is complete
                break
            if irq & 0x01:  # TimerIRq: nobody answered
                return TIMEOUT, b"", 0
            if time.ticks_diff(deadline, time.ticks_ms()) < 0:
                raise FrontEndError("MFRC522 transceive never completes")
        self.clear_bits(_BIT_FRAMING, 0x80)
        error = self.read(_ERROR)
        if error & 0x13:  # BufferOvfl, ParityErr, ProtocolErr
            return ERROR, b"", 0
        count = self.read(_FIFO_LEVEL) & 0x7F
        received = bytearray()
        for _ in range(count):
            received.append(self.read(_FIFO_DATA))
        last_bits = self.read(_CONTROL) & 0x07
        if error & 0x08:  # CollErr
            return COLLISION, received, last_bits
        if check_crc and (
            len(received) < 3 or self.crc_a(received[:-2]) != bytes(received[-2:])
        ):
            return ERROR, b"", 0
        return OK, received, last_bits

    def crc_a(self, data):
        """CRC_A of ``data`` by the coprocessor (two bytes, low first)."""
        self.write(_COMMAND, _CMD_IDLE)
        self.write(_DIV_IRQ, 0x04)  # clear CRCIRq
        self.write(_FIFO_LEVEL, 0x80)
        for byte in data:
            self.write(_FIFO_DATA, byte)
        self.write(_COMMAND, _CMD_CALC_CRC)
        for _ in range(100):
            if self.read(_DIV_IRQ) & 0x04:
                self.write(_COMMAND, _CMD_IDLE)
                return bytes((self.read(_CRC_RESULT_L), self.read(_CRC_RESULT_H)))
        raise FrontEndError("MFRC522 CRC coprocessor does not finish")

    # -- ISO 14443-3 A ---------------------------------------------------------------

    def request(self, command):
        """REQA or WUPA (7-bit short frame): True if any tag answered (a collision
        of several tags' ATQA is normal and counts as an answer)."""
        self.clear_bits(_COLL, 0x80)
        status, received, _ = self.transceive(bytes((command,)), tx_last_bits=7)
        return status == COLLISION or (status == OK and len(received) == 2)

    def select_one(self):
        """Anticollision and SELECT over the cascade levels: one tag's UID, or None."""
        uid = bytearray()
        for level in range(3):
            part = self._anticollision(_SEL_CL[level])
            if part is None:
                return None
            frame = bytearray((_SEL_CL[level], 0x70))
            frame.extend(part)
            frame.extend(self.crc_a(frame))
            status, sak, _ = self.transceive(frame, check_crc=True)
            if status != OK or len(sak) != 3:
                return None
            if sak[0] & 0x04:  # UID not complete: a cascade tag and 3 bytes here
                if part[0] != _CASCADE_TAG:
                    return None
                uid.extend(part[1:4])
                continue
            uid.extend(part[0:4])
            return bytes(uid)
        return None

    def _anticollision(self, sel):
        """The 5 bytes (UID part and BCC) of one tag at this cascade level, or None.

        ISO/IEC 14443-3 6.5.3: send the bits known so far; every tag whose UID part
        starts so answers the rest; where two answers differ the PCD picks a value
        for the first colliding bit (here 1) and asks again with one bit more.

        Where the first collision is: the data sheet (9.3.1.15) gives CollPos as "the
        bit position of the first detected collision in a received frame". Read here
        as counted from bit 1 of the first received byte (which holds our partial
        byte, RxAlign), so absolute = 8 * whole known bytes + CollPos. Whether a
        real chip counts so is NOT verified (the popular Arduino driver counts from
        the start of the UID part instead, and its multi-tag path has known bugs).
        So the position is used as a hint only: if the prefix it gives matches no
        tag, with the chosen bit 1 and then 0, the loop falls back to extending the
        known bits one at a time from the last prefix a tag answered to, which
        needs no CollPos at all and always ends (at most two rounds per bit).
        """
        part = bytearray(5)
        known = 0  # bits of the UID part sent as the prefix
        answered = 0  # longest prefix a tag has answered to: those bits are right
        walking = False  # CollPos misled us: one bit at a time from `answered`
        tried_zero = False  # the last chosen bit was tried as 1, now as 0
        for _ in range(100):  # 40 bits, at most two rounds each, and fall-backs
            whole, bits = known // 8, known % 8
            frame = bytearray((sel, ((2 + whole) << 4) | bits))
            frame.extend(part[0:whole + (1 if bits else 0)])
            self.clear_bits(_COLL, 0x80)  # bits after a collision read as 0
            status, received, _ = self.transceive(frame, tx_last_bits=bits, rx_align=bits)
            if status == ERROR:
                return None
            if status == TIMEOUT:
                if known <= answered:
                    return None  # nobody answers even the sure prefix: the tag left
                chosen = known - 1
                if not tried_zero:
                    # No tag has a 1 at the chosen bit: the others have a 0 there.
                    part[chosen // 8] &= ~(1 << (chosen % 8)) & 0xFF
                    tried_zero = True
                    continue
                if walking:
                    return None  # neither 0 nor 1 answers: the tags left the field
                walking = True  # the bits CollPos vouched for were wrong
                known = answered
                tried_zero = False
                continue
            answered = known
            # Merge: the first received byte completes our partial byte (RxAlign).
            for index in range(len(received)):
                at = whole + index
                if at >= 5:
                    break
                if index == 0 and bits:
                    mask = (0xFF << bits) & 0xFF
                    part[at] = (part[at] & ~mask & 0xFF) | (received[0] & mask)
                else:
                    part[at] = received[index]
            if status == OK:
                if part[0] ^ part[1] ^ part[2] ^ part[3] != part[4]:
                    return None  # BCC wrong: a corrupted answer
                return part
            coll = self.read(_COLL)
            position = known + 1
            if not walking and not coll & 0x20:  # CollPosNotValid clear
                hinted = 8 * whole + (coll & 0x1F or 32)
                if known < hinted <= 40:
                    position = hinted
            known = position
            chosen = position - 1
            part[chosen // 8] |= 1 << (chosen % 8)
            tried_zero = False
        return None

    def halt(self):
        """HLTA: the selected tag keeps quiet until the field drops or a WUPA."""
        frame = bytearray((_HLTA, 0x00))
        frame.extend(self.crc_a(frame))
        self.transceive(frame)  # success is silence (a timeout)

    def inventory(self):
        """Every tag on the antenna: field on, WUPA/REQA-select-halt loop, field off."""
        uids = []
        self.antenna(True)
        try:
            time.sleep_ms(5)  # ISO 14443-2: tags power up before the first command
            command = _WUPA  # wakes tags a previous scan halted, if the field stayed up
            failures = 0
            while len(uids) < MAX_TAGS_PER_SCAN and failures < 3:
                if not self.request(command):
                    break
                command = _REQA
                uid = self.select_one()
                if uid is None:
                    failures += 1  # a garbled round: try again, a few times
                    continue
                if uid not in uids:
                    uids.append(uid)
                self.halt()
        finally:
            self.antenna(False)
        return uids


class MuxedFrontEnd(MuxedPorts):
    """One MFRC522 per antenna port, chip select routed by a CD74HC4067."""

    def __init__(self, spi, cs, rst, select_pins, ports, *, timeout_ms=2):
        super().__init__(MFRC522(spi, cs, timeout_ms), cs, rst, select_pins, ports,
                         settle_ms=50, sleep_ms=time.sleep_ms)

    def inventory_selected(self):
        """ISO 14443 A anticollision on the selected module."""
        return self.chip.inventory()
