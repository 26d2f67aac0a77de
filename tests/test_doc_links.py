"""The documentation's links all lead somewhere, and its prose lines stay readable
(issue 24 item 9: the docs map).

Every relative link in README.md, docs/**/*.md and hardware/**/*.md must name a
file or folder that exists, and a ``#fragment`` must be a heading of the page it
points at (GitHub's anchors: lower case, punctuation dropped, spaces as ``-``,
``-1``, ``-2`` for repeats) or an explicit ``<a id>``. Links inside code (fenced
blocks, inline code) are text, not links, and are not checked; nor are web
addresses (``https://``), which a test cannot check without the network.

Prose lines (outside tables and code blocks) are capped at :data:`MAX_PROSE_LINE`
characters: a paragraph held on one enormous line cannot be reviewed in a diff. Table
rows are not capped: Markdown cannot wrap them.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("hardware/**/*.md")])

MAX_PROSE_LINE = 400
"""Characters in one prose line. Loose on purpose: pages with measured figures grow
by appended sentences, and the cap is there to catch a whole section on one line."""

LONG_LINES_ALLOWED: set[str] = set()
"""Pages exempt from :data:`MAX_PROSE_LINE`, each with its reason above."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text: links and code marks as their text, then
    lower case, everything but letters, digits, ``-``, ``_`` and spaces dropped, each
    space a ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text).lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every fragment a link may name on the page ``path``."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose_lines(path):
        found.update(_HTML_ID.findall(line))
        heading = _HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link on the page, code left out."""
    out = []
    for number, line in _prose_lines(path):
        text = _INLINE_CODE.sub("", line)
        out += [(number, target) for target in _LINK.findall(text)]
        reference = _REFERENCE.match(text)
        if reference is not None:
            out.append((number, reference.group(1)))
    return out


def problems(path: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with the links of ``path``: one line each, paths shown from ``root``."""
    found = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        where, _, fragment = target.partition("#")
        goal = (path.parent / unquote(where)).resolve() if where else path
        shown = f"{path.relative_to(root)}:{number}: {target}"
        if not goal.exists():
            found.append(f"{shown}: no such file")
        elif fragment and goal.suffix == ".md" and unquote(fragment) not in anchors(goal):
            found.append(f"{shown}: no heading #{fragment} in {goal.relative_to(root)}")
    return found


def test_the_pages_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/README.md", "docs/mqtt.md", "hardware/README.md"} <= names


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path: Path) -> None:
    assert problems(path) == []


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_prose_line_is_a_whole_section(path: Path) -> None:
    if path.relative_to(ROOT).as_posix() in LONG_LINES_ALLOWED:
        pytest.skip("exempt: see LONG_LINES_ALLOWED")
    long = [f"line {n}: {len(line)} characters" for n, line in _prose_lines(path)
            if len(line) > MAX_PROSE_LINE and not line.lstrip().startswith("|")]
    assert long == []


def test_the_link_checker_catches_what_it_should(tmp_path: Path) -> None:
    """The checker itself: a missing file, a missing anchor, and what it must pass."""
    (tmp_path / "other.md").write_text("# A `code` title: with, punctuation!\n\n## Same\n"
                                       "## Same\n<a id=\"custom\"></a>\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md) [ok](other.md#a-code-title-with-punctuation) [ok](other.md#same-1)\n"
        "[ok](other.md#custom) [ok](#local) [web](https://example.org/x#y) `[code](nope.md)`\n"
        "[bad](nope.md) [bad](other.md#nothing)\n\n## Local\n\n```\n[fenced](nope.md)\n```\n",
        encoding="utf-8")
    assert problems(page, tmp_path) == [
        "page.md:3: nope.md: no such file",
        "page.md:3: other.md#nothing: no heading #nothing in other.md"]
