#!/usr/bin/env python3
"""Fit each measured component's activation coefficients (bytes per token × width [× layers]) to
data/measured/vision.csv and write them into data/vision_models.toml (`coefficients = { ... }`, just before
the component's `source`). For every case: (peak - everything but activations) / activation units; the
median over a component's cases of one job is its coefficient. Prints every case's own value.

    .venv/bin/python tools/fit_vision.py            # fit and write
    .venv/bin/python tools/fit_vision.py --dry-run  # fit and print only
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.vision.measured import activation_split, fit_coefficients, vision_cases  # noqa: E402
from core.vision.registry import load_vision_registry  # noqa: E402


def fitted() -> dict[str, dict[str, float]]:
    registry = load_vision_registry()
    cases = vision_cases()
    for case in cases:
        values = activation_split(case, registry).values(case.peak_bytes)
        shown = "  ".join(f"{k} {v:9.2f}" for k, v in values.items())
        print(f"{case.case_id:60s} {shown}")
    return fit_coefficients(cases, registry)


def main() -> int:
    path = ROOT / "data" / "vision_models.toml"
    dry = "--dry-run" in sys.argv[1:]
    text = path.read_text()
    for comp_id, slots in sorted(fitted().items()):
        body = ", ".join(f"{k} = {v}" for k, v in sorted(slots.items()))
        line = f"coefficients = {{ {body} }}"
        block = re.compile(
            r'(\[\[component\]\]\nid = "' + re.escape(comp_id) + r'"\n(?:(?!\[\[)(?!source = ).*\n)*?)'
            r"(?:coefficients = \{[^}]*\}\n)?(source = )"
        )
        text, n = block.subn(lambda m, line=line: m.group(1) + line + "\n" + m.group(2), text, count=1)
        print(f"{comp_id}: {line}" if n else f"{comp_id}: NOT FOUND")
    if not dry:
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
