"""Decoder throughput on a realistic reader frame mix (docs/protocol.md, Performance).

Prints median and p99 over repeats of: decoding a stream of frames fed in 4 KiB
chunks (frames/s, MB/s), the same with a noisy channel (1e-3 byte errors), encoding,
and our table-driven CRC against binascii.crc_hqx (C) as a reference in the same run.

    .venv/bin/python bench/bench_decoder.py [--frames N] [--repeats R]
"""

from __future__ import annotations

import argparse
import binascii
import random
import statistics
import time
from collections.abc import Callable

from firmware_bridge.decoder import FrameDecoder
from firmware_bridge.emulator import NoiseChannel, sample_traffic
from firmware_bridge.encoder import FrameEncoder
from firmware_bridge.frames import crc16_ccitt_false

CHUNK = 4096


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(action: Callable[[], object], repeats: int) -> list[float]:
    action()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def feed_all(stream: bytes) -> int:
    decoder = FrameDecoder()
    count = 0
    for start in range(0, len(stream), CHUNK):
        count += len(decoder.feed(stream[start : start + CHUNK]))
    return count


def report(name: str, samples: list[float], frames: int, size: int) -> None:
    median = statistics.median(samples)
    p99 = percentile(samples, 0.99)
    # p99 of the time is the slow end: report rates at the median and at the p99 time.
    print(
        f"{name:<28} median {frames / median:>10,.0f} frames/s {size / median / 1e6:6.2f} MB/s"
        f" | p99 {frames / p99:>10,.0f} frames/s {size / p99 / 1e6:6.2f} MB/s"
        f" | {median * 1e6 / frames:5.2f} us/frame"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    rng = random.Random(1)
    messages = sample_traffic(rng, args.frames)
    encoder = FrameEncoder()
    frames = [encoder.encode(message) for message in messages]
    stream = b"".join(frames)
    channel = NoiseChannel(byte_error_rate=1e-3, rng=random.Random(2))
    noisy = b"".join(channel.corrupt(frame) for frame in frames)
    mean_size = len(stream) / len(frames)
    print(
        f"{args.frames} frames, mean {mean_size:.1f} wire bytes/frame, "
        f"{len(stream) / 1e6:.2f} MB, {args.repeats} repeats"
    )
    assert feed_all(stream) == len(frames)

    clean = timed(lambda: feed_all(stream), args.repeats)
    report("decode (clean)", clean, len(frames), len(stream))
    noisy_samples = timed(lambda: feed_all(noisy), args.repeats)
    report("decode (1e-3 byte errors)", noisy_samples, len(frames), len(noisy))

    def encode_all() -> None:
        fresh = FrameEncoder()
        for message in messages:
            fresh.encode(message)

    report("encode", timed(encode_all, args.repeats), len(frames), len(stream))

    ours = timed(lambda: crc16_ccitt_false(stream), args.repeats)
    reference = timed(lambda: binascii.crc_hqx(stream, 0xFFFF), args.repeats)
    ours_median, reference_median = statistics.median(ours), statistics.median(reference)
    print(
        f"{'crc16 ours (table, Python)':<28} median {len(stream) / ours_median / 1e6:6.2f} MB/s"
        f" | p99 {len(stream) / percentile(ours, 0.99) / 1e6:6.2f} MB/s"
    )
    print(
        f"{'crc16 binascii.crc_hqx (C)':<28}"
        f" median {len(stream) / reference_median / 1e6:6.2f} MB/s"
        f" | ratio ours/C time {ours_median / reference_median:.0f}x"
    )
    # What one table needs: 8 readers x 16 antennas, a frame per antenna per 150 ms
    # scan plus heartbeats is under 1,000 frames/s.
    clean_median = statistics.median(clean)
    print(f"headroom vs 1,000 frames/s: {len(frames) / clean_median / 1000:.0f}x")


if __name__ == "__main__":
    main()
