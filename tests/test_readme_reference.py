"""The README names every flag of every command and every topic the daemon publishes
(issue 24, item 7: flags and topics that existed but the README omitted)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from table_controller.tools.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
            ) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(command path, option strings) of every option of every (sub)command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options(sub, (*path, name))
        elif action.option_strings and "--help" not in action.option_strings:
            yield " ".join(path), tuple(action.option_strings)


def test_every_flag_is_in_the_readme() -> None:
    words = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", README))
    missing = [f"stud-table {command} {'/'.join(flags)}" for command, flags in
               options(build_parser()) if not words & set(flags)]
    assert missing == []


def test_every_published_topic_is_in_the_readme() -> None:
    acl = (ROOT / "deploy" / "acl").read_text(encoding="utf-8")
    daemon = acl.split("user stud-daemon", 1)[1].split("\nuser ", 1)[0]
    topics = re.findall(r"^topic write stud/v1/\+/(\S+)$", daemon, flags=re.MULTILINE)
    assert len(topics) > 10
    missing = [topic for topic in topics
               if f"`{topic.removesuffix('/#').removesuffix('/+')}" not in README]
    assert missing == []
