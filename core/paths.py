"""Where the shipped data and templates live: beside core/ in a checkout, an editable install or a wheel."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
TEMPLATES_DIR = ROOT / "templates"


def prices_path() -> Path:
    """An operator's own price file (same schema) replaces the public one with one setting."""
    override = os.environ.get("GPUFIT_PRICES")
    return Path(override) if override else DATA_DIR / "prices.toml"
