"""Issue 13: the layout walk's logic (pure), property-tested against a simulated
installer on a table whose real wiring may differ from its layout."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_controller.table.layout import load_layout
from table_controller.tools.layout_walk import (
    LayoutWalk,
    Prompt,
    Summary,
    TakeOff,
    Verdict,
    WalkOutput,
)

LAYOUT = load_layout(Path(__file__).resolve().parents[2] / "hardware/layouts/table-3.toml")
MAP = {antenna: zone.name for antenna, zone in LAYOUT.antenna_map.items()}
ZONES = [zone.name for zone in LAYOUT.zones]
SETTLE, TIMEOUT = 1.0, 30.0


class Installer:
    """Walks a table whose antennas are *really* wired as ``wiring`` (antenna -> the
    zone it lies under), some ``dead``; a card put on a zone is seen by the live
    antennas under it, and by ``bleed`` neighbours too."""

    def __init__(self, wiring: dict[tuple[int, int], str], dead: set[tuple[int, int]],
                 bleed: dict[str, tuple[int, int]], rng: random.Random) -> None:
        self.wiring, self.dead, self.bleed, self.rng = wiring, dead, bleed, rng
        self.now = 0.0
        self.out: list[WalkOutput] = []

    def under(self, zone: str) -> list[tuple[int, int]]:
        seen = [a for a, z in self.wiring.items() if z == zone and a not in self.dead]
        if zone in self.bleed and self.bleed[zone] not in self.dead:
            seen.append(self.bleed[zone])
        return seen

    def run(self, walk: LayoutWalk) -> list[WalkOutput]:
        pending = walk.start(self.now)
        card = 0
        while pending:
            self.out.extend(pending)
            step, pending = pending[-1], []
            if isinstance(step, Prompt):
                card += 1
                uid = f"{0x04000000 + card:08X}"
                antennas = self.under(step.zone)
                if not antennas:
                    self.now += TIMEOUT + 0.01
                    pending = walk.tick(self.now)
                    continue
                for antenna in antennas:
                    self.now += self.rng.choice([0.0, 0.1, 0.3])
                    pending += walk.observe(*antenna, frozenset({uid}), self.now)
                if not pending:
                    self.now += SETTLE + 0.01
                    pending = walk.tick(self.now)
                self.last = (uid, antennas)
            elif isinstance(step, TakeOff):
                uid, antennas = self.last
                for antenna in antennas:
                    self.now += 0.2
                    pending += walk.observe(*antenna, frozenset(), self.now)
        return self.out


@st.composite
def tables(draw: st.DrawFn) -> tuple[dict[tuple[int, int], str], set[tuple[int, int]],
                                     dict[str, tuple[int, int]], int]:
    """The layout's wiring with some ports swapped on a reader, some antennas dead
    and some zones bleeding onto another antenna."""
    wiring = dict(MAP)
    antennas = sorted(wiring)
    for _ in range(draw(st.integers(0, 3))):
        a, b = draw(st.sampled_from(antennas)), draw(st.sampled_from(antennas))
        wiring[a], wiring[b] = wiring[b], wiring[a]
    dead = set(draw(st.lists(st.sampled_from(antennas), max_size=3)))
    bleed = draw(st.dictionaries(st.sampled_from(ZONES), st.sampled_from(antennas), max_size=2))
    return wiring, dead, bleed, draw(st.integers(0, 2**32))


@settings(max_examples=150)
@given(tables())
def test_verdicts_match_the_real_wiring(
    table: tuple[dict[tuple[int, int], str], set[tuple[int, int]],
                 dict[str, tuple[int, int]], int],
) -> None:
    """One prompt and one verdict per zone, in layout order, then one summary. A zone
    is OK exactly when the antennas that really lie under it are all mapped to it by
    the layout; a failed verdict names the antennas that saw the card; the summary
    is OK exactly when every zone is."""
    wiring, dead, bleed, seed = table
    installer = Installer(wiring, dead, bleed, random.Random(seed))
    out = installer.run(LayoutWalk(ZONES, MAP, settle=SETTLE, timeout=TIMEOUT))
    prompts = [o.zone for o in out if isinstance(o, Prompt)]
    verdicts = [o for o in out if isinstance(o, Verdict)]
    assert prompts == ZONES
    assert [v.zone for v in verdicts] == ZONES
    assert isinstance(out[-1], Summary)
    assert sum(isinstance(o, Summary) for o in out) == 1
    for verdict in verdicts:
        seen = installer.under(verdict.zone)
        assert set(verdict.seen) == set(seen)
        assert verdict.ok == (bool(seen) and all(MAP.get(a) == verdict.zone for a in seen))
        if not verdict.ok and seen:
            for reader, port in seen:
                if MAP.get((reader, port)) != verdict.zone:
                    assert f"reader {reader} port {port}" in verdict.text
    summary = out[-1]
    assert isinstance(summary, Summary)
    assert summary.ok == all(v.ok for v in verdicts)
    # A swap is named exactly for two zones each read only on the other's antennas.
    for first, second in summary.swaps:
        assert {MAP.get(a) for a in first.seen} == {second.zone}
        assert {MAP.get(a) for a in second.seen} == {first.zone}
        assert "are swapped" in second.text


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from(sorted(MAP)),
                          st.frozensets(st.sampled_from(["04000001", "04000002", "04000003"])),
                          st.floats(0, 40)), max_size=80))
def test_any_sequence_of_sightings_keeps_the_walk_in_order(
    steps: list[tuple[tuple[int, int], frozenset[str], float]],
) -> None:
    """Whatever the antennas report and however time jumps, the walk prompts the
    zones in order, gives at most one verdict per prompted zone, each after its
    prompt, and the summary at most once, last."""
    walk = LayoutWalk(ZONES, MAP, settle=SETTLE, timeout=TIMEOUT)
    now = 0.0
    out = walk.start(now)
    for (reader, port), tags, step in steps:
        now += step
        out += walk.observe(reader, port, tags, now)
        out += walk.tick(now)
    prompts = [o.zone for o in out if isinstance(o, Prompt)]
    verdicts = [o.zone for o in out if isinstance(o, Verdict)]
    assert prompts == ZONES[:len(prompts)]
    assert verdicts == prompts[:len(verdicts)]
    assert len(prompts) - len(verdicts) in (0, 1)
    summaries = [i for i, o in enumerate(out) if isinstance(o, Summary)]
    assert summaries in ([], [len(out) - 1])
    assert walk.done == bool(summaries)


def _verdict(output: WalkOutput) -> Verdict:
    assert isinstance(output, Verdict)
    return output


def test_the_words_of_each_verdict() -> None:
    """The messages the issue asks for, word for word."""
    mapping = {(2, 5): "seat3.up", (2, 6): "seat3.down", (2, 7): "seat4.up"}
    walk = LayoutWalk(["seat3.up", "seat3.down", "seat4.up"], mapping, settle=1.0, timeout=5.0)
    assert walk.start(0.0) == [Prompt("seat3.up", 1, 3)]
    assert walk.observe(2, 5, frozenset({"04AA0001"}), 1.0) == []
    [ok, take_off] = walk.tick(2.0)
    assert _verdict(ok).text == "seat3.up: seen by reader 2 port 5 — OK"
    assert take_off == TakeOff("seat3.up")
    assert walk.observe(2, 5, frozenset(), 3.0) == [Prompt("seat3.down", 2, 3)]
    walk.observe(2, 7, frozenset({"04AA0002"}), 4.0)
    [wrong, _] = walk.tick(5.0)
    assert _verdict(wrong).text == ("seat3.down: card seen on reader 2 port 7 (seat4.up)"
                          " — check the antenna wiring")
    [nxt] = walk.observe(2, 7, frozenset(), 6.0)
    assert nxt == Prompt("seat4.up", 3, 3)
    [dead, summary] = walk.tick(11.0)
    assert _verdict(dead).text.startswith("seat4.up: no card seen in 5 s on any antenna"
                                " (reader 2 port 7 expected) — dead antenna")
    assert isinstance(summary, Summary)
    assert not summary.ok
    assert summary.lines[0] == "1 of 3 zones OK; 2 to fix:"
    assert walk.done


def test_a_card_left_on_the_table_is_not_the_answer() -> None:
    """Tags already lying on antennas when a zone is prompted do not count for it."""
    walk = LayoutWalk(["seat1.up"], {(1, 0): "seat1.up", (1, 1): "seat1.down"},
                      settle=0.5, timeout=10.0)
    walk.observe(1, 1, frozenset({"04BB0001"}), 0.0)  # left behind on seat1.down
    walk.start(0.0)
    assert walk.observe(1, 1, frozenset({"04BB0001"}), 1.0) == []
    walk.observe(1, 0, frozenset({"04BB0002"}), 2.0)
    [verdict, _] = walk.tick(3.0)
    assert _verdict(verdict).ok


def test_overlapping_antennas_fail_the_zone() -> None:
    walk = LayoutWalk(["seat1.up"], {(1, 0): "seat1.up", (1, 1): "seat1.down"},
                      settle=0.5, timeout=10.0)
    walk.start(0.0)
    walk.observe(1, 0, frozenset({"04CC0001"}), 1.0)
    walk.observe(1, 1, frozenset({"04CC0001"}), 1.2)
    [output, _] = walk.tick(1.6)
    verdict = _verdict(output)
    assert not verdict.ok
    assert "also on reader 1 port 1 (seat1.down) — antennas overlap" in verdict.text


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one zone"):
        LayoutWalk([], {})
    with pytest.raises(ValueError, match="timeout"):
        LayoutWalk(["burn"], {}, timeout=0)


def test_a_swapped_pair_of_ports_is_named_as_a_swap() -> None:
    """Issue 23: seat3.up's card read on seat3.down's port and the other way round
    is one fault, a swap, named in the second verdict and in the summary."""
    mapping = {(2, 5): "seat3.up", (2, 6): "seat3.down", (2, 7): "seat4.up"}
    walk = LayoutWalk(["seat3.up", "seat3.down", "seat4.up"], mapping, settle=1.0, timeout=5.0)
    walk.start(0.0)
    walk.observe(2, 6, frozenset({"04AA0001"}), 1.0)  # seat3.up's card on port 6
    [first, _] = walk.tick(2.0)
    assert _verdict(first).text == ("seat3.up: card seen on reader 2 port 6 (seat3.down)"
                                    " — check the antenna wiring")
    walk.observe(2, 6, frozenset(), 3.0)
    walk.observe(2, 5, frozenset({"04AA0002"}), 4.0)  # seat3.down's card on port 5
    [second, _] = walk.tick(5.0)
    swap = ("seat3.up and seat3.down are swapped: seat3.up's card was read on reader 2"
            " port 6 and seat3.down's on reader 2 port 5 — exchange those two cables, or"
            " the two ports' zones in the layout")
    assert _verdict(second).text == ("seat3.down: card seen on reader 2 port 5 (seat3.up)"
                                     f" — a swap: {swap}")
    walk.observe(2, 5, frozenset(), 6.0)
    walk.observe(2, 7, frozenset({"04AA0003"}), 7.0)
    [_ok, _] = walk.tick(8.0)
    [summary] = walk.observe(2, 7, frozenset(), 9.0)
    assert isinstance(summary, Summary)
    assert summary.lines[0] == "1 of 3 zones OK; 2 to fix:"
    assert summary.lines[-1] == f"  swap: {swap}"
    assert len(summary.swaps) == 1


def test_a_card_on_the_wrong_zone_alone_is_not_a_swap() -> None:
    """A one-way mistake (seat3.up read on seat4.up's port, seat4.up fine) is wiring,
    not a swap."""
    mapping = {(2, 5): "seat3.up", (2, 7): "seat4.up"}
    walk = LayoutWalk(["seat3.up", "seat4.up"], mapping, settle=1.0, timeout=5.0)
    walk.start(0.0)
    walk.observe(2, 7, frozenset({"04AA0001"}), 1.0)
    walk.tick(2.0)
    walk.observe(2, 7, frozenset(), 3.0)
    walk.observe(2, 7, frozenset({"04AA0002"}), 4.0)
    [verdict, _] = walk.tick(5.0)
    assert _verdict(verdict).ok
    [summary] = walk.observe(2, 7, frozenset(), 6.0)
    assert isinstance(summary, Summary)
    assert summary.swaps == ()
    assert not any("swap" in line for line in summary.lines)
