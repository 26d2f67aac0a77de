"""A register-level model of NXP PN5180 modules with ISO 15693 tags in their fields,
for the PN5180 driver's logic on the host (there is no chip on a CI machine).

Like fake_mfrc522.py: a fake written from the same documents as the driver; it checks
the driver's logic (host-interface frames, BUSY, the 16-slot inventory with EOFs,
collision rounds with masks, the 1-slot mode, RF on/off, one module's field at a
time), not the reading of the data sheet.

Read failures come from a pluggable channel: ``hears(uid, zone, depth) -> bool`` is
asked for every tag that would answer in a slot (``zone``: the module's port,
``depth``: how many cards lie between that tag and the antenna, 0 for the first one
laid down); a tag not heard does not answer in that slot. Two or more heard in one
slot are a collision (RX_STATUS bit 18). Any ``Callable[[bytes, int, int], bool]``
fits, e.g. a wrapper of firmware_bridge/rf_channel.py's model once it exists.

Air time is modelled from ISO/IEC 15693-2 (high data rate, one subcarrier) and kept
in :attr:`FakePN5180.air_us`, so the tests can report what a scan costs on air.
"""

from __future__ import annotations

from collections.abc import Callable

Channel = Callable[[bytes, int, int], bool]
"""``hears(uid, zone, depth)``: whether that tag's answer gets through this time."""

SYSTEM_CONFIG, IRQ_STATUS, IRQ_CLEAR, RX_STATUS, TX_CONFIG = 0x00, 0x02, 0x03, 0x13, 0x18
RX_IRQ, TX_RFOFF, TX_RFON = 0x1, 0x100, 0x200
RX_COLLISION = 0x40000
TX_DATA_BITS = ~0xFFFFFB3F & 0xFFFFFFFF
"""The TX_CONFIG bits the driver clears so the next SEND_DATA is an EOF alone."""

# ISO/IEC 15693-2 timing (microseconds), high data rate, 1-out-of-4, one subcarrier.
REQUEST_US = 1_600      # SOF + 5 bytes (flags, cmd, mask length, CRC) + EOF
ANSWER_US = 3_930       # SOF + 12 bytes (flags, DSFID, UID, CRC) + EOF
T1_US, T2_US, EOF_US = 321, 309, 76
EMPTY_SLOT_US = T1_US + 150  # t1, then no SOF in the window: the reader moves on


def always(_uid: bytes, _zone: int, _depth: int) -> bool:
    """The perfect channel: every tag heard every time."""
    return True


class FakePN5180:
    """One module: host interface, registers, RF field, and the tags lying on its zone."""

    def __init__(self, zone: int, hears: Channel = always, *, present: bool = True) -> None:
        self.zone = zone
        self.hears = hears
        self.present = present
        self.tags: list[bytes] = []
        """UIDs (8 bytes, most significant first), in the order laid down."""
        self.regs: dict[int, int] = {}
        self.rf_on = False
        self.rf_config: tuple[int, int] | None = None
        self.busy_stuck = False
        self._out = b""
        self._rx = b""
        self._round: tuple[int, int, int] | None = None  # mask value, mask length, slots
        self._slot = 0
        self.air_us = 0
        self.rounds = 0
        self.fields_switched_on = 0
        self.protocol_errors: list[str] = []

    # -- host interface ------------------------------------------------------------

    def busy(self) -> bool:
        return self.busy_stuck

    def write(self, frame: bytes) -> None:
        """One NSS-low frame from the host."""
        if not self.present:
            return
        command, args = frame[0], frame[1:]
        if command in (0x00, 0x01, 0x02):
            reg, value = args[0], int.from_bytes(args[1:5], "little")
            old = self.regs.get(reg, 0)
            if reg == IRQ_CLEAR:
                self.regs[IRQ_STATUS] = self.regs.get(IRQ_STATUS, 0) & ~value
                return
            self.regs[reg] = {0: value, 1: old | value, 2: old & value}[command]
        elif command == 0x04:
            self._out = self.regs.get(args[0], 0).to_bytes(4, "little")
        elif command == 0x07:
            address, count = args[0], args[1]
            eeprom = {0x10: b"\x05\x03"}.get(address, b"\x00\x00")
            self._out = (eeprom + bytes(count))[:count]
        elif command == 0x09:
            self._send_data(bytes(args[1:]))
        elif command == 0x0A:
            self._out = self._rx
        elif command == 0x11:
            self.rf_config = (args[0], args[1])
        elif command == 0x16:
            if not self.rf_on:
                self.fields_switched_on += 1
            self.rf_on = True
            self._irq(TX_RFON)
        elif command == 0x17:
            self.rf_on = False
            self._round = None
            self._irq(TX_RFOFF)
        else:
            self.protocol_errors.append(f"unknown command 0x{command:02X}")

    def read(self, count: int) -> bytes:
        """The bytes clocked out in a read frame (0xFF from a missing module: the
        buffered MISO line's pull-up)."""
        if not self.present:
            return b"\xff" * count
        out, self._out = self._out, b""
        return (out + b"\xff" * count)[:count]

    def _irq(self, bits: int) -> None:
        self.regs[IRQ_STATUS] = self.regs.get(IRQ_STATUS, 0) | bits

    # -- the air side ---------------------------------------------------------------

    def _send_data(self, data: bytes) -> None:
        if self.regs.get(SYSTEM_CONFIG, 0) & 0x7 != 0x3:
            self.protocol_errors.append("SEND_DATA without the transceive command")
            return
        if not self.rf_on or self.rf_config != (0x0D, 0x8D):
            self._answer_slot(silent=True)
            return
        if data:
            self.regs[TX_CONFIG] = self.regs.get(TX_CONFIG, 0) | TX_DATA_BITS  # data on
            flags, command, length = data[0], data[1], data[2]
            if command != 0x01 or flags not in (0x06, 0x26) or length > 64:
                self.protocol_errors.append(f"not an inventory: {data.hex()}")
                return
            mask = data[3:]
            if len(mask) != (length + 7) // 8:
                self.protocol_errors.append("mask bytes do not match the mask length")
                return
            value = int.from_bytes(mask, "little") & ((1 << length) - 1)
            self._round = (value, length, 16 if flags == 0x06 else 1)
            self._slot = 0
            self.rounds += 1
            self.air_us += REQUEST_US
            self._answer_slot()
            return
        # An EOF: the next slot, if the driver cleared the data bits first.
        if self.regs.get(TX_CONFIG, 0) & TX_DATA_BITS:
            self.protocol_errors.append("EOF sent with TX_CONFIG still sending data")
            return
        if self._round is None or self._slot + 1 >= self._round[2]:
            self.protocol_errors.append("EOF outside a round's slots")
            return
        self._slot += 1
        self.air_us += EOF_US
        self._answer_slot()

    def _answer_slot(self, *, silent: bool = False) -> None:
        self._rx = b""
        self.regs[RX_STATUS] = 0
        if silent or self._round is None:
            self.air_us += EMPTY_SLOT_US
            return
        value, length, slots = self._round
        heard = []
        for depth, uid in enumerate(self.tags):
            bits = int.from_bytes(uid, "big")  # the UID's LSB is sent first on air
            if bits & ((1 << length) - 1) != value:
                continue
            if slots == 16 and (bits >> length) & 0xF != self._slot:
                continue
            if self.hears(uid, self.zone, depth):
                heard.append(uid)
        if not heard:
            self.air_us += EMPTY_SLOT_US
            return
        self.air_us += T1_US + ANSWER_US + T2_US
        if len(heard) > 1:
            self.regs[RX_STATUS] = RX_COLLISION | 10
        else:
            self._rx = bytes((0x00, 0x00)) + bytes(reversed(heard[0]))
            self.regs[RX_STATUS] = len(self._rx)
        self._irq(RX_IRQ)


class FakeBus:
    """The SPI bus and the two CD74HC4067 (NSS out, BUSY back) of README.md's wiring."""

    def __init__(self, chips: list[FakePN5180]) -> None:
        self.chips = chips
        self.address = 0
        self.nss = 1

    # SPI
    def write(self, data: bytes) -> None:
        assert self.nss == 0, "SPI write with NSS high"
        self.chips[self.address].write(bytes(data))

    def write_readinto(self, data: bytes, result: bytearray) -> None:
        assert self.nss == 0, "SPI read with NSS high"
        result[:] = self.chips[self.address].read(len(data))

    # pins
    def cs(self, value: int) -> None:
        self.nss = value

    def busy(self) -> bool:
        return self.chips[self.address].busy()

    def select_pin(self, bit: int) -> Callable[[int], None]:
        def set_bit(value: int) -> None:
            self.address = (self.address & ~(1 << bit)) | (value << bit)
        return set_bit

    def fields_on(self) -> list[int]:
        return [n for n, chip in enumerate(self.chips) if chip.rf_on]
