"""Issue 20: the daemon's core, its runner and the MQTT publisher keep a shape a
newcomer reads in one sitting: no class with more than :data:`MAX_ATTRIBUTES`
instance attributes, no function longer than :data:`MAX_LINES` lines.

Counted from the source (``ast``), so the check needs no running daemon: every
``self.X = ...`` (or ``self.X: T = ...``) anywhere in the class body is one
attribute. State that belongs together lives in a small object of its own (the
publisher's link, lanes and retained copies; the core's wiring and per-hand
bookkeeping; the runner's start findings and loop flags)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MAX_ATTRIBUTES = 15
"""Instance attributes a class may have (issue 20 "Done when")."""

MAX_LINES = 60
"""Lines a function (its ``def`` to its last line, docstring included) may have."""

CLASSES = {
    "table_controller/daemon/core.py": "TableCore",
    "table_controller/daemon/runner.py": "Daemon",
    "table_controller/mqtt/publisher.py": "MqttPublisher",
}


def _tree(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)


def instance_attributes(cls: ast.ClassDef) -> set[str]:
    """Names assigned as ``self.<name>`` anywhere in ``cls`` (methods, nested blocks)."""
    names: set[str] = set()
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if (isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name)
                        and part.value.id == "self"):
                    names.add(part.attr)
    return names


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    found = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    assert found, f"class {name} not found"
    return found[0]


@pytest.mark.parametrize(("path", "name"), sorted(CLASSES.items()))
def test_class_has_few_instance_attributes(path: str, name: str) -> None:
    attributes = instance_attributes(_class(_tree(path), name))
    assert len(attributes) <= MAX_ATTRIBUTES, (
        f"{name} has {len(attributes)} instance attributes (at most {MAX_ATTRIBUTES}):"
        f" {sorted(attributes)}; group the ones that belong together in a small object")


@pytest.mark.parametrize("path", sorted(CLASSES))
def test_no_function_is_long(path: str) -> None:
    long = [
        f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert not long, f"{path}: functions over {MAX_LINES} lines: {long}"


def test_the_counter_sees_assignments_in_every_form() -> None:
    """The counter itself: plain, annotated, augmented, tuple and nested assignments."""
    tree = ast.parse(
        "class C:\n"
        "    def __init__(self):\n"
        "        self.a = 1\n"
        "        self.b: int = 2\n"
        "        self.c, self.d = 3, 4\n"
        "        if True:\n"
        "            self.e += 1\n"
        "        other.f = 5\n"
        "        self.a.g = 6\n"
    )
    assert instance_attributes(_class(tree, "C")) == {"a", "b", "c", "d", "e"}
