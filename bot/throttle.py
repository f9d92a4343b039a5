"""Per-user flood control: a token bucket per user, so one user flooding the bot cannot starve the others.

Each user may send `burst` messages at once, then one per `1 / rate` seconds. A message over the limit is
dropped before any other handler runs (handler group THROTTLE_GROUP, ApplicationHandlerStop); the first
one of a throttle episode gets one polite notice (templates bot_throttled), the rest nothing. An episode ends
when the user's bucket is full again, so a steady flood earns one notice, not one per refill. In groups only
messages addressed to the bot count (commands, mentions, replies to it): ignored chatter costs nothing.
Buckets live in memory (a restart forgives everyone); full ones are pruned when there are many.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from telegram import Chat, Update
from telegram.ext import ApplicationHandlerStop, BaseHandler, ContextTypes, TypeHandler

from bot import session
from bot.groups import AddressedToBot
from bot.replies import reply_html, text

logger = logging.getLogger(__name__)

THROTTLE_GROUP = -2
THROTTLE_KEY = "throttle"
DEFAULT_BURST = 8
DEFAULT_RATE = 1.0  # messages per second, once the burst is spent
PRUNE_ABOVE = 10_000
_ADDRESSED = AddressedToBot()


class Verdict(Enum):
    PASS = "pass"
    NOTICE = "notice"  # over the limit, first time in this episode: tell the user once
    DROP = "drop"  # over the limit, already told


@dataclass
class Bucket:
    tokens: float
    updated: float
    noticed: bool = False


class Throttle:
    """Token buckets by user id; `clock` is injectable so tests need not wait."""

    def __init__(
        self,
        *,
        burst: int = DEFAULT_BURST,
        rate: float = DEFAULT_RATE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if burst < 1 or rate <= 0:
            raise ValueError("burst must be at least 1 and rate above 0")
        self.burst = burst
        self.rate = rate
        self.clock = clock
        self._buckets: dict[int, Bucket] = {}

    def admit(self, user_id: int) -> Verdict:
        """Take one token for this user's message, or say why not."""
        now = self.clock()
        bucket = self._buckets.get(user_id)
        if bucket is None:
            if len(self._buckets) >= PRUNE_ABOVE:
                self._prune(now)
            bucket = self._buckets[user_id] = Bucket(tokens=float(self.burst), updated=now)
        self._refill(bucket, now)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return Verdict.PASS
        if bucket.noticed:
            return Verdict.DROP
        bucket.noticed = True
        return Verdict.NOTICE

    def wait_seconds(self, user_id: int) -> int:
        """Whole seconds until this user may send one more message."""
        bucket = self._buckets.get(user_id)
        if bucket is None:
            return 0
        self._refill(bucket, self.clock())
        return max(1, math.ceil((1.0 - bucket.tokens) / self.rate)) if bucket.tokens < 1.0 else 0

    def _refill(self, bucket: Bucket, now: float) -> None:
        elapsed = max(0.0, now - bucket.updated)
        bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
        bucket.updated = now
        if bucket.tokens >= self.burst:
            bucket.noticed = False  # calm again: the episode is over

    def _prune(self, now: float) -> None:
        for user_id, bucket in list(self._buckets.items()):
            self._refill(bucket, now)
            if bucket.tokens >= self.burst:
                del self._buckets[user_id]


def counts(update: Update) -> bool:
    """Whether this update spends a token: messages to the bot, not group chatter. Button presses do not: the
    bot drew every button, and a double tap is applied once anyway."""
    message = update.message
    if message is None:
        return False
    if message.chat.type == Chat.PRIVATE:
        return True
    return bool(message.text and message.text.startswith("/")) or _ADDRESSED.check_update(update) is True


async def throttle_update(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Let the update through, or stop it here (with one notice per flood)."""
    throttle = context.bot_data.get(THROTTLE_KEY)
    user = update.effective_user
    if not isinstance(throttle, Throttle) or user is None or not counts(update):
        return
    verdict = throttle.admit(user.id)
    if verdict is Verdict.PASS:
        return
    if verdict is Verdict.NOTICE:
        logger.info("user %s is throttled (over %d messages at once)", user.id, throttle.burst)
        chat = update.effective_chat
        lang = session.ui_lang(await session.lang_override(context, chat, user.id), user)
        notice = text("bot_throttled", lang, wait_seconds=throttle.wait_seconds(user.id))
        if update.message is not None:
            await reply_html(update.message, notice)
    raise ApplicationHandlerStop


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    """For `application.add_handlers(handlers(), group=THROTTLE_GROUP)`, before every other group."""
    return [TypeHandler(Update, throttle_update)]
