"""Fit data/calibration.toml's activation coefficients to the measured peaks (data/measured/memory.csv).

Minimises the squared log error of the estimator's tracked bytes (total less runtime overhead) against
MemTracker's peak, per recipe, with coefficients kept non-negative. Prints the per-case errors before and
after, and writes the fitted numbers back into calibration.toml (rounded to 0.1 byte).

    .venv/bin/python tools/fit_calibration.py [--dry-run]
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.estimator import estimate
from core.estimator.calibration import ActivationCoefficients, Calibration, load_calibration
from core.estimator.measured import MeasuredCase, measured_cases
from core.paths import DATA_DIR

SECTIONS = {"inference": "inference", "full": "full", "full-bf16": "full_bf16", "lora": "lora"}
KEYS = ("hidden", "intermediate", "q", "kv", "checkpoint_hidden", "logits_per_vocab", "embedding_grad_copies")


def errors(cal: Calibration, cases: list[MeasuredCase]) -> list[float]:
    out = []
    for case in cases:
        tracked = estimate(case.query, calibration=cal).breakdown.tracked
        out.append(tracked / case.peak_bytes - 1)
    return out


def loss(cal: Calibration, cases: list[MeasuredCase]) -> float:
    return sum(math.log1p(e) ** 2 for e in errors(cal, cases))


def with_coeff(cal: Calibration, section: str, coeff: dict[str, float]) -> Calibration:
    current = getattr(cal, section)
    return cal.model_copy(update={section: ActivationCoefficients(**(current.model_dump() | coeff))})


def fit_section(cal: Calibration, section: str, cases: list[MeasuredCase]) -> Calibration:
    coeff = getattr(cal, section).model_dump()
    # Inference logits are the last position only (logits_to_keep=1): too small for the peaks to inform,
    # so that constant stays as derived (bf16 logits + generate()'s fp32 copy).
    keys = [k for k in KEYS if section != "inference" or k in ("hidden", "intermediate", "q", "kv")]
    if section == "lora":
        keys.remove("embedding_grad_copies")
    best = loss(cal, cases)
    step = 0.5
    while step > 0.01:
        improved = False
        for key in keys:
            for direction in (+1, -1):
                trial = dict(coeff)
                trial[key] = max(0.0, coeff[key] * (1 + direction * step) if coeff[key] else step)
                value = loss(with_coeff(cal, section, trial), cases)
                if value < best - 1e-12:
                    best, coeff, improved = value, trial, True
        if not improved:
            step /= 2
    return with_coeff(cal, section, coeff)


def write_back(cal: Calibration) -> None:
    path = DATA_DIR / "calibration.toml"
    text = path.read_text()
    for section in SECTIONS.values():
        coeff = getattr(cal, section)
        block = re.search(rf"^\[{section}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
        assert block
        body = block.group(1)
        for key in KEYS:
            body = re.sub(rf"^{key} = .*$", f"{key} = {getattr(coeff, key):.1f}", body, flags=re.M)
        text = text[: block.start(1)] + body + text[block.end(1) :]
    path.write_text(text)


def report(cal: Calibration, cases: list[MeasuredCase], title: str) -> None:
    errs = errors(cal, cases)
    print(f"\n{title}")
    for case, err in zip(cases, errs, strict=True):
        flag = "  <-- over 10%" if abs(err) > 0.10 else ""
        print(f"  {case.case_id:<45} {case.peak_bytes / 2**30:8.2f} GiB  {err:+7.1%}{flag}")
    absolute = [abs(e) for e in errs]
    print(f"  median |error| {statistics.median(absolute):.1%}, max {max(absolute):.1%}, n={len(errs)}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    cases = list(measured_cases())
    cal = load_calibration()
    report(cal, cases, "before")
    for recipe, section in SECTIONS.items():
        subset = [c for c in cases if c.recipe == recipe]
        if subset:
            cal = fit_section(cal, section, subset)
    report(cal, cases, "after")
    if not args.dry_run:
        write_back(cal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
