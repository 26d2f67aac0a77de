"""The four pictures of docs/README.md are drawn from the code's own tables
(scripts/diagrams.py: Phase and expected_face, deploy/acl, deploy/*.service,
hardware/layouts/table-8.toml) and the checked-in SVGs are what it draws now (issue 24,
item 9): change a phase, an ACL line or the layout and this test says to redraw."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("hand-phases.svg", "topic-access.svg", "deployment.svg", "antenna-layout.svg")


def test_the_checked_in_diagrams_are_what_the_code_draws() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "diagrams.py"), "--check"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr


def test_each_diagram_is_an_svg_the_map_shows() -> None:
    docs_map = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        root = ET.parse(ROOT / "docs" / "diagrams" / name).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", name
        assert f"diagrams/{name}" in docs_map, name


def test_the_topic_picture_keeps_secure_topics_to_the_production_room() -> None:
    text = (ROOT / "docs" / "diagrams" / "topic-access.svg").read_text(encoding="utf-8")
    assert ">secure/state<" in text
    assert ">cmd/dealer<" in text
