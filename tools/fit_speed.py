"""Fit data/speed.toml's speed constants to the published figures (data/measured/speed.csv).

The fit itself (objective, priors, search, leave-one-source-out) is core/speed/fitting.py, shared with the
test suite. This prints every figure's ratio gpufit / published before and after (and, with --cross-validate,
with its
source left out of the fit), and writes the fitted values back into speed.toml.

    .venv/bin/python tools/fit_speed.py [--dry-run] [--cross-validate] [--only training,mfu]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.paths import DATA_DIR
from core.speed.fitting import PARAMS, fit, get_value, leave_one_source_out, load_raw, ratios, summary
from core.speed.published import PreparedFigure, prepared_figures


def _format(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"


def write_back(raw: dict[str, Any]) -> None:
    """Replace each fitted value in place, keeping speed.toml's comments and order."""
    path = DATA_DIR / "speed.toml"
    text = path.read_text()
    for param in PARAMS:
        value = _format(get_value(raw, param.path))
        if param.path[0] == "bandwidth":
            block = re.search(
                rf'^\[\[bandwidth\]\]\nmatch = "{re.escape(param.path[1])}"\n(.*?)(?=^\[|\Z)',
                text,
                re.S | re.M,
            )
        else:
            header = ".".join(f'"{p}"' if "." in p else p for p in param.path[:-1])
            block = re.search(rf"^\[{re.escape(header)}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
        assert block, param.path
        body = re.sub(
            rf"^{param.path[-1]} = .*$", f"{param.path[-1]} = {value}", block.group(1), count=1, flags=re.M
        )
        text = text[: block.start(1)] + body + text[block.end(1) :]
    path.write_text(text)


def report(pairs: list[tuple[PreparedFigure, float]], title: str, bound: float) -> None:
    print(f"\n{title}")
    for figure, ratio in pairs:
        flag = "  <-- outside" if not 1 / bound <= ratio <= bound else ""
        f = figure.figure
        print(f"  {f.id:<34} {f.source:<22} {f.published:>12,.2f}  x{ratio:5.2f}{flag}")
    s = summary(pairs)
    print(
        f"  median x{s['median']:.2f}, {s['within_25']:.0f} of {s['n']:.0f} within ±25%, worst "
        f"x{s['worst']:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--cross-validate", action="store_true")
    parser.add_argument(
        "--only",
        default="",
        help="fit only the constants under these comma-separated dotted prefixes (e.g. training,mfu)",
    )
    args = parser.parse_args()
    figures = prepared_figures()
    fitted = [f for f in figures if f.figure.status == "fit"]
    raw = load_raw()
    report(ratios(raw, fitted), "before (data/speed.toml as it is)", 1.25)
    prefixes = [tuple(p.split(".")) for p in args.only.split(",") if p]
    params = [p for p in PARAMS if not prefixes or any(p.path[: len(x)] == x for x in prefixes)]
    raw = fit(raw, figures, params)
    report(ratios(raw, fitted), "after the fit", 1.25)
    excluded = [f for f in figures if f.figure.status == "excluded"]
    report(ratios(raw, excluded), "excluded figures (speed.csv says why)", 1.25)
    if args.cross_validate:
        report(leave_one_source_out(raw, figures), "each source left out of the fit", 1.35)
    if not args.dry_run:
        write_back(raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
