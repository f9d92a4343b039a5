"""The new kinds of answer through the real bot (issue 10): compact in groups with a details button that
expands them, follow-ups that keep the question, inline results, and out-of-scope replies in private."""

from __future__ import annotations

from botapi_server import ANN, BOB, BOT_USERNAME, GROUP, BotHarness


def _button_data(bot: BotHarness, message_index: int = -1, *, chat: int = ANN) -> list[str]:
    message = bot.fake.bot_messages(chat)[message_index]
    return [b["callback_data"] for b in bot.buttons(message) if "callback_data" in b]


async def test_how_many_in_a_group_is_compact_and_expands(running_bot: BotHarness) -> None:
    [command] = await running_bot.say(GROUP, BOB, f"/fit@{BOT_USERNAME} how many L20 to run qwen2.5 72b?")
    assert command.text.startswith("🧮") and "4" in command.text.splitlines()[0]
    data = _button_data(running_bot, chat=GROUP)
    assert [d.rsplit(":", 1)[1] for d in data] == ["details", "chart"]
    compact_length = len(command.text)
    await running_bot.press(GROUP, command.message_id, data[0], BOB)
    await running_bot.wait_until(lambda: command.edits == 1, "details expanded")
    assert len(command.text) > compact_length and "tensor parallel" in command.text.lower()


async def test_largest_model_and_its_follow_up_in_private(running_bot: BotHarness) -> None:
    [first] = await running_bot.say(ANN, ANN, "两张3090最大能LoRA多大的模型")
    assert first.text.startswith("📏") and "LoRA" in first.text
    [second] = await running_bot.say(ANN, ANN, "那QLoRA呢")
    assert second.text.startswith("📏") and "QLoRA" in second.text


async def test_out_of_scope_and_card_advice_in_private(running_bot: BotHarness) -> None:
    [weather] = await running_bot.say(ANN, ANN, "what's the weather like tomorrow?")
    assert "I only answer questions about GPUs" in weather.text and "Which model" not in weather.text
    [advice] = await running_bot.say(ANN, ANN, "is a T4 OK for fine-tuning?")
    assert "T4" in advice.text and "TFLOPS" in advice.text


async def test_inline_how_many(running_bot: BotHarness) -> None:
    answered = await running_bot.inline(ANN, "how many H100 for llama 3.1 405b")
    [result] = answered["results"]
    assert "16" in result["title"] + result["description"]
