"""A video or image job naming no engine runs as the model's own README runs it on a card too small for the
whole pipeline: with an offload, named with its cost, not a "no" the README contradicts.

Wan2.2's README (Wan-Video/Wan2.2 @42bf4cf) runs TI2V-5B at 720P "on a GPU with at least 24GB VRAM (e.g, RTX
4090 GPU)" with `--offload_model True --convert_model_dtype --t5_cpu`; its efficiency table
(assets/comp_effic.png) gives 534.7 s and a 22.9 GB peak for that run on one 4090. A job that names an engine
keeps that engine's behaviour (diffusers offloads only when asked), and a job no offload fits stays a "no"."""

from __future__ import annotations

import pytest

from bot.answer.vision import vision_answer
from bot.render import plain_text
from core.units import GIB
from core.vision import Offload, VisionJob, estimate_vision

WAN22_4090_S = 534.7  # Wan2.2 README table: TI2V-5B T2V, 720P, one RTX 4090, the offload flags above
WAN22_4090_PEAK_GB = 22.9


def test_wan22_5b_on_a_4090_runs_with_its_own_offload() -> None:
    result = estimate_vision(VisionJob(model="wan2.2-ti2v-5b", card="rtx-4090"))
    assert result.verdict == "offload" and result.runs_with_offload
    assert result.offload is not None and result.offload.mode == "model"
    assert result.offload.chosen_by == "default"
    assert result.offload.flags == "generate.py --offload_model True --convert_model_dtype --t5_cpu"
    low, high = result.total_bytes * (1 - result.uncertainty), result.total_bytes * (1 + result.uncertainty)
    assert low <= WAN22_4090_PEAK_GB * 1e9 <= high  # the published peak inside the answer's band
    assert result.total_bytes <= result.verdicts[0].capacity_bytes
    assert result.speed is not None and result.speed.offload_s_per_item
    assert result.speed.seconds_per_item == pytest.approx(WAN22_4090_S, rel=0.25)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_answer_names_the_offload_and_its_cost(lang: str) -> None:
    reply = vision_answer(VisionJob(model="wan2.2-ti2v-5b", card="rtx-4090"), "zh" if lang == "zh" else "en")
    text = plain_text(reply.html)
    first = text.splitlines()[0]
    assert first.startswith("🟡") and "--offload_model True --convert_model_dtype --t5_cpu" in first
    assert reply.facts["verdict"] == "offload"
    if lang == "en":
        assert "runs with offload" in first and "in system RAM" in first and "min per video" in first
        assert "assumed because the job does not fit without it" in text and "System RAM needed" in text
    else:
        assert "能跑，但要卸载到内存" in first and "放在系统内存" in first and "分钟一段视频" in first
        assert "原样装不下，所以假设用" in text and "需要系统内存约" in text


def test_an_engine_named_keeps_its_own_behaviour() -> None:
    named = estimate_vision(VisionJob(model="wan2.2-ti2v-5b", card="rtx-4090", runtime="diffusers"))
    assert named.verdict == "no" and any(f.fits for f in named.fixes)  # diffusers offloads when asked
    asked = estimate_vision(VisionJob(model="wan2.2-ti2v-5b", card="rtx-4090", offload=Offload.NONE))
    assert asked.verdict == "no"


def test_group_offload_names_diffusers_not_the_models_flags() -> None:
    result = estimate_vision(VisionJob(model="flux.1-dev", card="rtx-4090"))  # bf16: model offload OOMs
    assert result.verdict == "offload" and result.offload is not None
    assert result.offload.mode == "group" and result.offload.flags == ""
    assert "enable_group_offload()" in plain_text(
        vision_answer(VisionJob(model="flux.1-dev", card="rtx-4090"), "en").html
    )


def test_when_no_offload_fits_it_is_a_no() -> None:
    result = estimate_vision(VisionJob(model="wan2.2-t2v-a14b", card="rtx-3060"))
    assert result.verdict == "no" and result.offload is None
    assert result.total_bytes > 12 * GIB


# Wan's own efficiency tables (total seconds, one GPU; Wan-Video/Wan2.1 @9737cba and Wan2.2 @42bf4cf
# assets/comp_effic.png): the figures gpufit's video speed is read against (±40%: the vision utilisation
# is the shared PyTorch MFU, 15-27% slow on Ampere / Ada and 27% fast on Hopper with FlashAttention 3)
WAN_TABLES = [
    ("wan2.1-t2v-1.3b", "rtx-4090", 261.4),  # 480P, --offload_model True --t5_cpu
    ("wan2.1-t2v-14b", "a100-80gb-sxm", 3342.6),  # 720P, --offload_model True
    ("wan2.1-t2v-14b", "h100-sxm", 1837.9),
    ("wan2.2-ti2v-5b", "rtx-4090", 534.7),  # 720P, --offload_model True --convert_model_dtype --t5_cpu
]


@pytest.mark.parametrize(("model", "card", "seconds"), WAN_TABLES)
def test_video_speed_against_wans_tables(model: str, card: str, seconds: float) -> None:
    result = estimate_vision(VisionJob(model=model, card=card))
    assert result.speed is not None
    assert result.speed.seconds_per_item == pytest.approx(seconds, rel=0.4)


def test_comfyui_samples_its_workflows_steps() -> None:
    """ComfyUI's Wan examples (comfyanonymous/ComfyUI_examples @f9431bb) sample 30 steps (text to video) and
    20 (image to video, Wan 2.2 14B), not the model cards' 50 / 40: an engine named, its workflow's steps."""
    comfy = estimate_vision(VisionJob(model="wan2.1-t2v-14b", card="rtx-4090", runtime="comfyui"))
    plain = estimate_vision(VisionJob(model="wan2.1-t2v-14b", card="rtx-4090"))
    said = estimate_vision(VisionJob(model="wan2.1-t2v-14b", card="rtx-4090", runtime="comfyui", steps=50))
    assert (comfy.job.steps, plain.job.steps, said.job.steps) == (30, 50, 50)
    assert "steps" in comfy.job.defaulted
    assert comfy.speed is not None and said.speed is not None
    assert comfy.speed.seconds_per_item == pytest.approx(said.speed.seconds_per_item * 30 / 50, rel=0.05)
    a14b = estimate_vision(VisionJob(model="wan2.2-t2v-a14b", card="h100-sxm", runtime="comfyui"))
    assert a14b.job.steps == 20
