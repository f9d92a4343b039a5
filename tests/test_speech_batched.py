"""Transcribing an amount of audio assumes a batched pipeline, with the one-window figure beside it.

Published runs (data/vision_models.toml [constants] speech_*): Vaibhavs10/insanely-fast-whisper
README @0fed9a4, A100 80GB, Whisper large-v3, 150 min of audio: transformers fp16 + batch_size 24 + Flash
Attention 2 in 1 min 38 s (91.8x real time), with BetterTransformer 5 min 2 s (29.8x), fp32 one window at a
time 31 min 1 s (4.8x), faster-whisper large-v2 fp16 beam 1 9 min 23 s (16.0x); SYSTRAN/faster-whisper README
@65882ee (v1.1.0, RTX 3070 Ti, large-v2): fp16 12.4x, BatchedInferencePipeline batch_size=8 45.9x."""

from __future__ import annotations

import pytest

from bot.answer import answer
from core.vision import VisionJob, estimate_vision

IFW_A100_FA2_X = 150 * 60 / 98  # 91.8x
IFW_A100_SDPA_X = 150 * 60 / 302  # 29.8x
IFW_A100_FP32_BATCH1_X = 150 * 60 / 1861  # 4.8x
FW_A100_BEAM1_X = 150 * 60 / 563  # 16.0x


def test_the_batched_run_is_the_published_one() -> None:
    result = estimate_vision(VisionJob(model="whisper-large-v3", card="a100-80gb-sxm", audio_hours=2.5))
    assert result.job.batch == 24 and "batch" in result.job.defaulted
    assert result.speed is not None and result.speed.realtime_factor is not None
    assert result.speed.realtime_factor == pytest.approx(IFW_A100_FA2_X, rel=0.05)
    one = result.speed.one_window_realtime_factor
    assert one is not None and IFW_A100_FP32_BATCH1_X < one < FW_A100_BEAM1_X  # transformers fp16, batch 1


def test_a_smaller_batch_said_is_between() -> None:
    result = estimate_vision(
        VisionJob(model="whisper-large-v3", card="a100-80gb-sxm", batch=8, audio_hours=1)
    )
    assert result.speed is not None and result.speed.realtime_factor is not None
    assert IFW_A100_SDPA_X < result.speed.realtime_factor < IFW_A100_FA2_X
    assert result.job.batch == 8


def test_1000_hours_on_a_4090() -> None:
    result = estimate_vision(VisionJob(model="whisper-large-v3", card="rtx-4090", audio_hours=1000))
    assert result.verdict == "fits" and result.speed is not None
    assert result.speed.hours is not None and 7 <= result.speed.hours <= 35  # 30-150x real time
    assert result.speed.one_window_hours is not None and result.speed.one_window_hours > 60


def test_a_card_too_small_for_the_batch_runs_a_smaller_one() -> None:
    result = estimate_vision(VisionJob(model="whisper-large-v3", card="rtx-4060-ti-8gb", audio_hours=10))
    assert result.verdict != "no" and result.job.batch is not None and 1 < result.job.batch < 24


def test_no_audio_amount_keeps_one_window() -> None:
    result = estimate_vision(VisionJob(model="whisper-large-v3", card="rtx-4090"))
    assert result.job.batch == 1 and result.speed is not None
    assert result.speed.one_window_realtime_factor is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_answer_says_both_and_which(lang: str) -> None:
    question = (
        "whisper large v3 转写 1000小时音频 用4090要多久 多少钱"
        if lang == "zh"
        else "transcribe 1000 hours of audio with whisper large-v3 on a 4090"
    )
    reply = answer(question, lang=lang)
    time = reply.facts["time"]
    assert isinstance(time, dict) and 7 <= time["hours"] <= 35
    if lang == "zh":
        assert "按一次 24 个 30 秒窗口批量转写" in reply.html and "一次只转一个窗口约 11 倍实时" in reply.html
    else:
        assert (
            "with 24 30 s windows at once" in reply.html
            and "one window at a time ≈11× real time" in reply.html
        )
    assert "insanely-fast-whisper" in reply.html and "BatchedInferencePipeline" in reply.html
