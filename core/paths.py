"""Where the shipped data and templates live: beside core/ in a checkout, an editable install or a wheel."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
TEMPLATES_DIR = ROOT / "templates"


# The public price list; an operator's own file is a setting (GPUFIT_PRICES, bot/settings.py).
PRICES_PATH = DATA_DIR / "prices.toml"
