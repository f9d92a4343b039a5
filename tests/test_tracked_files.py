"""What the repository tracks: never a worktree's .venv.

Each engineer's worktree keeps `.venv` as a symlink to the shared venv (HELPERS.md); `.gitignore` once
said `.venv/`, which matches a directory only, so `git add -A` committed the symlink, and fast-forwarding
/work/main to it replaced the shared venv (an ignored directory, which git treats as expendable) by a
symlink to itself. `.gitignore` now ignores `.venv` in both forms; this check stops a branch that still
tracks it from landing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked(*paths: str) -> list[str]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        [git, "-C", str(ROOT), "ls-files", "--", *paths], capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_no_virtual_environment_is_tracked() -> None:
    assert _tracked(".venv", ".venv-measure", ".venv-vision") == []


def test_gitignore_ignores_a_venv_symlink_too() -> None:
    lines = (ROOT / ".gitignore").read_text().splitlines()
    assert ".venv" in lines
