"""The Makefile heals a bad set-up (issue 20): it checks the interpreter (3.11 or newer) before making .venv,
says how to pick one, and rebuilds a .venv made by another or too old an interpreter. Run against a copy of
the Makefile in a temporary folder with stand-in interpreters (no network, no real venv)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _interpreter(path: Path, version: str) -> Path:
    """A stand-in `python` of that version: answers --version, the version check and the identity line."""
    major, minor = (int(x) for x in version.split(".")[:2])
    old = "1" if (major, minor) < (3, 11) else "0"
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then echo "Python {version}"; exit 0; fi\n'
        f'case "$2" in *version_info\\ \\<*) exit {old};;\n'
        f'  *base_prefix*) echo "/opt/python {version}";; esac\n'
        "exit 0\n"
    )
    path.chmod(0o755)
    return path


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_too_old_an_interpreter_is_refused_with_how_to_pick_one(checkout: Path) -> None:
    old = _interpreter(checkout / "python3.10", "3.10.12")
    done = _make(checkout, f"PYTHON={old}", "run")
    assert done.returncode != 0
    assert "gpufit needs Python 3.11 or newer" in done.stderr and "Python 3.10.12" in done.stderr
    assert "make PYTHON=python3.12 run" in done.stderr
    assert not (checkout / ".venv").exists()  # refused before anything was made


def _venv_made_by(checkout: Path, version: str) -> None:
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    _interpreter(bin_dir / "python", version)
    (checkout / ".venv" / ".installed").touch()


def test_a_venv_made_by_an_old_interpreter_is_rebuilt(checkout: Path) -> None:
    _venv_made_by(checkout, "3.10.12")
    good = _interpreter(checkout / "python3.12", "3.12.1")
    plan = _make(checkout, "-n", f"PYTHON={good}", "run").stdout
    assert "rm -rf .venv" in plan and f"{good} -m venv .venv" in plan


def test_a_venv_made_by_another_interpreter_than_asked_is_rebuilt(checkout: Path) -> None:
    _venv_made_by(checkout, "3.11.7")
    asked = _interpreter(checkout / "python3.12", "3.12.1")
    assert f"{asked} -m venv .venv" in _make(checkout, "-n", f"PYTHON={asked}", "run").stdout
    same = _interpreter(checkout / "python3.11", "3.11.7")
    kept = _make(checkout, "-n", f"PYTHON={same}", "run").stdout
    assert "-m venv" not in kept and "gpufit start" in kept
    assert "-m venv" not in _make(checkout, "-n", "run").stdout  # no PYTHON given: a good venv is kept
