"""A register-level model of an MFRC522 with ISO 14443 A tags in its field, for the
driver's logic on the host (there is no chip on a CI machine).

A fake, and written by the same hand as the driver from the same documents: it
checks the driver's logic (SPI framing, register sequences, bit-level
anticollision, cascade levels, HLTA), not the reading of the data sheet. Where the
data sheet is ambiguous (what CollPos counts from) it offers both readings, and the
tests run the driver against each.
"""

from __future__ import annotations

from dataclasses import dataclass

COMMAND, COM_IRQ, DIV_IRQ, ERROR, FIFO_DATA, FIFO_LEVEL = 0x01, 0x04, 0x05, 0x06, 0x09, 0x0A
CONTROL, BIT_FRAMING, COLL, TX_CONTROL = 0x0C, 0x0D, 0x0E, 0x14
CRC_H, CRC_L, VERSION = 0x21, 0x22, 0x37
IDLE, CALC_CRC, TRANSCEIVE, SOFT_RESET = 0x00, 0x03, 0x0C, 0x0F
SEL = (0x93, 0x95, 0x97)


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 CRC_A (init 0x6363, reflected 0x8408), low byte first."""
    crc = 0x6363
    for value in data:
        mixed = value ^ (crc & 0xFF)
        mixed = (mixed ^ (mixed << 4)) & 0xFF
        crc = (crc >> 8) ^ (mixed << 8) ^ (mixed << 3) ^ (mixed >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def cascade(uid: bytes) -> list[bytes]:
    """The UID parts (4 bytes + BCC) of each cascade level."""
    if len(uid) == 4:
        chunks = [uid]
    elif len(uid) == 7:
        chunks = [b"\x88" + uid[:3], uid[3:]]
    else:
        chunks = [b"\x88" + uid[:3], b"\x88" + uid[3:6], uid[6:]]
    return [c + bytes((c[0] ^ c[1] ^ c[2] ^ c[3],)) for c in chunks]


def bit(data: bytes, index: int) -> int:
    """Bit ``index`` (0-based, LSB first as on the air) of ``data``."""
    return (data[index // 8] >> (index % 8)) & 1


@dataclass
class Tag:
    """One ISO 14443 A tag: its UID and its state machine (ISO/IEC 14443-3 6.3)."""

    uid: bytes
    state: str = "idle"  # idle, ready, active, halt
    level: int = 0

    @property
    def parts(self) -> list[bytes]:
        return cascade(self.uid)


class FakeMFRC522:
    """The chip behind the SPI bus: registers, FIFO, timer, and the tags in its field.

    ``collpos_from``: ``"frame"`` counts CollPos from bit 1 of the first received
    byte (the driver's reading), ``"uid"`` from the start of the UID part.
    ``present=False``: nothing answers on the bus (VersionReg reads 0x00).
    """

    def __init__(self, tags: list[bytes], collpos_from: str = "frame",
                 present: bool = True) -> None:
        self.tags = [Tag(uid) for uid in tags]
        self.collpos_from = collpos_from
        self.present = present
        self.regs: dict[int, int] = {}
        self.fifo: list[int] = []
        self.field_on_count = 0
        self.transceives = 0
        self._reset()

    def _reset(self) -> None:
        self.regs = {VERSION: 0x92}
        self.fifo = []

    # -- the SPI side ---------------------------------------------------------------

    def transfer(self, out: bytes) -> bytes:
        """One NSS-low transaction: address byte, then data."""
        if not self.present:
            return bytes(len(out))
        address = out[0]
        reg = (address >> 1) & 0x3F
        if address & 0x80:
            return bytes((0, self.read(reg)))
        self.write(reg, out[1])
        return bytes(len(out))

    def read(self, reg: int) -> int:
        if reg == FIFO_DATA:
            return self.fifo.pop(0) if self.fifo else 0
        if reg == FIFO_LEVEL:
            return len(self.fifo)
        return self.regs.get(reg, 0)

    def write(self, reg: int, value: int) -> None:
        regs = self.regs
        if reg == COMMAND:
            command = value & 0x0F
            regs[COMMAND] = command
            if command == SOFT_RESET:
                self._reset()
            elif command == CALC_CRC:
                crc = crc_a(bytes(self.fifo))
                self.fifo = []
                regs[CRC_L], regs[CRC_H] = crc[0], crc[1]
                regs[DIV_IRQ] = regs.get(DIV_IRQ, 0) | 0x04
        elif reg in (COM_IRQ, DIV_IRQ):
            if value & 0x80:
                regs[reg] = regs.get(reg, 0) | (value & 0x7F)
            else:
                regs[reg] = regs.get(reg, 0) & ~value & 0x7F
        elif reg == FIFO_LEVEL:
            if value & 0x80:
                self.fifo = []
        elif reg == FIFO_DATA:
            self.fifo.append(value)
        elif reg == BIT_FRAMING:
            regs[reg] = value
            if value & 0x80 and regs.get(COMMAND) == TRANSCEIVE:
                self._transceive()
        elif reg == TX_CONTROL:
            was_on = regs.get(TX_CONTROL, 0) & 0x03
            regs[reg] = value
            if was_on and not value & 0x03:
                for tag in self.tags:  # no field, no power: every tag resets
                    tag.state, tag.level = "idle", 0
            elif value & 0x03 and not was_on:
                self.field_on_count += 1
        else:
            regs[reg] = value

    # -- the air side ---------------------------------------------------------------

    def _answer(self, data: bytes, last_bits: int = 0, error: int = 0, coll: int = 0) -> None:
        self.fifo = list(data)
        self.regs[CONTROL] = last_bits
        self.regs[ERROR] = error
        self.regs[COLL] = (self.regs.get(COLL, 0) & 0x80) | coll
        self.regs[COM_IRQ] = self.regs.get(COM_IRQ, 0) | 0x30  # RxIRq, IdleIRq

    def _silence(self) -> None:
        self.fifo = []
        self.regs[ERROR] = 0
        self.regs[COM_IRQ] = self.regs.get(COM_IRQ, 0) | 0x01  # TimerIRq

    def _transceive(self) -> None:
        self.transceives += 1
        data = bytes(self.fifo)
        self.fifo = []
        framing = self.regs.get(BIT_FRAMING, 0)
        tx_last, rx_align = framing & 0x07, (framing >> 4) & 0x07
        if not self.regs.get(TX_CONTROL, 0) & 0x03:
            self._silence()  # no field: nobody hears
            return
        if len(data) == 1 and tx_last == 7:
            self._request(data[0])
        elif len(data) >= 2 and data[0] in SEL:
            self._select(SEL.index(data[0]), data, tx_last, rx_align)
        elif data[:2] == b"\x50\x00" and data[2:] == crc_a(data[:2]):
            for tag in self.tags:
                if tag.state == "active":
                    tag.state = "halt"
            self._silence()
        else:
            self._silence()

    def _request(self, command: int) -> None:
        wake = ("idle",) if command == 0x26 else ("idle", "halt")
        answering = [t for t in self.tags if t.state in wake]
        for tag in answering:
            tag.state, tag.level = "ready", 0
        if answering:
            self._answer(b"\x44\x00")  # ATQA of an NTAG; the same for all: no collision
        else:
            self._silence()

    def _select(self, level: int, data: bytes, tx_last: int, rx_align: int) -> None:
        ready = [t for t in self.tags if t.state == "ready" and t.level == level]
        nvb = data[1]
        if nvb == 0x70:
            part, crc = data[2:7], data[7:9]
            if crc != crc_a(data[:7]):
                self._silence()
                return
            chosen = [t for t in ready if t.parts[level] == part]
            if not chosen:
                self._silence()
                return
            tag = chosen[0]
            others = [t for t in ready if t is not tag]
            for other in others:
                other.state = "idle"  # not selected: back to idle (ISO 14443-3)
            if level + 1 < len(tag.parts):
                tag.level = level + 1
                sak = 0x04
            else:
                tag.state = "active"
                sak = 0x00
            self._answer(bytes((sak,)) + crc_a(bytes((sak,))))
            return
        known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
        assert tx_last == nvb & 0x0F, "TxLastBits must match NVB's bit count"
        assert rx_align == tx_last, "RxAlign must match the partial byte sent"
        prefix = data[2:]
        matching = [t for t in ready
                    if all(bit(t.parts[level], i) == bit(prefix, i) for i in range(known))]
        if not matching:
            self._silence()
            return
        whole = known // 8
        out = bytearray(5 - whole)
        collision = None
        for index in range(known, 40):
            values = {bit(t.parts[level], index) for t in matching}
            if len(values) > 1:
                collision = index
                break
            if values.pop():
                out[index // 8 - whole] |= 1 << (index % 8)
        if collision is None:
            self._answer(bytes(out))
            return
        # Bits from the collision on read as 0 (ValuesAfterColl cleared).
        absolute = collision + 1
        counted = absolute - 8 * whole if self.collpos_from == "frame" else absolute
        self._answer(bytes(out), error=0x08, coll=counted & 0x1F)


class FakeSpi:
    """The SPI bus: ``write`` / ``write_readinto`` go to whichever chip NSS selects."""

    def __init__(self, chips: list[FakeMFRC522]) -> None:
        self.chips = chips
        self.selected: int | None = None

    def write(self, data: bytes) -> None:
        assert self.selected is not None, "SPI write with NSS high"
        self.chips[self.selected].transfer(bytes(data))

    def write_readinto(self, data: bytes, result: bytearray) -> None:
        assert self.selected is not None, "SPI read with NSS high"
        result[:] = self.chips[self.selected].transfer(bytes(data))


class Pin:
    """A GPIO: calling it with a value sets it."""

    def __init__(self, on_change: object = None) -> None:
        self.value = 1
        self.on_change = on_change

    def __call__(self, value: int) -> None:
        self.value = value
        if callable(self.on_change):
            self.on_change()
