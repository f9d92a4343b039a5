"""Vision answers: verdict first, bars per component, the article's rule beside the exact figure,
assumptions, speed and cost, in both languages; the facts carry the fit JSON keys."""

from __future__ import annotations

import pytest

from bot.answer.vision import vision_answer
from bot.render import plain_text
from core.vision import Offload, TrainMethod, VisionJob, VisionTask

JOBS = [
    VisionJob(model="sdxl", card="rtx-4090", batch=4),
    VisionJob(model="flux.1-dev", card="rtx-4090"),
    VisionJob(model="wan2.1-t2v-14b", card="h100-sxm", frames=81),
    VisionJob(model="flux.1-dev", task=VisionTask.TRAIN, method=TrainMethod.LORA, card="rtx-4090"),
    VisionJob(model="yolov8x", task=VisionTask.TRAIN, card="rtx-4090", batch=16),
    VisionJob(model="whisper-large-v3", card="t4", audio_hours=1),
    VisionJob(model="bge-large-en-v1.5", card="l4", batch=64),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("job", JOBS, ids=[f"{j.model}-{j.task}" for j in JOBS])
def test_answer_is_complete(job: VisionJob, lang: str) -> None:
    answer = vision_answer(job, "zh" if lang == "zh" else "en")
    text = plain_text(answer.html)
    first = text.splitlines()[0]
    assert first[0] in "✅⚠❌🟡"  # 🟡: runs with offload (FLUX.1-dev bf16 on a 24 GB card)
    if job.model.startswith(("whisper", "bge")):
        assert "× 1.2" in text  # the article's weights rule beside the figure
    else:
        assert "24" in text and "48" in text  # the article's computer-vision rule beside the figure
    assert "GiB" in text
    if lang == "zh":
        assert "假设" in text and "速度" in text
    else:
        assert "Assumed" in text and "Speed" in text
    assert answer.kind == "fit"
    for key in ("kind", "verdict", "breakdown", "total_bytes", "speed", "cost", "cards_needed"):
        assert key in answer.facts


def test_a_job_that_does_not_fit_lists_fixes_that_do() -> None:
    job = VisionJob(model="flux.1-dev", card="rtx-4090", offload=Offload.NONE)
    text = plain_text(vision_answer(job, "en").html)
    assert "does not fit" in text.splitlines()[0]
    assert "fp8 weights" in text and "✅" in text


def test_every_model_and_task_estimates_and_renders() -> None:
    """Whatever the parser or the command line combines (a task the family rarely does included), the
    estimate is positive and the answer renders in both languages."""
    from core.vision import estimate_vision
    from core.vision.registry import load_vision_registry

    for model_id in load_vision_registry().models:
        for task in VisionTask:
            for card in ("rtx-4090", None):
                job = VisionJob(model=model_id, task=task, card=card)
                assert estimate_vision(job).total_bytes > 0
                for lang in ("en", "zh"):
                    assert vision_answer(job, "zh" if lang == "zh" else "en").html
