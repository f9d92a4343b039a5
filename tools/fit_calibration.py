"""Fit data/calibration.toml's activation coefficients to the measured peaks (data/measured/memory.csv).

The fit itself (objective, priors, search, leave-one-model-out) is core/estimator/fitting.py, shared with
the test suite. This prints the per-case errors before and after (and, with --cross-validate, leaving each
model out), and writes the fitted numbers back into calibration.toml.

    .venv/bin/python tools/fit_calibration.py [--dry-run] [--cross-validate]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.estimator.calibration import Calibration, load_calibration
from core.estimator.fitting import KEYS, SECTIONS, PreparedCase, errors, fit_all, leave_one_model_out, prepare
from core.estimator.measured import measured_cases
from core.paths import DATA_DIR


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


def report(cal: Calibration, cases: list[PreparedCase], title: str) -> None:
    errs = errors(cal, cases)
    print(f"\n{title}")
    for case, err in zip(cases, errs, strict=True):
        flag = "  <-- over 10%" if abs(err) > 0.10 else ""
        print(f"  {case.case.case_id:<45} {case.case.peak_bytes / 2**30:8.2f} GiB  {err:+7.1%}{flag}")
    absolute = [abs(e) for e in errs]
    print(f"  median |error| {statistics.median(absolute):.1%}, max {max(absolute):.1%}, n={len(errs)}")


def cross_validate(cal: Calibration, cases: list[PreparedCase]) -> None:
    """Leave one model out: fit without any of its cases, then predict them (how it does on unseen models).
    tests/test_estimator_measured.py runs the same check with every test run."""
    print("\nleave-one-model-out")
    held_out = leave_one_model_out(cal, cases)
    for case, err in held_out:
        print(f"  {case.case.case_id:<45} {err:+7.1%}")
    absolute = [abs(e) for _, e in held_out]
    print(f"  median |error| {statistics.median(absolute):.1%}, max {max(absolute):.1%}, n={len(absolute)}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--cross-validate", action="store_true")
    args = parser.parse_args()
    cal = load_calibration()
    cases = prepare(measured_cases(), cal)
    report(cal, cases, "before")
    cal = fit_all(cal, cases)
    report(cal, cases, "after")
    if args.cross_validate:
        cross_validate(cal, cases)
    if not args.dry_run:
        write_back(cal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
