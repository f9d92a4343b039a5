"""Vision questions through the real bot (loopback Bot API stand-in): the answer Telegram would accept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from botapi_server import ANN, LI, BotHarness

from bot.fake_telegram import FakeTelegram


@pytest.fixture(autouse=True)
def _nothing_refused(fake_telegram: FakeTelegram) -> Iterator[None]:
    yield
    refused = [(c.method, c.description) for c in fake_telegram.refused()]
    assert not refused, f"Telegram would have refused: {refused}"


async def test_image_generation_question_in_chinese(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(LI, LI, "SDXL 出图 4张一批 1024x1024 4090够吗")
    assert "Stable Diffusion XL" in reply.text and "4090" in reply.text
    assert "24GB 起步" in reply.text  # the article's rule beside the exact figure
    assert reply.entities


async def test_flux_lora_question_in_english(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(ANN, ANN, "Train a FLUX dev LoRA on a 4090?")
    assert "FLUX.1 [dev]" in reply.text and "LoRA" in reply.text


async def test_vision_scenario_adds_the_named_job(running_bot: BotHarness) -> None:
    [reply] = await running_bot.say(LI, LI, "YOLOv8x 640 batch 16 训练用什么卡")
    assert "YOLOv8x" in reply.text


async def test_follow_up_to_a_vision_answer(running_bot: BotHarness) -> None:
    [first] = await running_bot.say(LI, LI, "SDXL 出图 4张一批 4090够吗")
    [second] = await running_bot.say(LI, LI, "3090 呢")
    assert "Stable Diffusion XL" in second.text and "3090" in second.text
    assert "一批 4 张" in second.text  # the batch of the first question is kept
    assert first.message_id != second.message_id
