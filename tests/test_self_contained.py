"""The repository is self-contained (issue 24, item 2): a clone alone runs the tests.

* No tracked file reaches outside the repository for data or documents (the reference
  folder that sat beside the checkout while the project was written is gone in a clone).
* Every relative link of the Markdown docs resolves to a file of the repository.
* A fresh copy of the repository, in a temporary directory with nothing beside it, runs
  the tests that read the real WSOP hands and the conformance page, and the README's
  example commands (``scripts/readme-examples``) with the exit codes they promise.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE = re.compile("|".join((
    re.escape("../" + "shared"),
    re.escape("/work/" + "shared"),
    re.escape('"' + 'shared" / "data"'),
    re.escape('"' + 'shared" / "CONFORMANCE'),
)))
"""Ways a file could point at the old reference folder beside the checkout."""

DATA_TESTS = (
    "tests/table_controller/domain/test_wsop_hands.py",
    "tests/table_controller/domain/test_betting_wsop.py",
    "tests/table_controller/records/test_console_wsop.py",
    "tests/table_controller/records/test_phh.py",
    "tests/table_controller/records/test_variants_wsop.py",
    "tests/table_controller/records/test_alert_vocabulary.py",
)
"""The test files that read tests/data/ or docs/conformance.md."""

LINK = re.compile(r"\]\(([^)\s]+)\)")


def repository_files() -> list[Path]:
    """What a clone of the working tree holds once committed: tracked and new
    (not ignored) files that exist, relative to the root."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail(f"{ROOT} is not a git checkout: the self-contained checks need one")
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"],
        check=True, capture_output=True).stdout.decode()
    return sorted({Path(name) for name in listing.split("\0")
                   if name and (ROOT / name).is_file()})


def test_no_file_reaches_outside_the_repository() -> None:
    offenders = []
    for name in repository_files():
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (pictures) point nowhere
        offenders += [f"{name}:{n}: {line.strip()}" for n, line in
                      enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert offenders == []


def test_every_relative_markdown_link_resolves_inside_the_repository() -> None:
    broken = []
    for name in repository_files():
        if name.suffix != ".md":
            continue
        for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue  # web addresses, mailto:, anchors within the page
                path = (ROOT / name).parent / target.split("#", 1)[0]
                resolved = path.resolve()
                if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
                    broken.append(f"{name}:{n}: {target}")
    assert broken == []


def test_the_real_hands_and_their_licence_ship_with_the_repository() -> None:
    data = ROOT / "tests" / "data" / "phh-wsop-2023-event43"
    assert len(sorted(data.glob("stud-hand-*.phh"))) == 13
    assert len(sorted(data.glob("stud-hi-lo-hand-*.phh"))) == 7
    assert len(sorted(data.glob("razz-hand-*.phh"))) == 10
    assert "MIT License" in (data / "LICENSE").read_text(encoding="utf-8")
    readme = (ROOT / "tests" / "data" / "README.md").read_text(encoding="utf-8")
    assert "PokerKit" in readme
    assert "MIT" in readme
    for page in ("rules.md", "conformance.md"):
        assert (ROOT / "docs" / page).is_file(), page


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files alone, in a temporary directory with nothing beside it."""
    clone = tmp_path_factory.mktemp("fresh-clone") / "stud-table"
    for name in repository_files():
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    assert sorted(p.name for p in clone.parent.iterdir()) == ["stud-table"]
    return clone


def clean_env(clone: Path) -> dict[str, str]:
    """The environment of a run inside the copy: its own package first on the path."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PYTHON", "COV_"))}
    env["PYTHONPATH"] = str(clone)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def test_a_fresh_copy_runs_the_data_tests(fresh_copy: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider",
         *DATA_TESTS],
        check=False, cwd=fresh_copy, env=clean_env(fresh_copy), capture_output=True,
        text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout, run.stdout[-2000:]
    assert " skipped" not in run.stdout, run.stdout[-2000:]


def test_a_fresh_copy_runs_the_readme_examples(fresh_copy: Path) -> None:
    # The copy has no .venv of its own: the examples use this one's (its package is
    # the copy's, through PYTHONPATH).
    (fresh_copy / ".venv").symlink_to(Path(sys.executable).parents[1])
    run = subprocess.run(
        [str(fresh_copy / "scripts" / "readme-examples")], check=False, cwd=fresh_copy,
        env=clean_env(fresh_copy), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "README examples gave the exit code the README states" in run.stdout
    assert run.stdout.count("ok (exit ") >= 8
