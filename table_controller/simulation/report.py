"""The detection report: injected errors matched to the alerts the table raised.

Rules of attribution (every alert carries the number of its hand):

* a hand with an injected **deal** or **console** kind is *flagged* when the kind's code (at the
  injected seat, when the injection names one) is among the hand's alerts; its
  other alerts are *secondary* (consequences of the same mistake: shown, never
  counted as false);
* any alert in a **clean** hand, or in a **reader_flicker** hand, or with no hand
  at all (a reader going offline between hands), is a *false alert*;
* alerts in a **wire_noise** hand are secondary too: a lost frame can delay a card
  until the reader's next inventory, which a dealer would see as a card out of
  order; what noise must never cause is a wrong card (``wire`` figures);
* notices (``community_card`` of rule 15, ``beaten_on_board`` of rule 19,
  ``upcards_lifted`` of rule 10: what the engine reports as needing no action)
  are not alerts: counted apart, per code, and never as false alerts. An alert
  bearing one of those codes would be a false alert like any other.

Precision of a code = flagged / (flagged + false alerts with that code).

With an RF channel (``--rf``) two more rules apply:

* an injection whose evidence (the first card put down differently from the clean
  deal) the channel never read (a dead tag, a stack or a pile too deep), or that is
  missed in a hand where a dead tag was dealt, is *masked*:
  counted per reason and left out of the recall, which is over what the table could
  see; a kind the read conditions make undetectable as a whole
  (:func:`~.rf.undetectable_kinds`) is listed with the reason, its figures shown but
  left out of the total recall;
* an alert in a clean hand where a dead tag was dealt is a *dead-tag alert*
  (a documented consequence of a tag nobody can read, to be answered by manual
  entry): counted apart per code, not as false; every other alert in a clean hand is
  false as before.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from firmware_bridge.rf_channel import RFParams
from table_controller.simulation.kinds import KINDS, WIRE_NOISE, Level
from table_controller.simulation.plan import SimHand
from table_controller.simulation.rf import undetectable_kinds

MAX_LISTED: Final = 20
"""Missed injections and false alerts listed by hand, for a look at the cases."""


@dataclass(frozen=True, slots=True)
class ObservedAlert:
    """An alert (or, with ``notice``, a notice) as the table raised it: its hand
    number, code and seat."""

    hand: int | None
    code: str
    seat: int | None
    notice: bool = False
    """A notice (needs no action): counted apart, never a false alert."""


@dataclass(frozen=True, slots=True)
class HandRF:
    """What the RF channel did to one hand, as the report needs it."""

    dead: int = 0
    """Dead tags dealt in the hand."""
    masked: str | None = None
    """Why the injected error's evidence was never read (None: it was read)."""
    peeks: int = 0
    cross_reads: int = 0
    unread: tuple[tuple[str, int], ...] = ()
    """Placements never read, per reason (``dead``, ``stack``, ``pile``)."""


@dataclass(slots=True)
class KindTally:
    """Counts for one kind."""

    injected: int = 0
    flagged: int = 0
    not_injectable: int = 0
    false_alerts: int = 0
    """Deal kinds: false alerts bearing this kind's code anywhere. Reader kinds:
    false alerts raised in this kind's hands."""
    secondary: Counter[str] = field(default_factory=Counter)
    masked: Counter[str] = field(default_factory=Counter)
    """Injections not flagged whose evidence the RF channel never read, per reason."""

    @property
    def detectable(self) -> int:
        """Injections the channel let the table see (not masked)."""
        return self.injected - sum(self.masked.values())

    def recall(self, level: Level) -> float | None:
        """flagged / detectable injections (deal and console kinds with at least one)."""
        if level is Level.READER or not self.detectable:
            return None
        return self.flagged / self.detectable

    def precision(self, level: Level) -> float | None:
        """flagged / (flagged + false alerts) for a deal or console kind's code."""
        if level is Level.READER or not self.flagged + self.false_alerts:
            return None
        return self.flagged / (self.flagged + self.false_alerts)


class SimulationInterrupted(Exception):  # noqa: N818 - it is the user's Ctrl-C, not an error
    """Ctrl-C during a run: the hands fully dealt so far and what they raised, for a
    partial report (:func:`simulate` turns it into one)."""

    def __init__(self, planned: list[SimHand], alerts: list[ObservedAlert],
                 wire: dict[str, int] | None = None) -> None:
        super().__init__("interrupted")
        self.planned = planned
        self.alerts = alerts
        self.wire = wire


@dataclass(slots=True)
class DetectionReport:
    """The whole run's figures; build with :meth:`judge`, print with :func:`render`."""

    mode: str
    seed: int
    rates: dict[str, float]
    betting: bool = False
    """The players bet through the console (``--betting``)."""
    game: str = "stud"
    """The game dealt (``--game``: stud, razz, stud8)."""
    hands: int = 0
    seconds: float = 0.0
    kinds: dict[str, KindTally] = field(default_factory=dict)
    clean_hands: int = 0
    false_alerts: Counter[str] = field(default_factory=Counter)
    notices: Counter[str] = field(default_factory=Counter)
    """Notices by code (module docstring): what needed no action."""
    missed: list[dict[str, Any]] = field(default_factory=list)
    false_listed: list[dict[str, Any]] = field(default_factory=list)
    wire: dict[str, int] | None = None
    """Daemon mode: ``wrong_cards`` (journaled placements the dealer never made) and
    ``missed_cards`` (placements never journaled)."""
    interrupted_of: int | None = None
    """Ctrl-C stopped the run: the hands asked for (``hands`` is those fully dealt)."""
    rf: dict[str, Any] | None = None
    """The RF channel (``--rf``): profile, parameters, undetectable kinds, and what it
    did over the run (hands with dead tags, peeks, cross-reads, unread placements)."""
    undetectable: dict[str, str] = field(default_factory=dict)
    dead_tag_alerts: Counter[str] = field(default_factory=Counter)
    """Alerts in clean hands where a dead tag was dealt (not false: module docstring)."""

    def set_rf(self, name: str, params: RFParams) -> None:
        """Record the channel the run deals through."""
        self.undetectable = undetectable_kinds(params)
        self.rf = {"profile": name, "params": params.describe(),
                   "undetectable": dict(self.undetectable), "dead_tag_hands": 0,
                   "peeks": 0, "cross_reads": 0, "unread_placements": Counter(), "masked": 0}

    def tally(self, kind: str) -> KindTally:
        """The tally of ``kind`` (created on first use)."""
        return self.kinds.setdefault(kind, KindTally())

    def judge(self, hands: Iterable[SimHand], alerts: Iterable[ObservedAlert],
              rf: Mapping[int, HandRF] | None = None) -> None:
        """Match ``alerts`` to the planned ``hands`` (module docstring) and count;
        ``rf``: what the RF channel did to each hand."""
        by_hand: dict[int | None, list[ObservedAlert]] = {}
        for alert in alerts:
            by_hand.setdefault(alert.hand, []).append(alert)
        seen: set[int] = set()
        for hand in hands:
            seen.add(hand.number)
            facts = rf.get(hand.number) if rf else None
            if facts is not None and self.rf is not None:
                self.rf["dead_tag_hands"] += facts.dead > 0
                self.rf["peeks"] += facts.peeks
                self.rf["cross_reads"] += facts.cross_reads
                self.rf["unread_placements"].update(dict(facts.unread))
            self._judge_hand(hand, by_hand.get(hand.number, []), facts)
        for number, stray in by_hand.items():
            if number is None or number not in seen:
                for alert in stray:
                    if alert.notice:
                        self.notices[alert.code] += 1
                    else:
                        self._false(alert, None)

    def _judge_hand(self, hand: SimHand, alerts: list[ObservedAlert],
                    facts: HandRF | None = None) -> None:
        self.hands += 1
        if hand.not_injectable is not None:
            self.tally(hand.not_injectable).not_injectable += 1
        errors = []
        for alert in alerts:
            if alert.notice:
                self.notices[alert.code] += 1
            else:
                errors.append(alert)
        if hand.kind is None:
            self.clean_hands += 1
            for alert in errors:
                if facts is not None and facts.dead:
                    self.dead_tag_alerts[alert.code] += 1
                else:
                    self._false(alert, None)
            return
        spec = KINDS[hand.kind]
        tally = self.tally(hand.kind)
        tally.injected += 1
        if spec.level is Level.READER:
            for alert in errors:
                if hand.kind == WIRE_NOISE:
                    tally.secondary[alert.code] += 1
                else:
                    self._false(alert, hand.kind)
            return
        match = next(
            (a for a in errors if a.code == hand.expected_code
             and (hand.expected_seat is None or a.seat == hand.expected_seat)),
            None,
        )
        if match is not None:
            tally.flagged += 1
        elif facts is not None and (facts.masked is not None or facts.dead):
            # The channel hid the evidence, or a dead tag in the hand left the table a
            # card short (what manual entry is for): not the table's miss.
            tally.masked[facts.masked or "dead tag in the hand"] += 1
            if self.rf is not None:
                self.rf["masked"] += 1
        elif len(self.missed) < MAX_LISTED:
            self.missed.append({
                "hand": hand.number, "kind": hand.kind, "seat": hand.expected_seat,
                "alerts": [[a.code, a.seat] for a in errors],
            })
        for alert in errors:
            if alert is not match:
                tally.secondary[alert.code] += 1

    def _false(self, alert: ObservedAlert, reader_kind: str | None) -> None:
        self.false_alerts[alert.code] += 1
        if reader_kind is not None:
            self.tally(reader_kind).false_alerts += 1
        elif alert.code in KINDS:
            self.tally(alert.code).false_alerts += 1
        if len(self.false_listed) < MAX_LISTED:
            self.false_listed.append(
                {"hand": alert.hand, "code": alert.code, "seat": alert.seat,
                 "in": reader_kind or "clean hand"}
            )

    # ------------------------------------------------------------- figures

    def _counted(self, kind: str) -> bool:
        return KINDS[kind].expects_alert and kind not in self.undetectable

    @property
    def injected(self) -> int:
        """Deal- and console-kind errors injected (kinds the read conditions leave
        detectable)."""
        return sum(t.injected for k, t in self.kinds.items() if self._counted(k))

    @property
    def detectable(self) -> int:
        """Of those, the injections whose evidence the channel read."""
        return sum(t.detectable for k, t in self.kinds.items() if self._counted(k))

    @property
    def flagged(self) -> int:
        """Deal- and console-kind errors flagged (detectable kinds)."""
        return sum(t.flagged for k, t in self.kinds.items() if self._counted(k))

    @property
    def recall(self) -> float | None:
        """All detectable deal kinds together, over the injections the channel let
        the table see."""
        return self.flagged / self.detectable if self.detectable else None

    @property
    def precision(self) -> float | None:
        """Flagged over flagged plus every false alert."""
        total = self.flagged + sum(self.false_alerts.values())
        return self.flagged / total if total else None

    @property
    def hands_per_second(self) -> float:
        """Hands simulated per second of wall time."""
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        """The report as ``stud-table simulate --json`` prints it."""
        kinds = {}
        for name, spec in KINDS.items():
            tally = self.kinds.get(name)
            if tally is None:
                if name not in self.rates:
                    continue
                tally = KindTally()
            kinds[name] = {
                "level": spec.level.value,
                "rate": self.rates.get(name, 0.0),
                "injected": tally.injected,
                "flagged": tally.flagged if spec.expects_alert else None,
                "recall": tally.recall(spec.level),
                "false_alerts": tally.false_alerts,
                "precision": tally.precision(spec.level),
                "secondary_alerts": dict(sorted(tally.secondary.items())),
                "not_injectable": tally.not_injectable,
            }
            if self.rf is not None:
                kinds[name]["masked"] = dict(sorted(tally.masked.items()))
                kinds[name]["undetectable"] = self.undetectable.get(name)
        return {
            "mode": self.mode,
            "game": self.game,
            "seed": self.seed,
            "hands": self.hands,
            "seconds": round(self.seconds, 3),
            "hands_per_second": round(self.hands_per_second, 1),
            "clean_hands": self.clean_hands,
            "kinds": kinds,
            "totals": {
                "injected": self.injected,
                "flagged": self.flagged,
                "recall": self.recall,
                "false_alerts": sum(self.false_alerts.values()),
                "precision": self.precision,
            },
            "false_alerts": dict(sorted(self.false_alerts.items())),
            "notices": dict(sorted(self.notices.items())),
            "missed": list(self.missed),
            "false_alert_list": list(self.false_listed),
            "wire": dict(self.wire) if self.wire is not None else None,
            **({"rf": {**self.rf, "dead_tag_alerts": dict(sorted(self.dead_tag_alerts.items())),
                       "unread_placements": dict(sorted(self.rf["unread_placements"].items())),
                       "detectable": self.detectable}}
               if self.rf is not None else {}),
        }


def _pct(value: float | None) -> str:
    # Rounded down: 64,850 of 64,851 must not print as 100.00%.
    return "-" if value is None else f"{math.floor(10_000 * value) / 100:.2f}%"


def _hands(count: int) -> str:
    return "1 hand" if count == 1 else f"{count} hands"


def render(report: DetectionReport) -> str:
    """The report as a table for people."""
    data = report.as_json()
    stopped = ("" if report.interrupted_of is None else
               f" (interrupted by Ctrl-C: {report.interrupted_of} asked for)")
    lines = [
        f"stud-table simulate: {_hands(data['hands'])}{stopped}, mode {data['mode']}"
        f"{', players betting' if report.betting else ''}"
        f"{'' if report.game == 'stud' else ', game ' + report.game}, seed {data['seed']},"
        f" {data['seconds']:.1f} s ({data['hands_per_second']:g} hands/s)",
        "",
        f"{'kind':<24}{'rate':>7}{'injected':>10}{'flagged':>9}{'recall':>9}"
        f"{'false':>7}{'precision':>11}  secondary alerts",
    ]
    for name, row in data["kinds"].items():
        secondary = ", ".join(f"{code} {n}" for code, n in row["secondary_alerts"].items())
        skipped = f" (no place in {row['not_injectable']} hands)" if row["not_injectable"] else ""
        if row.get("masked"):
            skipped += " (channel hid " + ", ".join(
                f"{n} {why}" for why, n in row["masked"].items()) + ")"
        if row.get("undetectable"):
            skipped += " [undetectable]"
        flagged = "-" if row["flagged"] is None else str(row["flagged"])
        lines.append(
            f"{name:<24}{row['rate']:>7g}{row['injected']:>10}{flagged:>9}"
            f"{_pct(row['recall']):>9}{row['false_alerts']:>7}{_pct(row['precision']):>11}"
            f"  {secondary or '-'}{skipped}"
        )
    totals = data["totals"]
    lines += [
        "",
        f"total: {totals['injected']} errors injected, {totals['flagged']} flagged"
        f" (recall {_pct(totals['recall'])}), {totals['false_alerts']} false alerts"
        f" (precision {_pct(totals['precision'])}); {data['clean_hands']} clean hands",
    ]
    if data["false_alerts"]:
        lines.append("false alerts: " + _counts(data["false_alerts"]))
    if data["notices"]:
        lines.append("notices (no action needed, not errors): " + _counts(data["notices"]))
    if data.get("rf") is not None:
        rf = data["rf"]
        params = ", ".join(f"{k}={v}" for k, v in rf["params"].items())
        lines.append(f"RF channel {rf['profile']}: {params}")
        unread = _counts(rf["unread_placements"]) or "none"
        lines.append(f"  placements never read: {unread}; {rf['cross_reads']}"
                     f" cross-reads, {rf['peeks']} peeks, {rf['dead_tag_hands']} hands with a"
                     f" dead tag (their alerts: {_counts(rf['dead_tag_alerts']) or 'none'}),"
                     f" {rf['masked']} injections hidden by the channel")
        for kind, why in rf["undetectable"].items():
            lines.append(f"  undetectable here: {kind}: {why}")
    if data["wire"] is not None:
        lines.append(f"cards on the wire: {data['wire']['wrong_cards']} wrong,"
                     f" {data['wire']['missed_cards']} missed")
    for miss in data["missed"]:
        lines.append(f"missed: hand {miss['hand']} {miss['kind']} seat {miss['seat']},"
                     f" alerts {miss['alerts'] or 'none'}")
    for alert in data["false_alert_list"]:
        lines.append(f"false: hand {alert['hand']} {alert['code']} seat {alert['seat']}"
                     f" ({alert['in']})")
    return "\n".join(lines)


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{code} {n}" for code, n in counts.items())
