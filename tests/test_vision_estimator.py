"""The vision estimator's behaviour: each setting moves the memory the way the runtime does, verdicts and
fixes are consistent, and the JSON carries the same keys as a language-model fit answer."""

from __future__ import annotations

import pytest

from core.estimator.result import Fit
from core.query import Precision
from core.units import GIB
from core.vision import Offload, TrainMethod, VisionJob, VisionTask, estimate_vision, need_bytes
from core.vision.registry import load_vision_registry

REGISTRY = load_vision_registry()


def test_every_model_estimates_with_defaults_on_a_4090() -> None:
    for model_id in REGISTRY.models:
        result = estimate_vision(VisionJob(model=model_id, card="rtx-4090"))
        assert result.total_bytes > 0
        assert result.verdicts and result.speed is not None
        assert result.speed.seconds_per_item > 0


def test_the_json_has_the_language_model_keys() -> None:
    data = estimate_vision(VisionJob(model="sdxl", card="rtx-4090")).as_json()
    for key in ("kind", "verdict", "breakdown", "total_bytes", "speed", "cost", "cards_needed"):
        assert key in data
    assert data["kind"] == "fit"
    breakdown = data["breakdown"]
    assert isinstance(breakdown, dict)
    assert sum(breakdown.values()) == data["total_bytes"]


def test_cfg_doubles_the_denoiser_batch_and_flux_has_none() -> None:
    sdxl = REGISTRY.models["sdxl"]
    flux = REGISTRY.models["flux.1-dev"]
    assert sdxl.cfg and not flux.cfg


def test_resolution_and_batch_raise_memory() -> None:
    small = need_bytes(VisionJob(model="sdxl", width=768, height=768))
    big = need_bytes(VisionJob(model="sdxl", width=1024, height=1024))
    batch = need_bytes(VisionJob(model="sdxl", width=1024, height=1024, batch=4))
    assert small < big < batch


def test_vae_tiling_caps_the_decode_peak_at_batch_and_resolution() -> None:
    plain = estimate_vision(VisionJob(model="sdxl", batch=4))
    tiled = estimate_vision(VisionJob(model="sdxl", batch=4, vae_tiling=True))
    assert plain.peak_phase == "vae_decode"
    assert tiled.total_bytes < plain.total_bytes


def test_offload_orders_memory_none_model_sequential() -> None:
    none = need_bytes(VisionJob(model="flux.1-dev", offload=Offload.NONE))
    model = need_bytes(VisionJob(model="flux.1-dev", offload=Offload.MODEL))
    sequential = need_bytes(VisionJob(model="flux.1-dev", offload=Offload.SEQUENTIAL))
    assert none > model > sequential


def test_offload_costs_speed() -> None:
    fast = estimate_vision(VisionJob(model="flux.1-dev", card="rtx-4090", precision=Precision.FP8))
    slow = estimate_vision(
        VisionJob(model="flux.1-dev", card="rtx-4090", precision=Precision.FP8, offload=Offload.SEQUENTIAL)
    )
    assert fast.speed and slow.speed
    assert slow.speed.seconds_per_item > fast.speed.seconds_per_item


def test_flux_in_bf16_does_not_fit_a_4090_and_the_fixes_say_what_does() -> None:
    """Model offload alone leaves the 12B transformer in bf16 (22 GiB) plus its activations on the card: not
    enough on 24 GB, as users report (huggingface.co/black-forest-labs/FLUX.1-dev/discussions/52: OOM with
    enable_model_cpu_offload on 24 GB, fine with sequential offload). Without offload (as asked here; a job
    naming neither engine nor offload runs with group offload, tests/test_vision_unnamed_offload.py)."""
    result = estimate_vision(VisionJob(model="flux.1-dev", card="rtx-4090", offload=Offload.NONE))
    assert result.verdicts[0].fits is Fit.NO
    codes = {fix.code: fix for fix in result.fixes}
    assert codes["fp8"].fits and codes["nf4"].fits and codes["sequential_offload"].fits
    assert not codes["model_offload"].fits


def test_quantised_weights_shrink_the_denoiser() -> None:
    bf16 = estimate_vision(VisionJob(model="flux.1-dev")).breakdown.denoiser
    fp8 = estimate_vision(VisionJob(model="flux.1-dev", precision=Precision.FP8)).breakdown.denoiser
    nf4 = estimate_vision(VisionJob(model="flux.1-dev", precision=Precision.NF4)).breakdown.denoiser
    assert bf16 > fp8 > nf4
    assert fp8 == pytest.approx(bf16 / 2, rel=0.01)


def test_video_frames_raise_memory_and_give_frames_per_second() -> None:
    short = need_bytes(VisionJob(model="wan2.1-t2v-1.3b", frames=33))
    long = need_bytes(VisionJob(model="wan2.1-t2v-1.3b", frames=81))
    assert short < long
    result = estimate_vision(VisionJob(model="wan2.1-t2v-1.3b", card="rtx-4090"))
    assert result.speed and result.speed.frames_per_s and result.speed.unit == "video"


def test_lora_needs_far_less_than_full_fine_tuning() -> None:
    lora = need_bytes(VisionJob(model="sdxl", task=VisionTask.TRAIN, method=TrainMethod.LORA))
    full = need_bytes(VisionJob(model="sdxl", task=VisionTask.TRAIN, method=TrainMethod.FULL))
    assert lora * 2 < full


def test_gradient_checkpointing_and_cached_text_lower_training_memory() -> None:
    base = VisionJob(model="sdxl", task=VisionTask.TRAIN, method=TrainMethod.LORA, batch=2)
    assert need_bytes(base.model_copy(update={"grad_checkpointing": True})) < need_bytes(
        base.model_copy(update={"grad_checkpointing": False})
    )
    assert need_bytes(base.model_copy(update={"cache_text": True})) < need_bytes(
        base.model_copy(update={"cache_text": False})
    )


def test_max_batch_fits_and_one_more_does_not() -> None:
    result = estimate_vision(VisionJob(model="vit-b16", task=VisionTask.TRAIN, card="rtx-4090"))
    assert result.max_batch and result.max_batch > 1
    capacity = result.verdicts[0].capacity_bytes
    job = result.job
    assert need_bytes(job.model_copy(update={"batch": result.max_batch})) <= capacity
    assert need_bytes(job.model_copy(update={"batch": result.max_batch + 1})) > capacity


def test_whisper_reports_real_time_factor_and_hours() -> None:
    result = estimate_vision(VisionJob(model="whisper-large-v3", card="rtx-4090", audio_hours=10))
    assert result.speed and result.speed.realtime_factor and result.speed.realtime_factor > 1
    assert result.speed.hours == pytest.approx(10 / result.speed.realtime_factor)


def test_defaults_are_stated() -> None:
    result = estimate_vision(VisionJob(model="flux.1-dev", card="rtx-4090"))
    assert {"width", "height", "steps", "precision", "batch"} <= set(result.job.defaulted)
    assert result.job.width == 1024 and result.job.steps == 28


def test_unmeasured_components_widen_the_band() -> None:
    measured = estimate_vision(VisionJob(model="sdxl", card="rtx-4090"))
    unmeasured = estimate_vision(VisionJob(model="kolors", card="rtx-4090"))
    assert measured.uncertainty < unmeasured.uncertainty
    assert "not_measured" in unmeasured.warnings


def test_a_capacity_without_a_card_gets_a_verdict() -> None:
    result = estimate_vision(VisionJob(model="sd1.5", card_memory_bytes=8 * GIB))
    assert result.verdicts and result.verdicts[0].card == "8gb"
