"""The messages behind the test vectors of docs/protocol.md, and a parser for the doc.

The doc holds the bytes; this module holds what they mean. Tests check both ways:
encoding each message gives the doc's bytes, decoding the bytes gives the message.
"""

from __future__ import annotations

import re
from pathlib import Path

from firmware_bridge.frames import RawFrame, cobs_encode, encode_body, serialize
from firmware_bridge.messages import (
    FaultCode,
    Heartbeat,
    Hello,
    Identify,
    Inventory,
    Message,
    ReaderFault,
    RequestInventory,
    TagArrived,
    TagLeft,
)

PROTOCOL_DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

READER_VECTORS: dict[str, tuple[int, Message]] = {
    "hello": (0, Hello(reader_id=258, firmware_version=(1, 4, 2), antenna_count=16)),
    "tag_arrived_uid4": (1, TagArrived(0, "04A1B2C3")),
    "tag_arrived_uid7": (2, TagArrived(3, "04112233445566")),
    "tag_left_uid8_iso15693": (3, TagLeft(15, "E0040150A1B2C3D4")),
    "tag_arrived_uid10_with_zeros": (4, TagArrived(7, "0100020003000400FF00")),
    "inventory_empty": (5, Inventory(2, 1000, ())),
    "inventory_three_tags": (
        6,
        Inventory(4, 0x01020304, ("04A1B2C3", "04112233445566", "E0040150A1B2C3D4")),
    ),
    "heartbeat": (7, Heartbeat(uptime_ms=3_600_000, scan_cycles=24_000)),
    "reader_fault_antenna": (8, ReaderFault(FaultCode.ANTENNA_OPEN, 5, "antenna 5 open circuit")),
    "reader_fault_reader": (9, ReaderFault(FaultCode.RF_FRONTEND, None, "PN5180 no response")),
    "heartbeat_seq_0x0100": (0x0100, Heartbeat(uptime_ms=0, scan_cycles=0)),
    "tag_left_seq_0xffff": (0xFFFF, TagLeft(1, "04A1B2C3")),
    "tag_arrived_rssi": (10, TagArrived(0, "04A1B2C3", rssi=-45)),
    "inventory_rssi": (
        11, Inventory(4, 7, ("04A1B2C3", "04112233445566"), rssi=(-45, None)),
    ),
}
"""Reader-to-host vectors: name -> (sequence number, message)."""

HOST_VECTORS: dict[str, tuple[int, Message]] = {
    "identify": (0, Identify()),
    "request_inventory_all": (1, RequestInventory(None)),
    "request_inventory_antenna_3": (2, RequestInventory(3)),
}
"""Host-to-reader vectors."""


def _frame(msg_type: int, payload: bytes, *, seq: int = 0, version: int = 1) -> bytes:
    return serialize(RawFrame(msg_type=msg_type, seq=seq, payload=payload, version=version))


def invalid_vector_sources() -> dict[str, tuple[str, bytes]]:
    """How each invalid vector in the doc is built: name -> (counter, wire bytes)."""
    heartbeat = RawFrame(msg_type=0x05, seq=7, payload=bytes.fromhex("0036ee8000005dc0"))
    good = serialize(heartbeat)
    flipped = bytearray(good)
    flipped[7] ^= 0x10  # one bit of a payload byte (index 6 is a COBS code byte)
    body = encode_body(heartbeat)
    swapped = b"\x00" + cobs_encode(body[:-2] + body[-1:] + body[-2:-1]) + b"\x00"
    return {
        "bit_flip_in_payload": ("crc_errors", bytes(flipped)),
        "crc_bytes_swapped": ("crc_errors", swapped),
        "cobs_group_runs_past_end": ("framing_errors", bytes.fromhex("00050102 0300")),
        "zero_length_body": ("truncated", bytes.fromhex("000100")),
        "body_shorter_than_header_and_crc": ("truncated", bytes.fromhex("00040105 0200")),
        "crc_ok_payload_too_short": ("truncated", _frame(0x02, bytes.fromhex("0307"), seq=1)),
        "unknown_type_0x42": ("unknown_type", _frame(0x42, b"", seq=2)),
        "host_type_from_reader": ("unknown_type", _frame(0x81, b"\x01", seq=3)),
        "protocol_version_2": ("unsupported_version", _frame(0x05, bytes(8), seq=4, version=2)),
        "antenna_16": ("malformed", _frame(0x02, bytes.fromhex("100404a1b2c3"), seq=5)),
        "uid_3_bytes": ("malformed", _frame(0x02, bytes.fromhex("000304a1b2"), seq=6)),
        "trailing_payload_byte": ("malformed", _frame(0x05, bytes(9), seq=7)),
        # The strength (docs/protocol.md, RSSI): announced by the antenna byte's flag.
        "rssi_missing": ("truncated", _frame(0x02, bytes.fromhex("800404a1b2c3"), seq=8)),
        "rssi_out_of_range": ("malformed",
                              _frame(0x02, bytes.fromhex("800404a1b2c37f"), seq=9)),
        "inventory_rssi_block_short": (
            "truncated", _frame(0x04, bytes.fromhex("8000000007020404a1b2c30404a1b2c4d3"),
                                seq=10)),
        "rssi_without_flag": ("malformed", _frame(0x02, bytes.fromhex("000404a1b2c3d3"), seq=11)),
    }


_LINE = re.compile(
    r"^(?P<name>[a-z0-9_]+)\s*:\s*(?:(?P<counter>[a-z_]+)\s*:\s*)?(?P<hex>[0-9a-f ]+)$"
)


def doc_vectors(block: str) -> dict[str, tuple[str | None, bytes]]:
    """Parse the fenced block ```<block> ... ``` of docs/protocol.md."""
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    match = re.search(rf"```{re.escape(block)}\n(.*?)```", text, re.DOTALL)
    if match is None:
        raise AssertionError(f"docs/protocol.md has no ```{block} block")
    vectors: dict[str, tuple[str | None, bytes]] = {}
    for raw_line in match.group(1).splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        parsed = _LINE.match(line)
        if parsed is None:
            raise AssertionError(f"unparsable vector line {line!r}")
        vectors[parsed["name"]] = (parsed["counter"], bytes.fromhex(parsed["hex"]))
    return vectors
