"""The estimator against the peaks PyTorch really allocated (data/measured/memory.csv).

Acceptance (issue 2): estimate minus runtime overhead within ±10% of MemTracker's peak for every
measured case, median within 5%.
"""

from __future__ import annotations

import statistics

import pytest

from core.estimator import estimate
from core.estimator.measured import MeasuredCase, measured_cases

CASES = measured_cases()


def relative_error(case: MeasuredCase) -> float:
    return estimate(case.query).breakdown.tracked / case.peak_bytes - 1


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 40
    recipes = {case.recipe for case in CASES}
    assert {"inference", "full", "lora"} <= recipes


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_each_case_within_ten_percent(case: MeasuredCase) -> None:
    error = relative_error(case)
    assert abs(error) <= 0.10, f"{case.case_id}: estimate off by {error:+.1%}"


def test_median_error_within_five_percent() -> None:
    errors = [abs(relative_error(case)) for case in CASES]
    assert statistics.median(errors) <= 0.05
