"""Building the package prints no warnings of its own (license format, package data setuptools cannot see)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_builds_without_setuptools_warnings(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("core", "bot", "data", "templates"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"),
            *("-w", str(tmp_path / "out"), str(source)),
        ],
        capture_output=True,
        text=True,
        check=False,
        # pip and the tools it probes (rustup writes ~/.rustup/settings.toml) keep state in HOME: this
        # test's own temporary folder, not the user's
        env={**os.environ, "HOME": str(tmp_path / "home"), "PIP_NO_CACHE_DIR": "1"},
    )
    assert built.returncode == 0, built.stderr
    complaints = [
        line for line in (built.stdout + built.stderr).splitlines() if "Warning" in line or "!!" in line
    ]
    assert complaints == []
    wheel = next((tmp_path / "out").glob("gpufit-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"data/prices.toml", "data/measured/memory.csv", "templates/bot_start.j2"} <= names
    assert "templates/zh/checklist_sheet.j2" in names
    assert {"templates/fit.j2", "templates/locale/zh/LC_MESSAGES/gpufit.po"} <= names
