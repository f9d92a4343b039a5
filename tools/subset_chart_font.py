"""Rebuild bot/charts/fonts/*.otf: Noto Sans CJK SC cut down to the characters charts print.

    apt-get install fonts-noto-cjk        # the full font (OFL), ~20 MB per weight
    .venv/bin/python tools/subset_chart_font.py

fontTools comes with matplotlib. Run it after a chart template gains characters (tests/test_charts.py says
when). The subset keeps the font's name, so matplotlib finds it as "Noto Sans CJK SC".
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.charts.fonts import BOLD, REGULAR, chart_characters

SOURCE_DIR = Path("/usr/share/fonts/opentype/noto")
SOURCES = {REGULAR: "NotoSansCJK-Regular.ttc", BOLD: "NotoSansCJK-Bold.ttc"}
FAMILY = "Noto Sans CJK SC"


def main() -> int:
    text = "".join(sorted(chart_characters()))
    for target, name in SOURCES.items():
        collection = TTCollection(str(SOURCE_DIR / name))
        font = next(f for f in collection.fonts if f["name"].getDebugName(1) == FAMILY)
        options = subset.Options()
        options.layout_features = ["kern", "palt"]
        options.name_IDs = ["*"]
        options.notdef_outline = True
        options.hinting = False
        options.desubroutinize = False
        subsetter = subset.Subsetter(options)
        subsetter.populate(text=text)
        subsetter.subset(font)
        font.recalcTimestamp = False  # the same characters give the same bytes
        target.parent.mkdir(parents=True, exist_ok=True)
        font.save(str(target))
        print(f"{target}: {len(text)} characters, {target.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
