"""Benchmark: hands per second through the rules engine, against PokerKit in the same run.

    .venv/bin/python bench/bench_engine.py [--hands 10000] [--seed 1] [--fold-chance 0.05]
                                           [--game stud|razz|stud8|all ...]
                                           [--instructions [--instruction-hands 200]]

The hands (random size 2-8 on random seats, random cards, a few folds, the rest to
7th street and showdown) are generated as zone events *before* timing by
:func:`table_controller.simulation.deal_random`. The engine replays each hand's
events (``replay_events``: a fresh engine, every event applied, showdown).
PokerKit plays the same hands through its class for the game
(``FixedLimitSevenCardStud``, ``FixedLimitRazz``,
``FixedLimitSevenCardStudHighLowSplitEightOrBetter``) with the same cards, burns
and folds, everyone else checking or calling (table_controller/testing/pokerkit_stud.py).
The same hands are timed for every game asked (``--game all``, the default: stud,
razz and stud8 in turn, docs/rules.md "Variants"). Printed per game: median and p99 time
per hand, hands per second, and the ratios. Target (issue 3, issue 10): the engine
at least 10 times faster than PokerKit in every game; issue 25: 15 times.

``--instructions`` also counts the instructions each side executes per hand, under
valgrind's callgrind, in the same run (issue 25: a figure the machine's load does not
move, where the clock ratio wanders by more than the gap to the target). How, and why
it is exact:

* A child process (this file again, ``PYTHONHASHSEED=0``) runs under
  ``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_PyEval_CallTracing
  --dump-after=_PyEval_CallTracing``: nothing is counted until the interpreter enters
  ``_PyEval_CallTracing``, the C function behind :func:`sys.call_tracing`, which
  nothing else in the engine, PokerKit or the standard library they use calls. The
  child calls it once per measurement around a plain loop over the hands, so the
  imports, the hand generation and the warm-up are never counted, and every
  measurement is written to a dump file of its own (counts reset after each).
  ``sys.call_tracing`` with no trace function set leaves tracing off: the code runs
  as it does in the timed bench.
* Each game gets three measurements, in order: the loop over no hands (the marker's
  and the loop's own cost, about 2,000 instructions), the engine over the first
  ``--instruction-hands`` hands of the timed list (the same seed, so the same hands),
  PokerKit over the same hands. Per hand = (measurement - empty loop) / hands: what
  ``runs_for`` does for one hand in the clock bench, with the garbage collections it
  triggers, and nothing else.
* The child warms up as the clock bench does (``variants.warm_up``, then the
  ``WARM_UP`` hands of seed + 1 through both sides for every game), so both sides
  are counted in their steady state.

Callgrind finds ``_PyEval_CallTracing`` in the interpreter's symbol table (pyenv and
python.org builds keep it; a stripped interpreter needs its debug symbols): without
it no dump is written, and the mode says so and exits 2, as it does when valgrind is
not installed (``scripts/setup`` installs it). Under callgrind the work runs about
50-100 times slower: 200 hands a game take several minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from table_controller.domain.engine.dealing import replay_events
from table_controller.domain.engine.settings import TableSettings
from table_controller.domain.engine.variants import warm_up
from table_controller.domain.hands import Game
from table_controller.simulation import PhysicalDeal, random_hands
from table_controller.testing.pokerkit_stud import play

ROOT = Path(__file__).resolve().parents[1]

WARM_UP = 50
"""Untimed hands run through both before measuring."""

MARKER = "_PyEval_CallTracing"
"""The C function callgrind counts inside (:func:`sys.call_tracing` enters it)."""

SIDES = ("empty", "engine", "PokerKit")
"""The child's measurements per game, in order (``empty``: the loop over no hands)."""


def time_interleaved(
    hands: Sequence[PhysicalDeal],
    runs: Sequence[Callable[[PhysicalDeal], object]],
    clock: Callable[[], int] = time.perf_counter_ns,
) -> list[list[int]]:
    """Nanoseconds per hand for each of ``runs``, hand by hand in turn.

    Interleaving makes both see the same machine load, so the ratio holds even on a
    busy CI box where a run of one after the other would not.
    """
    times: list[list[int]] = [[] for _ in runs]
    for hand in hands:
        for run, out in zip(runs, times, strict=True):
            start = clock()
            run(hand)
            out.append(clock() - start)
    return times


def engine_replay(hand: PhysicalDeal, settings: TableSettings | None = None) -> object:
    """The engine's work for one hand: a fresh engine, every event, showdown."""
    return replay_events(hand.events, settings)


def runs_for(game: Game) -> list[Callable[[PhysicalDeal], object]]:
    """The engine and PokerKit, each playing ``game``."""
    settings = TableSettings(game=game)

    def engine(hand: PhysicalDeal) -> object:
        return engine_replay(hand, settings)

    def reference(hand: PhysicalDeal) -> object:
        return play(hand, game)

    return [engine, reference]


def summary(name: str, times: Sequence[int]) -> tuple[float, float]:
    """Print one line; return (median ms, hands per second)."""
    ordered = sorted(times)
    median = statistics.median(ordered) / 1e6
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1e6
    rate = len(times) / (sum(times) / 1e9)
    print(f"{name:<9} median {median:8.3f} ms   p99 {p99:8.3f} ms   {rate:10,.0f} hands/s")
    return median, rate


@dataclass(frozen=True, slots=True)
class CpuRun:
    """One game's CPU-time run: per-hand nanoseconds of each side, in hand order."""

    engine: list[int]
    reference: list[int]

    def ratio(self) -> float:
        """PokerKit's CPU time over the engine's, all hands (the hands/s ratio)."""
        return sum(self.reference) / sum(self.engine)


def _play_hands(run: Callable[[PhysicalDeal], object], hands: Sequence[PhysicalDeal]) -> None:
    # The measured loop: nothing but the per-hand work the clock bench times.
    for hand in hands:
        run(hand)


def callgrind_child(games: Sequence[Game], count: int, seed: int, fold_chance: float,
                    warm_hands: int) -> None:
    """Run under callgrind: warm up, then one :data:`MARKER` call per measurement.

    Prints one ``measure GAME SIDE HANDS`` line per measurement, in the order of the
    dump files, for the parent to label them.
    """
    hands = random_hands(count, seed, fold_chance)
    warm_up()
    warm = random_hands(warm_hands, seed + 1, fold_chance)
    for game in games:
        time_interleaved(warm, runs_for(game))
    for game in games:
        engine, reference = runs_for(game)
        for side, run, played in (("empty", engine, []), ("engine", engine, hands),
                                  ("PokerKit", reference, hands)):
            sys.call_tracing(_play_hands, (run, played))
            print(f"measure {game} {side} {len(played)}", flush=True)


def _dump_total(path: Path) -> int:
    match = re.search(r"^summary:\s*(\d+)", path.read_text(errors="replace"), re.MULTILINE)
    if match is None:
        raise ValueError(f"{path}: no summary line")
    return int(match.group(1))


def count_instructions(games: Sequence[Game], count: int, seed: int, fold_chance: float,
                       warm_hands: int) -> dict[Game, tuple[float, float]]:
    """Instructions per hand of (engine, PokerKit) for each game, from one callgrind
    run of :func:`callgrind_child` (the module docstring says how).

    Exits 2 with a one-line message if valgrind is missing or callgrind never saw
    :data:`MARKER`.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("bench_engine: --instructions needs valgrind (callgrind), which is not"
              " installed: scripts/setup installs it (apt-get install valgrind)",
              file=sys.stderr)
        sys.exit(2)
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory(prefix="bench_engine_cg.") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            valgrind, "--tool=callgrind", "--collect-atstart=no",
            f"--toggle-collect={MARKER}", f"--dump-after={MARKER}",
            f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()),
            "--callgrind-child", "--game", *[str(g) for g in games],
            "--instruction-hands", str(count), "--seed", str(seed),
            "--fold-chance", str(fold_chance), "--warm-up", str(warm_hands),
        ]
        child = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if child.returncode != 0:
            sys.stderr.write(child.stderr[-3000:])
            sys.exit(f"bench_engine: the callgrind run failed (exit {child.returncode})")
        labels = [line.split()[1:] for line in child.stdout.splitlines()
                  if line.startswith("measure ")]
        dumps = sorted(Path(tmp).glob("callgrind.out.*"),
                       key=lambda p: int(p.name.rsplit(".", 1)[1]))
        if len(dumps) != len(labels):
            print(f"bench_engine: callgrind wrote {len(dumps)} dumps for {len(labels)}"
                  f" measurements: it does not see {MARKER} in {sys.executable} (a"
                  " stripped interpreter? install its debug symbols)", file=sys.stderr)
            sys.exit(2)
        totals = {(game, side): (_dump_total(dump), int(hands))
                  for (game, side, hands), dump in zip(labels, dumps, strict=True)}
    result: dict[Game, tuple[float, float]] = {}
    for game in games:
        empty, _ = totals[str(game), "empty"]
        per_hand = []
        for side in ("engine", "PokerKit"):
            total, played = totals[str(game), side]
            per_hand.append((total - empty) / played)
        result[game] = (per_hand[0], per_hand[1])
    return result


def print_instructions(counts: dict[Game, tuple[float, float]], cpu: dict[Game, CpuRun],
                       count: int) -> None:
    """The instruction counts per game beside the CPU-time ratio of the same run, and
    each side's implied instructions per second (its instructions per hand over its
    CPU time per hand on the same hands: a sanity check, a core runs a few G/s)."""
    print(f"-- instructions per hand (callgrind, the first {count} hands, after the"
          " same warm-up; PYTHONHASHSEED=0)")
    for game, (engine, reference) in counts.items():
        line = (f"{game:<6} engine {engine / 1e6:7.3f} M   PokerKit {reference / 1e6:7.3f} M"
                f"   engine / PokerKit: {reference / engine:.1f}x on instructions")
        run = cpu.get(game)
        if run is not None:
            same = slice(0, count)
            engine_ns = statistics.mean(run.engine[same])
            reference_ns = statistics.mean(run.reference[same])
            line += (f", {run.ratio():.1f}x on CPU time (target: 15x, issue 25);"
                     f" implied G instr/s on CPU (mean of the same hands):"
                     f" engine {engine / engine_ns:.2f}, PokerKit {reference / reference_ns:.2f}"
                     f" (PokerKit on its median hand of the whole run:"
                     f" {reference / statistics.median(run.reference):.2f})")
        print(line)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fold-chance", type=float, default=0.05)
    parser.add_argument("--game", choices=("stud", "razz", "stud8", "all"), default="all",
                        nargs="+")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per hand under callgrind")
    parser.add_argument("--instruction-hands", type=int, default=200,
                        help="hands counted under callgrind per game (the first of --hands)")
    parser.add_argument("--warm-up", type=int, default=WARM_UP, help=argparse.SUPPRESS)
    parser.add_argument("--callgrind-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.instruction_hands < 1 or args.hands < 1:
        parser.error("--hands and --instruction-hands must be at least 1")
    names = [args.game] if isinstance(args.game, str) else args.game
    games = list(Game) if "all" in names else [Game(name) for name in names]
    if args.callgrind_child:
        callgrind_child(games, args.instruction_hands, args.seed, args.fold_chance,
                        args.warm_up)
        return
    if args.instructions and shutil.which("valgrind") is None:
        # Said before the clock runs, not after minutes of them.
        count_instructions(games, 0, args.seed, args.fold_chance, 0)

    hands = random_hands(args.hands, args.seed, args.fold_chance)
    events = sum(len(hand.events) for hand in hands)
    seventh = sum(hand.last_street == 7 for hand in hands)
    print(
        f"{len(hands)} hands, {events} zone events ({events / len(hands):.1f} per hand),"
        f" {seventh / len(hands):.0%} dealt to 7th street"
    )
    # Warm-up, untimed: steady-state hands are what a running table sees. The daemon
    # obtains the evaluator's tables and fills the dealer's words before its first
    # input (variants.warm_up); without it the engine here valued each new rank
    # multiset one at a time (the replay door's way since issue 25), about a fifth of
    # its instructions per hand in a short run. PokerKit warms up on the hands below.
    warm_up()
    warm = random_hands(args.warm_up, args.seed + 1, args.fold_chance)
    for game in games:
        time_interleaved(warm, runs_for(game))
    cpu: dict[Game, CpuRun] = {}
    for game in games:
        for label, clock in (("wall clock", time.perf_counter_ns),
                             ("CPU time", time.process_time_ns)):
            # CPU time of this process is what the work costs whatever else the
            # machine runs; wall clock is what a table sees. Both, each in its own
            # interleaved run.
            print(f"-- {game}, {label}")
            engine, reference = time_interleaved(hands, runs_for(game), clock)
            engine_median, engine_rate = summary("engine", engine)
            ref_median, ref_rate = summary("PokerKit", reference)
            print(
                f"engine / PokerKit ({game}): {engine_rate / ref_rate:.1f}x hands/s,"
                f" {ref_median / engine_median:.1f}x on the median hand (target: 15x, issue 25)"
            )
            if label == "CPU time":
                cpu[game] = CpuRun(engine, reference)
    if args.instructions:
        count = min(args.instruction_hands, len(hands))
        counts = count_instructions(games, count, args.seed, args.fold_chance, args.warm_up)
        print_instructions(counts, cpu, count)


if __name__ == "__main__":
    main()
