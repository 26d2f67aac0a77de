"""100,000 frames through a noisy channel: losses are fine, wrong data never is."""

from __future__ import annotations

import random
from collections.abc import Callable

from firmware_bridge.decoder import FrameDecoder, Received
from firmware_bridge.emulator import NoiseChannel, sample_traffic
from firmware_bridge.encoder import FrameEncoder

FRAMES = 100_000
BYTE_ERROR_RATE = 1e-3
INSERT_RATE = 1e-4
DELETE_RATE = 1e-4
LOSS_BOUND = 0.10
"""Loose: the expected loss is a few percent (about 25 wire bytes per frame)."""


def test_noisy_channel_accepts_only_sent_messages_in_order(
    record_property: Callable[[str, object], None],
) -> None:
    rng = random.Random(20261129)
    messages = sample_traffic(rng, FRAMES)
    encoder = FrameEncoder()
    channel = NoiseChannel(
        byte_error_rate=BYTE_ERROR_RATE,
        insert_rate=INSERT_RATE,
        delete_rate=DELETE_RATE,
        rng=random.Random(7),
    )
    decoder = FrameDecoder()
    sent: list[Received] = []
    got: list[Received] = []
    pending = bytearray()
    for message in messages:
        seq = encoder.next_seq
        sent.append(Received(seq, message))
        pending += channel.corrupt(encoder.encode(message))
        if len(pending) >= 4096:  # feed in port-sized chunks, cut anywhere
            got += decoder.feed(bytes(pending))
            pending.clear()
    got += decoder.feed(bytes(pending))

    # Every accepted message equals the next sent one at or after the previous match:
    # nothing invented (no wrong tag or antenna), nothing reordered.
    wrong = 0
    cursor = 0
    for item in got:
        match = cursor
        while match < len(sent) and sent[match] != item:
            match += 1
        if match == len(sent) or match - cursor > 50:
            wrong += 1
            continue
        cursor = match + 1
    stats = decoder.stats
    loss = 1 - len(got) / len(sent)
    print(
        f"\nnoise: {len(sent)} frames sent, {len(got)} accepted, loss {loss:.2%}, "
        f"wrong {wrong}; {stats}"
    )
    record_property("loss_rate", f"{loss:.4f}")
    record_property("decoder_stats", str(stats))
    assert wrong == 0
    assert loss < LOSS_BOUND
    assert stats.frames_ok == len(got)
    assert stats.errors > 0  # the channel did corrupt frames; they were all caught
