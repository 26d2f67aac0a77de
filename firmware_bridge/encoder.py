"""Frame encoder: messages in, wire bytes out, with a wrapping sequence number.

Used by the host (IDENTIFY, REQUEST_INVENTORY) and by the reader emulator (every
reader message). Pure: no I/O, no clock.
"""

from __future__ import annotations

from firmware_bridge.frames import PROTOCOL_VERSION, SEQ_MODULUS, RawFrame, serialize
from firmware_bridge.messages import Message, encode_payload, message_type


class FrameEncoder:
    """Turns messages into complete wire frames, numbering them 0, 1, ... 0xFFFF, 0, ...

    ``protocol_version`` is written into every frame header; tests set it to emulate
    a reader speaking another version.
    """

    def __init__(self, *, first_seq: int = 0, protocol_version: int = PROTOCOL_VERSION) -> None:
        self._seq = first_seq % SEQ_MODULUS
        self.protocol_version = protocol_version

    @property
    def next_seq(self) -> int:
        """The sequence number the next frame will carry."""
        return self._seq

    def encode(self, message: Message) -> bytes:
        """The wire bytes of ``message`` (consumes one sequence number)."""
        frame = RawFrame(
            msg_type=message_type(message),
            seq=self._seq,
            payload=encode_payload(message),
            version=self.protocol_version,
        )
        self._seq = (self._seq + 1) % SEQ_MODULUS
        return serialize(frame)

    def reset(self, first_seq: int = 0) -> None:
        """Start numbering again (a reader does this when it reboots or is replugged)."""
        self._seq = first_seq % SEQ_MODULUS
