"""Print gpufit / published for every figure of the held-out speed tables (data/measured/speed_heldout*.csv,
speed_heldout_training*.csv), with the constants in data/speed.toml: the outside check of issue 22.

Nothing here fits (tools/fit_speed.py never reads these tables); it only reports. A figure outside ±25% is
flagged; each table ends with its count within ±25%, within 2x, and its median and worst ratio.

    .venv/bin/python tools/speed_heldout.py [--misses] [--exclude 8 ...]

`--exclude` skips every table whose name contains the text, so engineers changing the speed model can keep
the newest held-out tables unseen.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.speed.fitting import load_raw, ratios, summary
from core.speed.published import FITTED_TABLE, TABLES, prepared_figures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--misses", action="store_true", help="list only the figures outside ±25%")
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="TEXT", help="skip tables whose name contains TEXT"
    )
    args = parser.parse_args()
    raw = load_raw()
    for table in TABLES:
        if table == FITTED_TABLE or any(text in str(table) for text in args.exclude):
            continue
        pairs = ratios(raw, prepared_figures(table))
        print(f"\n{table}")
        for prepared, ratio in pairs:
            outside = not 0.8 <= ratio <= 1.25
            if args.misses and not outside:
                continue
            f = prepared.figure
            flag = "  <-- outside ±25%" if outside else ""
            print(f"  {f.id:<40} {f.source:<28} {f.kind:<14} x{ratio:5.2f}{flag}")
        s = summary(pairs)
        within_2x = sum(1 for _, r in pairs if 0.5 <= r <= 2.0)
        print(
            f"  {s['within_25']:.0f} of {s['n']:.0f} within ±25%, {within_2x} within 2x, "
            f"median x{s['median']:.2f}, worst x{s['worst']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
