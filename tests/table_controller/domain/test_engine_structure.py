"""The engine's structure, checked on its source (issue 10, "the hand is the unit").

Parsed with :mod:`ast`, never imported: the checks hold for code that is never run.

* No import cycle between the engine's modules (``TYPE_CHECKING`` imports count:
  they are a cycle in the design even when Python does not run them), and in
  particular the console rules never import the dealing tracker.
* No module reaches into another object's privates: no ``other._name`` attribute
  (only ``self._x`` and ``cls._x``), no ``from module import _name``. The console
  rules talk to the hand through ``console.HandPort`` and the tracker asks the
  rules through ``port.HandRules``.
* One place decides whether a hand has a console: ``HandState.attach_console``
  sets it and ``hand.rules`` with it; in the dealing tracker only ``console_input``
  (the first console input) and ``started`` (a console hand) touch ``hand.console``
  or attach one; everything else asks ``hand.rules``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[3] / "table_controller" / "domain" / "engine"
PACKAGE = "table_controller.domain.engine"


def _modules() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for path in sorted(ENGINE.glob("*.py"))
    }


def _engine_imports(tree: ast.Module) -> set[str]:
    """The engine modules ``tree`` imports (any ``from table_controller.domain.engine.x``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + ".").split(".")[0])
            elif node.module == PACKAGE:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.removeprefix(PACKAGE + ".").split(".")[0])
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def _private_reaches(tree: ast.Module) -> list[str]:
    """``x._name`` with ``x`` not ``self``/``cls``, and ``from m import _name``."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (isinstance(node, ast.ImportFrom) and node.module is not None
              and node.module.startswith(PACKAGE)):
            found.extend(
                f"line {node.lineno}: from {node.module} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_")
            )
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    """The checker itself: a cycle of three is found, a tree is not."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_private_finder_finds_a_private_call() -> None:
    """The checker itself: ``engine._alert(...)`` is caught, ``self._alert`` is not."""
    tree = ast.parse("self._alert(1)\nself.engine._alert(1)\nengine._out.append(2)\n")
    assert _private_reaches(tree) == ["line 2: self.engine._alert", "line 3: engine._out"]


def test_engine_modules_import_no_cycle() -> None:
    """Issue 10: no import cycle in the engine; console never imports dealing."""
    modules = _modules()
    graph = {name: _engine_imports(tree) & set(modules) for name, tree in modules.items()}
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"
    assert "dealing" not in graph["console"]
    assert "dealing" not in graph["hand"]
    assert "console" not in graph["hand"]
    assert graph["port"] <= {"betting", "outputs", "pots", "settings", "alerts"}


def test_no_module_calls_another_objects_privates() -> None:
    """Issue 10: no ``engine._alert``, ``engine._out.append``... across objects."""
    problems = {
        name: found for name, tree in _modules().items() if (found := _private_reaches(tree))
    }
    assert problems == {}


def test_only_one_place_decides_whether_a_hand_has_a_console() -> None:
    """Issue 10: the dealing tracker asks ``hand.rules``; only attaching the console
    (and starting a console hand) look at ``hand.console``."""
    tree = _modules()["dealing"]
    tracker = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "HandTracker"
    )
    touching = sorted(
        method.name
        for method in tracker.body
        if isinstance(method, ast.FunctionDef)
        and any(
            isinstance(node, ast.Attribute) and node.attr in ("console", "attach_console")
            for node in ast.walk(method)
        )
    )
    assert touching == ["console_input", "started"]
