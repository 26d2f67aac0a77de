"""Sans-I/O stream decoder: bytes in any chunking in, typed messages out.

Theory of operation
-------------------
The caller pushes whatever bytes the port gave (``feed``); the decoder buffers up to
the next 0x00 delimiter, parses each complete segment, and returns the messages of
the good frames in order. A segment that is not a good frame is counted under its
own error kind and skipped: the decoder is back in sync at the next delimiter.
Bytes after the last delimiter stay buffered: that is *incomplete, wait*, never an
error. The buffer is capped at :data:`~firmware_bridge.frames.MAX_ENCODED_SIZE`; a
longer run without a delimiter is counted once as *oversized* and discarded up to
the next delimiter.

Sequence numbers of good frames are tracked per stream: a jump forward of ``n``
counts ``n - 1`` missed frames. HELLO restarts the count (a reader numbers from
zero after boot or replug); a jump backwards without HELLO counts as a sequence
reset. :meth:`FrameDecoder.reset_stream` forgets the partial frame and the last
sequence number but keeps the counters (the serial link calls it on reconnect).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from firmware_bridge.frames import (
    MAX_ENCODED_SIZE,
    SEQ_MODULUS,
    FrameError,
    RawFrame,
    parse_segment,
)
from firmware_bridge.messages import (
    Direction,
    Message,
    MessageType,
    PayloadError,
    decode_payload,
)

_HELLO_TYPE = int(MessageType.HELLO)
_KNOWN_TYPES = {int(kind): kind for kind in MessageType}


@dataclass(frozen=True, slots=True)
class Received:
    """A decoded message and the sequence number of the frame it came in."""

    seq: int
    message: Message


@dataclass(slots=True)
class DecoderStats:
    """Counters of one decoder. Every skipped segment lands in exactly one error field."""

    frames_ok: int = 0
    """Frames decoded into a message and returned."""
    crc_errors: int = 0
    framing_errors: int = 0
    """Segments that are not valid COBS."""
    oversized: int = 0
    """Segments (or delimiter-less runs) longer than the maximum frame size."""
    truncated: int = 0
    """Bodies shorter than a header + CRC, or payloads that end early."""
    unknown_type: int = 0
    """Good frames whose type is unknown or travels the other way."""
    unsupported_version: int = 0
    malformed: int = 0
    """Good frames whose payload has out-of-range fields or trailing bytes."""
    frames_missed: int = 0
    """Frames the sender numbered but we never got (sequence gaps)."""
    sequence_resets: int = 0
    """Sequence numbers that went backwards without a HELLO."""
    bytes_received: int = 0

    @property
    def errors(self) -> int:
        """All skipped segments, whatever the kind."""
        return (
            self.crc_errors
            + self.framing_errors
            + self.oversized
            + self.truncated
            + self.unknown_type
            + self.unsupported_version
            + self.malformed
        )


class FrameDecoder:
    """Decodes one byte stream (one reader connection, one direction)."""

    def __init__(self, direction: Direction = Direction.READER_TO_HOST) -> None:
        self.direction = direction
        self._buffer = bytearray()
        self._discarding = False
        self._last_seq: int | None = None
        self._stats = DecoderStats()

    @property
    def stats(self) -> DecoderStats:
        """A copy of the counters."""
        return replace(self._stats)

    @property
    def pending(self) -> int:
        """Bytes buffered after the last delimiter (an incomplete frame, or idle)."""
        return len(self._buffer)

    def reset_stream(self) -> None:
        """Forget the partial frame and the sequence history; keep the counters."""
        self._buffer.clear()
        self._discarding = False
        self._last_seq = None

    def feed(self, data: bytes | bytearray | memoryview) -> list[Received]:
        """Push bytes; return the messages of the frames they complete, in order."""
        stats = self._stats
        stats.bytes_received += len(data)
        buffer = self._buffer
        buffer += data
        out: list[Received] = []
        start = 0
        while True:
            end = buffer.find(0, start)
            if end < 0:
                break
            if self._discarding:
                # The tail of an oversized run: already counted, drop it.
                self._discarding = False
            elif end > start:
                self._segment(bytes(buffer[start:end]), out)
            start = end + 1
        if start:
            del buffer[:start]
        if len(buffer) > MAX_ENCODED_SIZE:
            if not self._discarding:
                stats.oversized += 1
                self._discarding = True
            buffer.clear()
        return out

    def _segment(self, segment: bytes, out: list[Received]) -> None:
        result = parse_segment(segment)
        if isinstance(result, FrameError):
            self._count_error(result)
            return
        self._track_seq(result)
        kind = _KNOWN_TYPES.get(result.msg_type)
        if kind is None or not self.direction.accepts(result.msg_type):
            self._stats.unknown_type += 1
            return
        try:
            message = decode_payload(kind, result.payload)
        except PayloadError as exc:
            if exc.truncated:
                self._stats.truncated += 1
            else:
                self._stats.malformed += 1
            return
        self._stats.frames_ok += 1
        out.append(Received(result.seq, message))

    def _count_error(self, error: FrameError) -> None:
        stats = self._stats
        match error:
            case FrameError.CRC:
                stats.crc_errors += 1
            case FrameError.FRAMING:
                stats.framing_errors += 1
            case FrameError.OVERSIZED:
                stats.oversized += 1
            case FrameError.TRUNCATED:
                stats.truncated += 1
            case FrameError.UNSUPPORTED_VERSION:
                stats.unsupported_version += 1

    def _track_seq(self, frame: RawFrame) -> None:
        last = self._last_seq
        self._last_seq = frame.seq
        if last is None or frame.msg_type == _HELLO_TYPE:
            return
        gap = (frame.seq - last - 1) % SEQ_MODULUS
        if gap < SEQ_MODULUS // 2:
            self._stats.frames_missed += gap
        else:
            self._stats.sequence_resets += 1
