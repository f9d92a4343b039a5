"""A burst of questions while the Bot API misbehaves at random (seeded): every question answered exactly once.

The faults in the burst are the ones a client can survive without guessing: 429 with retry_after, 500 and 502
answers, slow answers within the send read timeout, refused connections, and dropped connections on calls
that are safe to repeat. The faults a client cannot see through (a send that times out or loses its
connection after it was written) are the trade-off bot/transport.py documents; the last tests here show
both of its sides: nothing is sent twice, at the price that a send Telegram really lost stays lost.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from botapi_server import (
    ANN,
    BotApiServer,
    BotHarness,
    loopback_request,
    loopback_updates_request,
    recording_errors,
    start_bot,
)

from bot.app import build_application, running
from bot.fake_telegram import Fault, RandomFaults
from bot.settings import Settings

USERS = list(range(7001, 7021))  # twenty users
CONTROL = 7000  # asks the same questions first, with no faults: the expected answers
QUESTIONS = (
    "can a 4090 run qwen2.5 7b?",
    "13b lora 4090",
    "llama 3.1 70b inference on 2x a100 80gb",
    "/help",
    "72B 全参微调 需要几张 H100",
)
BURST_FAULTS = (
    Fault("429", retry_after=1),
    Fault("500"),
    Fault("502"),
    Fault("slow", delay=0.3),  # well within the send read timeout: a slow Telegram that finishes
    Fault("refuse"),  # the next connection attempt is refused: provably never sent
    Fault("drop", "getUpdates"),  # unclear, but repeating getUpdates is harmless
    Fault("502", "getUpdates"),
)


def _texts(bot: BotHarness, chat_id: int) -> list[str]:
    return [m.text for m in bot.fake.bot_messages(chat_id)]


async def test_burst_under_random_faults_answers_each_question_exactly_once(
    bot_settings: Settings, botapi_server: BotApiServer
) -> None:
    fake = botapi_server.fake
    for user in (CONTROL, *USERS):
        fake.add_user(user, f"User{user}", language_code="en")
    app, errors = start_bot(bot_settings)
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, fake, errors)
        for question in QUESTIONS:
            await bot.say(CONTROL, CONTROL, question)
        expected = _texts(bot, CONTROL)
        assert len(expected) >= len(QUESTIONS)

        faults = RandomFaults(
            seed=20240607,
            chance=0.15,
            kinds=BURST_FAULTS,
            methods=frozenset({"sendmessage", "getupdates"}),
            budget=30,
        )
        fake.random_faults = faults
        for question in QUESTIONS:  # 100 questions, interleaved across the users, all queued at once
            for user in USERS:
                fake.send_text(user, user, question)
        await bot.wait_until(
            lambda: all(len(fake.bot_messages(u)) >= len(expected) for u in USERS),
            "an answer to each of the 100 questions",
        )
        fake.random_faults = None
        # Let anything still in flight land, so a late duplicate would be seen.
        await bot.say(CONTROL, CONTROL, "/help")

    assert len(faults.injected) >= 5, f"too few faults injected to mean anything: {faults.injected}"
    for user in USERS:
        assert _texts(bot, user) == expected, f"user {user}: answers lost, repeated or out of order"
    assert not fake.refused()
    assert not errors


async def _answers(bot: BotHarness, question: str, *, replies: int) -> list[str]:
    """Ask, wait for `replies` bot messages (answers and apologies), and return every bot text in the chat."""
    bot.fake.send_text(ANN, ANN, question)
    await bot.fake.wait_for(lambda: len(bot.fake.bot_messages(ANN)) >= replies, what=f"{replies} message(s)")
    bot.errors.clear()  # the unclear send reached the error handler, as it should
    return _texts(bot, ANN)


async def test_send_slower_than_the_read_timeout_arrives_once_not_twice(
    bot_settings: Settings, botapi_server: BotApiServer
) -> None:
    """Telegram handled the send but answered after the bot gave up: the bot does not send it again. The user
    has the answer once, followed by a short apology (the bot cannot know the answer arrived)."""
    async with _running_with(bot_settings, botapi_server, read_timeout=0.5, send_read_timeout=0.5) as bot:
        bot.fake.schedule(Fault("slow", "sendMessage", delay=3.0))
        texts = await _answers(bot, "/help", replies=2)
    assert len(texts) == 2 and "Sorry" in texts[1], texts
    assert texts.count(texts[0]) == 1


async def test_send_telegram_never_handled_is_lost_not_guessed(
    bot_settings: Settings, botapi_server: BotApiServer
) -> None:
    """The other side of the choice: a send Telegram never handled looks the same to the bot (no answer in
    time), so it is not repeated either; the user gets only the apology and asks again."""
    async with _running_with(bot_settings, botapi_server, read_timeout=0.5, send_read_timeout=0.5) as bot:
        bot.fake.schedule(Fault("hang", "sendMessage"))
        texts = await _answers(bot, "/help", replies=1)
    assert len(texts) == 1 and "Sorry" in texts[0]


async def test_at_least_once_would_send_twice(bot_settings: Settings, botapi_server: BotApiServer) -> None:
    """Why sends are not repeated: with `retry_unclear_sends=True` the slow-but-handled send arrives twice."""
    async with _running_with(
        bot_settings, botapi_server, read_timeout=0.5, send_read_timeout=0.5, retry_unclear_sends=True
    ) as bot:
        bot.fake.schedule(Fault("slow", "sendMessage", delay=3.0))
        texts = await _answers(bot, "/help", replies=2)
    assert len(texts) == 2 and texts[0] == texts[1], "the same answer twice"


async def test_refused_connection_is_retried_without_loss(running_bot: BotHarness) -> None:
    """A refused connection proves nothing was sent: the call that meets it is retried; answers come once."""
    bot = running_bot
    bot.fake.schedule(Fault("refuse", "sendMessage", times=3))
    for question in QUESTIONS[:3]:
        await bot.say(ANN, ANN, question)
    texts = _texts(bot, ANN)
    assert len(texts) == len(set(texts)) >= 3
    assert not any("Sorry" in t for t in texts)


@asynccontextmanager
async def _running_with(
    settings: Settings, server: BotApiServer, **transport: Any
) -> AsyncIterator[BotHarness]:
    app = build_application(
        settings.model_copy(update={"throttle_burst": 1_000_000}),
        request=loopback_request(**transport),
        get_updates_request=loopback_updates_request(),
    )
    errors = recording_errors(app)
    async with running(app, poll_timeout=2):
        yield BotHarness(app, server.fake, errors)
