#!/usr/bin/env python3
"""Print each measured component's activation coefficient (bytes per token × width [× layers]) as fitted to
data/measured/vision.csv: for every case, (peak - everything but activations) / activation units, with the
component's current coefficient set to 1. Paste the medians into data/vision_models.toml.

    .venv/bin/python tools/fit_vision.py
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.vision.measured import estimated_tracked_bytes, vision_cases
from core.vision.registry import Coefficients, load_vision_registry


def _slot(job: str, gc: bool) -> str:
    if job in ("denoise", "vae_decode", "text_encode", "infer"):
        return "infer"
    return f"{job}_gc" if gc else job


def main() -> int:
    registry = load_vision_registry()
    fits: dict[tuple[str, str], list[float]] = defaultdict(list)
    for case in vision_cases():
        comp = registry.component(case.component)
        slot = _slot(case.job, case.gc)
        zero = Coefficients()
        one = Coefficients(**{slot: 1.0})
        registry.components[comp.id] = comp.model_copy(update={"coefficients": zero})
        base = estimated_tracked_bytes(case, registry)
        registry.components[comp.id] = comp.model_copy(update={"coefficients": one})
        unit = estimated_tracked_bytes(case, registry) - base
        registry.components[comp.id] = comp
        if unit > 0:
            fits[(comp.id, slot)].append((case.peak_bytes - base) / unit)
            print(f"{case.case_id:60s} {slot:9s} {(case.peak_bytes - base) / unit:10.2f}")
    print()
    for (comp, slot), values in sorted(fits.items()):
        median = statistics.median(values)
        print(f"{comp:28s} {slot:9s} median {median:9.2f}  range {min(values):.2f}-{max(values):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
