"""Every benchmark under bench/ still imports, and the quick ones run at tiny sizes
(issue 25: a figure must be re-runnable; bench_broadcast.py had stopped importing).

No figures are checked (benchmarks print them; tests assert no timing). The room
benchmark's tiny run is tests/floor/test_bench_room.py (it needs a broker).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted((ROOT / "bench").glob("*.py"))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=900, check=False, cwd=ROOT)


def test_every_bench_imports() -> None:
    """Each bench module's top level runs (imports, constants), without its main."""
    loader = (
        "import importlib.util, sys\n"
        "for path in sys.argv[1:]:\n"
        "    name = 'bench_probe_' + path.rsplit('/', 1)[1][:-3]\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    sys.modules[name] = module  # dataclasses look their module up\n"
        "    sys.path.insert(0, str(__import__('pathlib').Path(path).parent))\n"
        "    spec.loader.exec_module(module)\n"
        "    print('ok', path)\n"
    )
    done = _run("-c", loader, *map(str, BENCHES))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("ok ") == len(BENCHES)


def test_cli_start_bench_runs() -> None:
    """bench_cli_start.py, one start per door: every door exits 0 and is reported."""
    done = _run("bench/bench_cli_start.py", "--runs", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    doors = [row["door"] for row in figures["rows"]]
    assert any("--help" in door for door in doors)
    assert any("replay" in door for door in doors)
    assert sum("equity" in door for door in doors) == 2


@pytest.mark.parametrize("bench", ["bench_equity.py"])
def test_equity_bench_runs(bench: str) -> None:
    """bench_equity.py on one fresh spot per kind, every game."""
    done = _run(f"bench/{bench}", "--spots", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    for game in ("stud:", "razz:", "stud8:"):
        assert game in done.stdout
