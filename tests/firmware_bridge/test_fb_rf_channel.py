"""The RF channel model (firmware_bridge/rf_channel.py): properties and profiles."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.rf_channel import (
    MAX_PEEK,
    PROFILES,
    ChannelError,
    RFChannel,
    RFParams,
    ZoneKind,
    parse_override,
    plan_peek,
    profile,
    read_probability,
)

SEAT_DOWN, SEAT_UP, BURN, MUCK, BOARD = (1, 0), (1, 1), (10, 0), (10, 1), (10, 2)
KINDS = {SEAT_DOWN: ZoneKind.SEAT_DOWN, SEAT_UP: ZoneKind.SEAT_UP, BURN: ZoneKind.BURN,
         MUCK: ZoneKind.MUCK, BOARD: ZoneKind.BOARD}
NEAR = {SEAT_DOWN: [SEAT_UP], SEAT_UP: [SEAT_DOWN], BURN: [MUCK, BOARD], MUCK: [BURN, BOARD],
        BOARD: [BURN, MUCK]}

probability = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
depth_limit = st.one_of(st.none(), st.integers(min_value=0, max_value=12))


@st.composite
def params(draw: st.DrawFn) -> RFParams:
    """Any valid channel."""
    return RFParams(
        stack_loss=draw(probability), stack_growth=draw(st.floats(1.0, 5.0)),
        max_stack=draw(depth_limit), up_stack_factor=draw(probability),
        muck_depth=draw(depth_limit), burn_depth=draw(depth_limit), pile_loss=draw(probability),
        flicker=draw(st.floats(0.0, 0.5)), cross_read=draw(probability),
        cross_tie=draw(probability), dead_tag=draw(probability),
        peek_rate=draw(probability), hand_pass=draw(probability),
    )


actions = st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.integers(0, 30),
                             st.booleans()), max_size=60)


def run(channel: RFChannel, script: list[tuple[tuple[int, int], int, bool]]) -> list[object]:
    """Play placements/removals at 0.5 s steps, scanning every antenna after each."""
    seen: list[object] = []
    for step, (antenna, tag, put) in enumerate(script):
        uid = f"04{tag:012X}"
        now = step * 0.5
        if put:
            placement = channel.place(uid, antenna, now)
            seen.append((placement.read, placement.why_unread, placement.cross,
                         round(placement.strength, 9)))
        else:
            channel.remove(uid, now)
        for key in sorted(KINDS):
            seen.append(tuple((r.uid, round(r.strength, 9)) for r in channel.reads(key, now)))
    return seen


@given(params(), actions, st.integers(0, 2**32))
def test_the_same_seed_gives_the_same_reads(rf: RFParams, script: list[tuple[tuple[int, int],
                                            int, bool]], seed: int) -> None:
    first = run(RFChannel(rf, KINDS, NEAR, seed=seed), script)
    again = run(RFChannel(rf, KINDS, NEAR, seed=seed), script)
    assert first == again


@given(params(), st.sampled_from(list(ZoneKind)), st.integers(1, 40))
def test_read_probability_is_a_probability_and_falls_with_depth(
        rf: RFParams, kind: ZoneKind, depth: int) -> None:
    chance = read_probability(rf, kind, depth)
    assert 0.0 <= chance <= 1.0
    assert read_probability(rf, kind, depth + 1) <= chance + 1e-12
    if kind in (ZoneKind.SEAT_DOWN, ZoneKind.SEAT_UP, ZoneKind.BOARD) and depth == 1:
        assert chance == 1.0  # the first card on an antenna is always read (if alive)


@given(params(), st.integers(1, 40))
def test_a_pile_is_read_only_to_its_depth(rf: RFParams, depth: int) -> None:
    for kind, limit in ((ZoneKind.MUCK, rf.muck_depth), (ZoneKind.BURN, rf.burn_depth)):
        if limit is not None and depth > limit:
            assert read_probability(rf, kind, depth) == 0.0


@given(params(), actions, st.integers(0, 1000))
def test_depth_zero_reads_nothing_and_dead_tags_are_never_read(
        rf: RFParams, script: list[tuple[tuple[int, int], int, bool]], seed: int) -> None:
    rf = replace(rf, muck_depth=0)
    channel = RFChannel(rf, KINDS, NEAR, seed=seed)
    for step, (antenna, tag, put) in enumerate(script):
        uid = f"04{tag:012X}"
        now = step * 0.5
        if not put:
            channel.remove(uid, now)
            continue
        placement = channel.place(uid, antenna, now)
        if antenna == MUCK:
            assert not placement.read
        for key in KINDS:
            for read in channel.reads(key, now):
                lying = channel.placement(read.uid)
                assert lying is not None
                assert not channel.is_dead(read.uid)
                assert lying.read
                if key == MUCK:
                    # Only cross-reads of tags lying on the muck's neighbours reach it.
                    assert lying.antenna != MUCK


@given(params(), st.sampled_from(sorted(KINDS)), st.integers(0, 1000))
def test_a_cross_read_is_a_neighbour_and_never_stronger(
        rf: RFParams, antenna: tuple[int, int], seed: int) -> None:
    channel = RFChannel(rf, KINDS, NEAR, seed=seed)
    for tag in range(20):
        placement = channel.place(f"E0{tag:014X}", antenna, float(tag))
        if placement.cross is not None:
            other, strength = placement.cross
            assert other in NEAR[antenna]
            assert strength <= placement.strength
            assert placement.read
        assert abs(placement.strength - rf.rssi_dbm) <= rf.rssi_spread + 1e-9


def test_cross_reads_are_as_frequent_as_the_parameter_says() -> None:
    rf = RFParams(cross_read=0.05)
    channel = RFChannel(rf, KINDS, NEAR, seed=7)
    crossed = sum(channel.place(f"E0{tag:014X}", SEAT_UP, float(tag)).cross is not None
                  for tag in range(20_000))
    assert 0.04 < crossed / 20_000 < 0.06


@given(st.floats(0.0, 0.9), st.integers(0, 1000), st.floats(0.0, 30.0), st.floats(0.0, 60.0))
def test_flicker_misses_lie_on_the_scan_grid_inside_the_interval(
        flicker: float, seed: int, start: float, length: float) -> None:
    rf = RFParams(flicker=flicker)
    channel = RFChannel(rf, KINDS, NEAR, seed=seed)
    placement = channel.place("04AABBCCDD", SEAT_DOWN, start)
    misses = channel.misses(placement, SEAT_DOWN, start, start + length)
    assert misses == sorted(set(misses))
    for at in misses:
        assert start - 1e-9 <= at < start + length
        assert abs(channel.next_scan(SEAT_DOWN, at) - at) < 1e-6
    if flicker == 0.0:
        assert misses == []


def test_flicker_misses_the_share_of_scans_it_says_per_scan_and_per_interval() -> None:
    rf = RFParams(flicker=0.1, scan_period=0.1)
    channel = RFChannel(rf, KINDS, NEAR, seed=3)
    placement = channel.place("04AABBCCDD", SEAT_DOWN, 0.0)
    interval = channel.misses(placement, SEAT_DOWN, 0.0, 2_000.0)
    assert 0.09 < len(interval) / 20_000 < 0.11
    other = RFChannel(rf, KINDS, NEAR, seed=3)
    other.place("04AABBCCDD", SEAT_DOWN, 0.0)
    scans = [other.next_scan(SEAT_DOWN, 0.0) + i * 0.1 for i in range(20_000)]
    missed = sum(not other.reads(SEAT_DOWN, at) for at in scans)
    assert 0.09 < missed / 20_000 < 0.11


def test_a_shadow_hides_every_tag_of_the_antenna_while_it_lasts() -> None:
    channel = RFChannel(RFParams(hand_pass=1.0, hand_pass_seconds=0.3), KINDS, NEAR, seed=1)
    channel.place("04A1", SEAT_UP, 0.0)
    channel.place("04A2", SEAT_DOWN, 0.0)
    cast = channel.hand_pass(SEAT_DOWN, 5.0, random.Random(0), [SEAT_UP])
    assert {key for key, _s, _e in cast} == {SEAT_DOWN, SEAT_UP}
    assert channel.reads(SEAT_DOWN, 4.8) == []
    assert channel.reads(SEAT_UP, 4.9) == []
    assert [r.uid for r in channel.reads(SEAT_DOWN, 5.0)] == ["04A2"]


def test_stack_loss_grows_with_depth_as_the_profile_says() -> None:
    rf = PROFILES["diy"]
    assert read_probability(rf, ZoneKind.SEAT_DOWN, 1) == 1.0
    assert read_probability(rf, ZoneKind.SEAT_DOWN, 2) == pytest.approx(0.95)
    assert read_probability(rf, ZoneKind.SEAT_DOWN, 3) == pytest.approx(0.85)
    assert read_probability(rf, ZoneKind.SEAT_DOWN, 5) == 0.0  # beyond max_stack 4
    assert read_probability(rf, ZoneKind.SEAT_UP, 4) == pytest.approx(0.975)
    channel = RFChannel(rf, KINDS, NEAR, seed=11)
    unread = 0
    for hand in range(4000):
        channel.place(f"04{hand:06X}01", SEAT_DOWN, 0.0)
        unread += not channel.place(f"04{hand:06X}02", SEAT_DOWN, 0.0).read
        channel.remove(f"04{hand:06X}01", 0.0)
        channel.remove(f"04{hand:06X}02", 0.0)
    # 5% stack loss plus 0.5% dead tags among the second cards.
    assert 0.04 < unread / 4000 < 0.07


def test_a_dead_tag_stays_dead_for_the_channel() -> None:
    channel = RFChannel(RFParams(dead_tag=0.5), KINDS, NEAR, seed=5)
    dead = [f"04{tag:08X}" for tag in range(200) if channel.is_dead(f"04{tag:08X}")]
    assert 60 < len(dead) < 140
    for uid in dead:
        for antenna in KINDS:
            placement = channel.place(uid, antenna, 0.0)
            assert not placement.read
            assert placement.why_unread == "dead"
            assert channel.reads(antenna, 0.0) == [] or uid not in {
                r.uid for r in channel.reads(antenna, 0.0)}


def test_profiles_and_overrides() -> None:
    target = PROFILES["no-muck"]
    # The issue-19 target conditions.
    assert (target.muck_depth, target.stack_loss, target.cross_read, target.dead_tag,
            target.peek_rate, target.peek_max) == (0, 0.05, 0.02, 0.005, 0.10, 5.0)
    assert PROFILES["good"].stack_loss == 0.0
    assert PROFILES["good"].dead_tag == 0.0
    custom = profile("diy", ["muck_depth=all", "stack_loss=0.15", "cross_read=0.05"])
    assert (custom.muck_depth, custom.stack_loss, custom.cross_read) == (None, 0.15, 0.05)
    assert parse_override("burn_depth=3") == ("burn_depth", 3)
    assert target.strength_reported is True
    assert profile("no-muck", ["strength_reported=0"]).strength_reported is False
    assert profile("no-muck", ["strength_reported=yes"]).strength_reported is True
    for bad in ("nothing", "muck_depth=-1", "muck_depth=two", "stack_loss=1.5",
                "flicker=nan", "peek_max=11", "stack_loss=abc", "strength_reported=2",
                "strength_reported=maybe"):
        with pytest.raises(ChannelError):
            profile("good", [bad])
    with pytest.raises(ChannelError, match="unknown RF profile"):
        profile("perfect")


@given(params(), st.integers(0, 10_000))
def test_a_peek_lasts_what_the_profile_allows(rf: RFParams, seed: int) -> None:
    seconds = plan_peek(rf, random.Random(seed))
    if seconds is not None:
        assert rf.peek_min <= seconds <= rf.peek_max <= MAX_PEEK
    if rf.peek_rate == 0.0:
        assert seconds is None
