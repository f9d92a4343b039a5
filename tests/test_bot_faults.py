"""No answer is lost: 429 with retry_after, 502, slow answers and dropped connections, over real HTTP."""

from __future__ import annotations

from botapi_server import ANN, BotHarness

from bot.fake_telegram import Fault


def _sends(bot: BotHarness) -> list[int]:
    return [c.status for c in bot.fake.calls_to("sendMessage")]


async def test_flood_control_is_waited_out(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("429", "sendMessage", retry_after=1))
    [reply] = await running_bot.say(ANN, ANN, "13b lora 4090")
    assert "4090" in reply.text
    assert _sends(running_bot) == [429, 200]


async def test_bad_gateway_is_retried(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("502", "sendMessage", times=2))
    await running_bot.say(ANN, ANN, "13b lora 4090")
    assert _sends(running_bot) == [502, 502, 200]


async def test_connection_dropped_before_handling_is_retried(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("drop", "sendMessage"))
    await running_bot.say(ANN, ANN, "13b lora 4090")
    assert _sends(running_bot) == [0, 200]


async def test_slow_answer_is_still_delivered(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("slow", "sendMessage", delay=1.0))
    [reply] = await running_bot.say(ANN, ANN, "/help")
    assert reply.text


async def test_drop_after_delivery_repeats_rather_than_loses(running_bot: BotHarness) -> None:
    """The documented choice (bot/transport.py): at-least-once, so an unclear send may arrive twice."""
    running_bot.fake.schedule(Fault("drop_after", "sendMessage"))
    replies = await running_bot.say(ANN, ANN, "/help", replies=2)
    assert replies[0].text == replies[1].text


async def test_polling_survives_a_broken_long_poll(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("502", "getUpdates"))
    running_bot.fake.schedule(Fault("drop", "getUpdates"))
    [reply] = await running_bot.say(ANN, ANN, "/help")
    assert reply.text
