"""Flood control: one user flooding the bot gets one polite notice and is skipped; everyone else is served.
Group replies stay within Telegram's per-group limit (AIORateLimiter). The throttle's clock is injected, so
nothing here depends on how fast the machine is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botapi_server import ANN, BOB, BOT_USERNAME, GROUP, LI, BotHarness, start_bot
from telegram.ext import AIORateLimiter

from bot.app import running
from bot.settings import Settings, load_settings
from bot.throttle import DEFAULT_BURST, DEFAULT_RATE, THROTTLE_KEY, Throttle, Verdict

QUESTION = "7b inference 3090"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refill_one_notice_per_episode() -> None:
    clock = Clock()
    throttle = Throttle(burst=3, rate=1.0, clock=clock)
    assert [throttle.admit(1) for _ in range(6)] == [Verdict.PASS] * 3 + [Verdict.NOTICE] + [Verdict.DROP] * 2
    assert throttle.admit(2) is Verdict.PASS, "other users have their own bucket"
    assert throttle.wait_seconds(1) == 1
    clock.now += 1.0
    assert throttle.admit(1) is Verdict.PASS  # one message a second gets through
    assert throttle.admit(1) is Verdict.DROP  # still the same episode: no second notice
    for _ in range(30):  # a steady flood: one a second passes, no new notice
        clock.now += 1.0
        assert throttle.admit(1) is Verdict.PASS
        assert throttle.admit(1) is Verdict.DROP
    clock.now += 10.0  # calm: the bucket is full again, the episode is over
    assert [throttle.admit(1) for _ in range(4)] == [Verdict.PASS] * 3 + [Verdict.NOTICE]


def test_full_buckets_are_pruned(monkeypatch: Any) -> None:
    import bot.throttle as module

    monkeypatch.setattr(module, "PRUNE_ABOVE", 10)
    clock = Clock()
    throttle = Throttle(burst=2, rate=1.0, clock=clock)
    for user in range(10):
        throttle.admit(user)
    clock.now += 5.0
    throttle.admit(99)
    assert len(throttle._buckets) == 1


def test_settings_defaults_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456789:TEST-token-for-the-fake-bot-api-00000")
    defaults = load_settings(dotenv=tmp_path / ".env")
    assert (defaults.throttle_burst, defaults.throttle_rate) == (DEFAULT_BURST, DEFAULT_RATE) == (8, 1.0)
    monkeypatch.setenv("GPUFIT_THROTTLE_BURST", "20")
    monkeypatch.setenv("GPUFIT_THROTTLE_RATE", "0.5")
    tuned = load_settings(dotenv=tmp_path / ".env")
    assert (tuned.throttle_burst, tuned.throttle_rate) == (20, 0.5)


async def _flooded(bot: BotHarness, clock: Clock) -> None:
    bot.app.bot_data[THROTTLE_KEY] = Throttle(burst=DEFAULT_BURST, rate=DEFAULT_RATE, clock=clock)


async def test_one_flooding_user_gets_one_notice_and_others_are_served(
    bot_settings: Settings, fake_telegram: Any, botapi_server: Any
) -> None:
    app, errors = start_bot(bot_settings, throttled=True)
    clock = Clock()
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, fake_telegram, errors)
        await _flooded(bot, clock)
        for n in range(50):  # fifty messages "in the same second", with other users asking in between
            fake_telegram.send_text(ANN, ANN, QUESTION)
            if n == 25:
                fake_telegram.send_text(BOB, BOB, QUESTION)
                fake_telegram.send_text(LI, LI, QUESTION)
        await bot.wait_until(bot.settled, "the bot to read the flood")
        await bot.wait_until(lambda: len(fake_telegram.bot_messages(LI)) == 1, "Li's answer")
        ann = [m.text for m in fake_telegram.bot_messages(ANN)]
        notices = [t for t in ann if "faster than I can answer" in t]
        assert len(notices) == 1 and len(ann) == DEFAULT_BURST + 1, ann
        assert "3090" in fake_telegram.bot_messages(BOB)[0].text
        assert "3090" in fake_telegram.bot_messages(LI)[0].text

        # Li floods too: her notice is in Chinese.
        for _ in range(DEFAULT_BURST + 5):
            fake_telegram.send_text(LI, LI, QUESTION)
        await bot.wait_until(bot.settled, "the bot to read Li's flood")
        li = [m.text for m in fake_telegram.bot_messages(LI)]
        assert len(li) == DEFAULT_BURST + 1 and "太快" in li[-1]  # her first question used a token

        # After a quiet spell Ann is answered again, without another notice.
        clock.now += 60
        [reply] = await bot.say(ANN, ANN, QUESTION)
        assert "3090" in reply.text
    assert not fake_telegram.refused() and not errors


async def test_group_chatter_is_not_counted(
    bot_settings: Settings, fake_telegram: Any, botapi_server: Any
) -> None:
    app, errors = start_bot(bot_settings, throttled=True)
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, fake_telegram, errors)
        await _flooded(bot, Clock())
        for n in range(30):
            fake_telegram.send_text(GROUP, BOB, f"lunch? {n}")
        [reply] = await bot.say(GROUP, BOB, f"@{BOT_USERNAME} {QUESTION}")
        assert "3090" in reply.text
    assert not errors


def test_group_replies_respect_telegrams_per_group_limit(bot_settings: Settings) -> None:
    """AIORateLimiter with PTB's defaults: 20 messages a minute per group, 30 a second overall."""
    app, _ = start_bot(bot_settings)
    limiter = app.bot.rate_limiter
    assert isinstance(limiter, AIORateLimiter)
    assert (limiter._group_max_rate, limiter._group_time_period) == (20, 60)
    assert limiter._base_limiter is not None and limiter._base_limiter.max_rate == 30
