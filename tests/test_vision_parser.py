"""The parser reads image, video, vision, speech and embedding jobs the way people write them (zh + en)."""

from __future__ import annotations

import pytest

from core.parser import parse
from core.parser.result import Intent
from core.query import Precision
from core.vision import Offload, TrainMethod, VisionTask

CASES: list[tuple[str, dict[str, object]]] = [
    (
        "SDXL 出图 4张一批 1024x1024 4090够吗",
        {"model": "sdxl", "batch": 4, "width": 1024, "card": "rtx-4090"},
    ),
    ("文生图用 4090 够不够", {"model": "sdxl", "task": VisionTask.GENERATE, "card": "rtx-4090"}),
    ("图生视频 720p 5 秒视频 4090", {"model": "wan2.1-i2v-14b", "height": 720, "frames": 81}),
    ("炼丹 sdxl lora 3090", {"model": "sdxl", "task": VisionTask.TRAIN, "method": TrainMethod.LORA}),
    (
        "训练 LoRA flux dev 4090",
        {"model": "flux.1-dev", "task": VisionTask.TRAIN, "method": TrainMethod.LORA},
    ),
    ("sd1.5 全量微调 a100", {"model": "sd1.5", "task": VisionTask.TRAIN, "method": TrainMethod.FULL}),
    (
        "YOLOv8x 640 batch 16 训练 4090",
        {"model": "yolov8x", "width": 640, "batch": 16, "task": VisionTask.TRAIN},
    ),
    ("转写 1 小时音频 4090", {"model": "whisper-large-v3", "audio_hours": 1.0}),
    ("Whisper large on a T4", {"model": "whisper-large-v3", "card": "t4"}),
    ("whisper turbo 转写 30 分钟", {"model": "whisper-large-v3-turbo", "audio_hours": 0.5}),
    ("Wan 2.1 720p 5s video fp8 on a 4090", {"model": "wan2.1-t2v-14b", "precision": Precision.FP8}),
    ("flux.1-dev nf4 on a 3060 12gb", {"model": "flux.1-dev", "precision": Precision.NF4}),
    ("flux schnell gguf q4 4060", {"model": "flux.1-schnell", "precision": Precision.Q4_K_M}),
    ("sdxl 30 步 一次出 8 张 tiled vae 4090", {"steps": 30, "batch": 8, "vae_tiling": True}),
    ("flux dev with cpu offload on 16gb", {"offload": Offload.MODEL, "card_memory_bytes": 16 * 1024**3}),
    (
        "bge-large embeddings batch 64 512 tokens on L4",
        {"model": "bge-large-en-v1.5", "batch": 64, "tokens": 512},
    ),
    ("resnet50 推理 batch 256 a10", {"model": "resnet-50", "batch": 256, "task": VisionTask.INFER}),
    ("SAM vit-h 分割 4090", {"model": "sam-vit-h"}),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_vision_jobs_are_read(text: str, expected: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.vision is not None, text
    for name, value in expected.items():
        assert getattr(parsed.vision, name) == value, f"{text}: {name}"


def test_a_card_question_about_a_vision_task_keeps_the_scenario_and_adds_the_job() -> None:
    parsed = parse("SDXL 出图用什么卡")
    assert parsed.intent is Intent.SCENARIO and parsed.scenario == "vision"
    assert parsed.vision is not None and parsed.vision.model == "sdxl"


def test_a_task_named_without_a_model_says_the_model_was_assumed() -> None:
    parsed = parse("文生图 4090")
    assert parsed.vision is not None and "model" in parsed.vision.defaulted


def test_language_model_questions_stay_language_model_questions() -> None:
    for text in ("qwen2.5 7b lora 4090", "llama 3 8b 推理 24g 够吗", "deepseek r1 on 8x h100"):
        parsed = parse(text)
        assert parsed.vision is None, text
        assert parsed.query is not None


def test_a_named_vision_model_wins_over_a_language_model_reading() -> None:
    parsed = parse("qwen3 embedding 0.6b 向量化 batch 32")
    assert parsed.vision is not None and parsed.vision.model == "qwen3-embedding-0.6b"


def test_a_follow_up_to_a_vision_answer_changes_only_what_it_says() -> None:
    first = parse("SDXL 出图 4张一批 4090")
    assert first.vision is not None
    for text, field, value in (
        ("3090 呢", "card", "rtx-3090"),
        ("batch 8 呢", "batch", 8),
        ("what about fp8?", "precision", Precision.FP8),
        ("换成 1536x1536", "width", 1536),
    ):
        parsed = parse(text, previous_vision=first.vision)
        assert parsed.vision is not None and parsed.follow_up, text
        assert getattr(parsed.vision, field) == value, text
        assert parsed.vision.model == "sdxl"
        if field != "batch":
            assert parsed.vision.batch == 4, text
        if field != "card":
            assert parsed.vision.card == "rtx-4090", text


def test_a_language_model_named_after_a_vision_answer_is_a_language_model_question() -> None:
    first = parse("SDXL 出图 4090")
    parsed = parse("llama 3.1 8b 推理呢", previous_vision=first.vision)
    assert parsed.vision is None and parsed.query is not None
