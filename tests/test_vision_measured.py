"""The vision estimator against the peaks PyTorch really allocated (data/measured/vision.csv).

Acceptance (issue 12): estimate minus runtime overhead within ±10% of MemTracker's peak for every measured
case, median within 5%, over at least 30 cases across denoisers, VAEs, text encoders, diffusion training,
vision backbones, Whisper and embedding models.
"""

from __future__ import annotations

import statistics

import pytest

from core.vision.measured import VisionCase, estimated_tracked_bytes, vision_cases

CASES = vision_cases()


def relative_error(case: VisionCase) -> float:
    return estimated_tracked_bytes(case) / case.peak_bytes - 1


def test_the_table_is_big_enough_and_covers_the_families() -> None:
    assert len(CASES) >= 30
    jobs = {case.job for case in CASES}
    assert {"denoise", "vae_decode", "text_encode", "train", "lora", "infer"} <= jobs
    components = {case.component for case in CASES}
    assert {"sd15-unet", "sdxl-unet", "flux-transformer", "vit-b16", "whisper-large-v3"} <= components
    resolutions = {case.height for case in CASES if case.job == "denoise"}
    assert len(resolutions) >= 3


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_each_case_within_ten_percent(case: VisionCase) -> None:
    error = relative_error(case)
    assert abs(error) <= 0.10, f"{case.case_id}: estimate off by {error:+.1%}"


def test_median_error_within_five_percent() -> None:
    errors = [abs(relative_error(case)) for case in CASES]
    assert statistics.median(errors) <= 0.05


def test_the_counted_parameters_are_the_registrys() -> None:
    """The registry's parameter counts are the ones the measured modules really had."""
    from core.vision.registry import load_vision_registry

    registry = load_vision_registry()
    for case in CASES:
        assert registry.component(case.component).params == case.params, case.case_id
