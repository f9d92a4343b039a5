"""The chart font: Noto Sans CJK SC (OFL), shipped in the package as a subset, so Chinese labels never
depend on the fonts a machine happens to have.

The subset holds exactly what charts can print: every character of the chart templates (templates/<lang>/
chart.j2, which imports no other template), what the number filters write (¥, 分钟, 亿 …), printable ASCII
and Latin-1, and the characters of the card and model names in data/. `tools/subset_chart_font.py`
rebuilds it from the full font; tests/test_charts.py fails when a template gains a character the subset
lacks. Latin glyphs that are missing anyway fall back to matplotlib's own DejaVu Sans.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from core.paths import DATA_DIR, TEMPLATES_DIR

FONT_DIR = Path(__file__).resolve().parent / "fonts"
REGULAR = FONT_DIR / "NotoSansCJKsc-gpufit-Regular.otf"
BOLD = FONT_DIR / "NotoSansCJKsc-gpufit-Bold.otf"
FAMILY = "Noto Sans CJK SC"
FALLBACK = "DejaVu Sans"
CHART_TEMPLATES = ("chart.j2",)  # self-contained: it imports no other template
LANGS = ("en", "zh")
# What bot.render's filters and the drawing itself write besides the templates' own characters.
FILTER_CHARACTERS = "$¥€−–—×±·…≈≤≥↑↓→%‰°分钟小时天万亿"
NAME_FILES = ("cards.toml", "models.toml", "vision_models.toml")
_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)


def template_characters() -> set[str]:
    """Every character the chart templates can print by themselves (comments left out), both languages."""
    chars: set[str] = set()
    for lang in LANGS:
        for name in CHART_TEMPLATES:
            source = (TEMPLATES_DIR / lang / name).read_text(encoding="utf-8")
            chars |= set(_JINJA_COMMENT.sub("", source))
    return {c for c in chars if c.isprintable()}


def name_characters() -> set[str]:
    """The characters of every card and model name in data/ (they are drawn as labels)."""
    chars: set[str] = set()
    for file in NAME_FILES:
        table = tomllib.loads((DATA_DIR / file).read_text(encoding="utf-8"))
        for rows in table.values():
            if isinstance(rows, list):
                for row in rows:
                    if isinstance(row, dict):
                        chars |= set(str(row.get("name", "")))
    return chars


def chart_characters() -> set[str]:
    """What a chart can print: the subset must cover all of it."""
    ascii_and_latin = {chr(c) for c in range(0x20, 0x7F)} | {chr(c) for c in range(0xA0, 0x100)}
    return template_characters() | name_characters() | set(FILTER_CHARACTERS) | ascii_and_latin
