"""An in-memory HAL for fast unit tests of the firmware loop: a wire the test reads
with the project's own decoder, a clock the test moves, a simulated front end.

A fake only for speed and determinism; the real pty and the real daemon are in
test_fw_in_the_loop.py.
"""

from __future__ import annotations

from stud_reader.sim import SimulatedFrontEnd

from firmware_bridge.decoder import FrameDecoder, Received
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.messages import HostMessage, Message


class MemoryHal:
    """HAL whose ``write`` goes to a buffer and whose ``read`` gives queued host bytes."""

    def __init__(self, ports: int = 8) -> None:
        self.front_end = SimulatedFrontEnd(ports)
        self.now = 0
        self.wire = bytearray()
        self.incoming = bytearray()
        self.refuse_writes = 0
        """Writes to refuse from now on (a host that does not read)."""
        self.decoder = FrameDecoder()
        self.host = FrameEncoder()

    def select_port(self, port: int) -> None:
        self.front_end.select_port(port)

    def scan(self) -> list[bytes]:
        return self.front_end.scan()

    def write(self, data: bytes) -> int:
        if self.refuse_writes:
            self.refuse_writes -= 1
            return 0
        self.wire += data
        return len(data)

    def read(self) -> bytes:
        data = bytes(self.incoming)
        self.incoming.clear()
        return data

    def ticks_ms(self) -> int:
        return self.now

    # -- test side -------------------------------------------------------------

    def send(self, message: HostMessage) -> None:
        """Queue a host command, numbered by the host's own encoder."""
        self.incoming += self.host.encode(message)

    def received(self) -> list[Received]:
        """Decode (with firmware_bridge) everything written since the last call."""
        out = self.decoder.feed(bytes(self.wire))
        self.wire.clear()
        return out

    def messages(self) -> list[Message]:
        """Like :meth:`received`, messages only."""
        return [item.message for item in self.received()]
