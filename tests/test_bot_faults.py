"""Over real HTTP: 429 with retry_after, 502, slow answers and dropped connections. Nothing is lost that can
be retried safely; no send that may have arrived is repeated (bot/transport.py; more in test_hardening_*)."""

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


async def test_dropped_connection_is_retried_for_idempotent_calls(running_bot: BotHarness) -> None:
    """A drop after the request left is unclear; repeating an edit is harmless, so it is repeated."""
    [reply] = await running_bot.say(ANN, ANN, "LoRA Llama 3.1 8B on a 4090")
    data = next(
        b["callback_data"] for b in running_bot.buttons(reply) if str(b["callback_data"]).endswith("qlora")
    )
    running_bot.fake.schedule(Fault("drop", "editMessageText"))
    await running_bot.press(ANN, reply.message_id, data, ANN)
    await running_bot.wait_until(lambda: reply.edits == 1, "the edit after a dropped connection")
    assert [c.status for c in running_bot.fake.calls_to("editMessageText")] == [0, 200]


async def test_slow_answer_is_still_delivered(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("slow", "sendMessage", delay=1.0))
    [reply] = await running_bot.say(ANN, ANN, "/help")
    assert reply.text


async def test_unclear_send_is_not_repeated(running_bot: BotHarness) -> None:
    """The documented choice (bot/transport.py): a send that may have arrived is not sent again, so the
    answer arrives once; the user also gets the error handler's short apology."""
    running_bot.fake.schedule(Fault("drop_after", "sendMessage"))
    await running_bot.say(ANN, ANN, "/help", replies=0)
    # The unclear send reaches the error handler, as it should: waited for here, not treated as a failure
    # (the harness's `say` stops at the first handler error, which may come before the apology is seen).
    await running_bot.fake.wait_for(
        lambda: len(running_bot.fake.bot_messages(ANN)) >= 2 and bool(running_bot.errors),
        within=10,
        what="the answer, the apology and the error",
    )
    replies = running_bot.fake.bot_messages(ANN)
    texts = [m.text for m in replies]
    assert texts.count(replies[0].text) == 1 and "Sorry" in replies[1].text
    assert [type(e.__cause__).__name__ for e in running_bot.errors] == ["RemoteProtocolError"]
    running_bot.errors.clear()


async def test_polling_survives_a_broken_long_poll(running_bot: BotHarness) -> None:
    running_bot.fake.schedule(Fault("502", "getUpdates"))
    running_bot.fake.schedule(Fault("drop", "getUpdates"))
    [reply] = await running_bot.say(ANN, ANN, "/help")
    assert reply.text
