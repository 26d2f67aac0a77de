#!/usr/bin/env python3
"""Draw the four pictures of docs/README.md from the project's own tables, as SVG.

    .venv/bin/python scripts/diagrams.py          # (re)write docs/diagrams/*.svg
    .venv/bin/python scripts/diagrams.py --check  # exit 1 if a file is stale

What each picture is drawn from, so it cannot drift from the code:

* ``hand-phases.svg``: the phases of ``engine.hand.Phase`` and, per street, the face
  each card is dealt with (``engine.hand.expected_face``);
* ``topic-access.svg``: every topic the daemon may publish and the commands, per role,
  with read/write access computed from ``deploy/acl`` by MQTT topic matching;
* ``deployment.svg``: the systemd units of ``deploy/`` (their ``Description``) around
  the broker, with the topics each reads (from the same ACL roles);
* ``antenna-layout.svg``: ``hardware/layouts/table-8.toml`` loaded by the daemon's own
  layout loader: every seat's zones with reader id and antenna port.

tests/test_diagrams.py runs ``--check``. Not part of the product (no runtime use).
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from table_controller.domain.engine.hand import Phase, expected_face  # noqa: E402
from table_controller.domain.zones import ZoneKind  # noqa: E402
from table_controller.mqtt.console_commands import COMMANDS  # noqa: E402
from table_controller.table.layout import load_layout  # noqa: E402

OUT = ROOT / "docs" / "diagrams"
FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""
INK, MUTED, LINE = "#1d2733", "#5b6775", "#8896a5"
FILLS = {"phase": "#e8f1fb", "street": "#fdf3e1", "secure": "#fbe4e4", "public": "#e6f4ea",
         "cmd": "#efe8fb", "box": "#f4f6f8"}


# ------------------------------------------------------------------ SVG helpers


def svg(width: int, height: int, title: str, body: list[str]) -> str:
    """A whole SVG document (deterministic: the same input gives the same bytes)."""
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\""
        " markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        f"<path d=\"M0,0 L10,5 L0,10 z\" fill=\"{LINE}\"/></marker></defs>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        *body, "</svg>", ""])


def text(x: float, y: float, words: str, *, size: int = 13, anchor: str = "middle",
         color: str = INK, bold: bool = False) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}" {FONT} font-size="{size}"'
            f' text-anchor="{anchor}" fill="{color}"{weight}>{escape(words)}</text>')


def box(x: float, y: float, w: float, h: float, lines: list[str],  # noqa: PLR0917
        fill: str, *, size: int = 13) -> list[str]:
    """A rounded box with centred lines (the first bold); x, y, w, h as in SVG."""
    out = [f'<rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="8"'
           f' fill="{fill}" stroke="{LINE}"/>']
    top = y + h / 2 - (len(lines) - 1) * (size + 3) / 2 + size / 3
    for i, line in enumerate(lines):
        out.append(text(x + w / 2, top + i * (size + 3), line, size=size, bold=i == 0))
    return out


def wrap(words: str, width: int) -> list[str]:
    """``words`` in lines of at most ``width`` characters (broken at spaces)."""
    lines: list[str] = []
    for word in words.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def arrow(x1: float, y1: float, x2: float, y2: float, label: str = "", *,
          dy: float = -6) -> list[str]:
    out = [f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}"'
           f' stroke="{LINE}" stroke-width="1.5" marker-end="url(#arrow)"/>']
    if label:
        out.append(text((x1 + x2) / 2, (y1 + y2) / 2 + dy, label, size=11, color=MUTED))
    return out


# ------------------------------------------------------------ 1. hand phases


PHASE_STEPS = {
    (Phase.FORMING, Phase.DEALING): "3rd street dealt: its seats play",
    (Phase.DEALING, Phase.ENDED): "showdown, last seat, end",
    (Phase.ENDED, Phase.CLEARED): "seat zones emptied",
}
"""What moves a hand from one phase to the next (docs/engine.md "The hand's phases")."""


def hand_phases() -> str:
    phases = list(Phase)
    body: list[str] = [text(20, 30, "A hand's phases (engine.hand.Phase) and its streets",
                            size=16, anchor="start", bold=True)]
    w, h, gap, y = 150, 54, 170, 60
    xs = [30 + i * (w + gap) for i in range(len(phases))]
    for x, phase in zip(xs, phases, strict=True):
        note = {Phase.FORMING: "auto hand: seats join", Phase.DEALING: "cards checked",
                Phase.ENDED: "result known", Phase.CLEARED: "next card: next hand"}[phase]
        body += box(x, y, w, h, [phase.value, note], FILLS["phase"])
    for (a, b), label in PHASE_STEPS.items():
        i, j = phases.index(a), phases.index(b)
        body += arrow(xs[i] + w + 4, y + h / 2, xs[j] - 4, y + h / 2, label, dy=-10)
    body.append(text(xs[1] + w / 2, y + h + 20, "a hand line with players starts here",
                     size=11, color=MUTED))
    # Streets inside "dealing": each card's face from expected_face.
    streets: dict[int, list[str]] = {}
    for number in range(1, 8):
        street = 3 if number <= 3 else number
        face = "down" if expected_face(number) is ZoneKind.DOWN else "up"
        streets.setdefault(street, []).append(face)
    sw, sgap, sy = 140, 40, 190
    body.append(text(20, sy - 22, "Inside dealing: five streets, a betting round after each"
                     " (console hands)", size=13, anchor="start", color=MUTED))
    sx = [30 + i * (sw + sgap) for i in range(len(streets))]
    for x, (street, faces) in zip(sx, sorted(streets.items()), strict=True):
        burn = "burn, then " if street > 3 else ""
        body += box(x, sy, sw, 70, [f"{street}th street" if street > 3 else "3rd street",
                                    f"{burn}{len(faces)} card{'s' if len(faces) > 1 else ''}",
                                    " + ".join(faces)], FILLS["street"])
    for a, b in itertools.pairwise(sx):
        body += arrow(a + sw, sy + 35, b, sy + 35)
    body.append(text(sx[-1] + sw / 2, sy + 92, "then the showdown", size=11, color=MUTED))
    return svg(max(xs[-1] + w, sx[-1] + sw) + 30, sy + 110, "Hand phases and streets", body)


# --------------------------------------------------- 2. topics and who may read

ACL = ROOT / "deploy" / "acl"


def acl_rules() -> dict[str, list[tuple[str, str]]]:
    """role -> [(access, filter)] of deploy/acl; "any client" holds the pattern lines."""
    rules: dict[str, list[tuple[str, str]]] = {"any client": []}
    user = None
    for raw in ACL.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # a comment line ("#" inside is a filter)
            continue
        words = line.split()
        if words[0] == "user":
            user = words[1]
            rules.setdefault(user, [])
        elif words[0] == "pattern":
            rules["any client"].append((words[1], words[2]))
        elif words[0] == "topic" and user is not None:
            access, topic = (words[1], words[2]) if len(words) == 3 else ("readwrite", words[1])
            rules[user].append((access, topic))
    return rules


def matches(topic_filter: str, topic: str) -> bool:
    """MQTT topic matching (``+`` one level, ``#`` the rest; ``%c`` a client id)."""
    f, t = topic_filter.split("/"), topic.split("/")
    for i, level in enumerate(f):
        if level == "#":
            return True
        if i >= len(t) or (level not in ("+", "%c") and level != t[i]):
            return False
    return len(f) == len(t)


def access_of(rules: list[tuple[str, str]], topic: str) -> str:
    can = {access for access, topic_filter in rules if matches(topic_filter, topic)}
    read = bool(can & {"read", "readwrite"})
    write = bool(can & {"write", "readwrite"})
    return ("R" if read else "") + ("W" if write else "")


def published_topics(rules: dict[str, list[tuple[str, str]]]) -> list[str]:
    """The topics under a table's root: what the daemon may write, then the commands."""
    levels = []
    for access, topic_filter in rules["stud-daemon"]:
        rest = topic_filter.split("/", 3)[3]
        if "write" in access and not rest.startswith("cmd"):
            levels.append(rest.replace("#", "<id>").replace("+", "<client>"))
    return levels + [f"cmd/{name}" for name in ("rebirth", *COMMANDS)]


def topic_access() -> str:
    rules = acl_rules()
    roles = [r for r in rules if r != "stud-daemon"]
    topics = published_topics(rules)
    col0, colw, rowh, top = 230, 128, 24, 96
    width = col0 + colw * (len(roles) + 1) + 20
    body = [text(20, 30, "MQTT topics under stud/v1/<table>/ and who may use them",
                 size=16, anchor="start", bold=True),
            text(20, 52, "R read, W write: computed from deploy/acl (Mosquitto). \"any client\""
                 " applies to every user too. Red rows hold live hole cards.", size=12,
                 anchor="start", color=MUTED)]
    heads = ["stud-daemon", *roles]
    for i, head in enumerate(heads):
        body.append(text(col0 + colw * i + colw / 2, top - 12, head, size=12, bold=True))
    for r, level in enumerate(topics):
        y = top + r * rowh
        sample = "stud/v1/t1/" + level.replace("<id>", "1").replace("<client>", "me")
        kind = ("secure" if level.startswith("secure/") else
                "cmd" if level.startswith("cmd/") else "public")
        body.append(f'<rect x="14" y="{y:.0f}" width="{width - 28}" height="{rowh - 2}"'
                    f' rx="4" fill="{FILLS[kind]}"/>')
        body.append(text(24, y + 16, level, size=12, anchor="start"))
        for i, role in enumerate(heads):
            # reply/%c: every client reads its own replies; a sample id stands for it.
            mark = access_of(rules[role], sample)
            body.append(text(col0 + colw * i + colw / 2, y + 16, mark or "-", size=12,
                             color=INK if mark else LINE, bold=bool(mark)))
    return svg(width, top + len(topics) * rowh + 20, "Topics and access", body)


# --------------------------------------------------------------- 3. deployment


def units() -> list[tuple[str, str]]:
    """(unit file, Description) of each systemd unit in deploy/."""
    found = []
    for path in sorted((ROOT / "deploy").glob("*.service")):
        match = re.search(r"^Description=(.+)$", path.read_text(encoding="utf-8"), re.M)
        found.append((path.name, match.group(1) if match else ""))
    return found


SERVICE_USERS = {
    "stud-table-archive.service": "hand archive (SQLite or PostgreSQL): hands, alerts",
    "stud-table-broadcast.service": "overlay (delayed), venue and producer pages",
    "stud-table-floor.service": "casino floor dashboard: alerts, hands, dealers",
}
"""Who each service serves (the arrow on its right)."""


def deployment() -> str:
    described = dict(units())
    body = [text(20, 30, "Deployment: the table machine, the broker, the services, the rooms",
                 size=16, anchor="start", bold=True)]
    body += box(20, 70, 240, 220, [], FILLS["box"])
    body.append(text(140, 92, "table machine (Debian)", bold=True))
    body += box(40, 110, 200, 50, ["RFID readers", "USB serial, one per 2 seats"], "#ffffff",
                size=12)
    daemon = described.get("stud-table.service", "").removeprefix("stud-table ")
    body += box(40, 190, 200, 84, ["stud-table.service", *wrap(daemon, 30), "journal on disk"],
                FILLS["phase"], size=11)
    body += arrow(140, 160, 140, 190, "frames", dy=4)
    body += box(340, 150, 180, 80, ["Mosquitto broker", "TLS, deploy/acl", "stud/v1/<table>/#"],
                FILLS["cmd"], size=12)
    body += arrow(240, 230, 340, 200, "publish")
    services = [u for u in described if u not in ("stud-table.service", "stud-table@.service")]
    for i, unit in enumerate(services):
        y = 60 + i * 100
        body += box(600, y, 250, 76, [unit, *wrap(described[unit].removeprefix("stud-table "),
                                                  36)], FILLS["street"], size=11)
        body += arrow(520, 190, 600, y + 38)
        body += box(930, y, 230, 76, wrap(SERVICE_USERS.get(unit, ""), 30), FILLS["public"],
                    size=12)
        body += arrow(850, y + 38, 930, y + 38)
    body += box(340, 300, 180, 60, ["production room", "secure/#: every card"],
                FILLS["secure"], size=12)
    body += arrow(430, 230, 430, 300, "secure/# (production user)", dy=4)
    body.append(text(20, 320, "several tables: stud-table@<table>.service", size=11,
                     anchor="start", color=MUTED))
    body.append(text(20, 336, "per table on one machine", size=11, anchor="start",
                     color=MUTED))
    return svg(1180, 380, "Deployment", body)


# ----------------------------------------------------------- 4. antenna layout

LAYOUT = ROOT / "hardware" / "layouts" / "table-8.toml"


def antenna_layout() -> str:
    layout = load_layout(LAYOUT)
    where: dict[str, str] = {}
    for reader in layout.readers:
        for port, zone in sorted(reader.antennas.items()):
            where[zone.name] = f"reader {reader.id} port {port}"
    body = [text(20, 30, f"Antenna layout: {layout.name or LAYOUT.name}"
                 f" ({LAYOUT.relative_to(ROOT)})", size=16, anchor="start", bold=True)]
    cx, cy, rx, ry = 520, 330, 430, 250
    body.append(f'<ellipse cx="{cx}" cy="{cy}" rx="{rx - 120}" ry="{ry - 90}" fill="#2f6b4f"'
                ' stroke="#1f4a36" stroke-width="6"/>')
    span = math.radians(230)  # seats round the far side; the dealer sits in the gap
    for seat in range(1, layout.seats + 1):
        # Screen angles (y down): the dealer at the bottom (90 degrees), facing the
        # table; seat 1 on the dealer's left, then clockwise as seen from above.
        angle = math.pi / 2 + (2 * math.pi - span) / 2 + span * (seat - 0.5) / layout.seats
        x, y = cx + rx * math.cos(angle), cy + ry * math.sin(angle)
        lines = [f"seat {seat}"]
        for kind in ("down", "up"):
            zone = f"seat{seat}.{kind}"
            lines.append(f"{kind}: {where.get(zone, 'no antenna')}")
        body += box(x - 85, y - 30, 170, 60, lines, "#ffffff", size=11)
    dealer = [f"{zone}: {where[zone]}" for zone in ("burn", "muck", "board") if zone in where]
    body += box(cx - 110, cy + ry - 40, 220, 20 + 15 * len(dealer), ["dealer", *dealer],
                FILLS["street"], size=11)
    return svg(1040, cy + ry + 40, "Antenna layout", body)


DIAGRAMS = {
    "hand-phases.svg": hand_phases,
    "topic-access.svg": topic_access,
    "deployment.svg": deployment,
    "antenna-layout.svg": antenna_layout,
}


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    stale = []
    OUT.mkdir(exist_ok=True)
    for name, draw in DIAGRAMS.items():
        path = OUT / name
        drawn = draw()
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != drawn:
                stale.append(name)
        else:
            path.write_text(drawn, encoding="utf-8")
    if stale:
        print(f"diagrams: stale in docs/diagrams: {', '.join(stale)}; run"
              " .venv/bin/python scripts/diagrams.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
