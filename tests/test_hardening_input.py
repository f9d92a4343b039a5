"""Hostile and odd input: any Unicode, huge messages, HTML-, SQL- and template-looking text, garbage inline
queries and callback data. Every time: a reply (or a polite refusal), valid Telegram HTML within 4096
characters, no handler error, and the next normal question still answered.

Property tests run through the in-process FakeTelegram transport (fast); a fixed corpus runs through the
loopback HTTP stand-in (the full wire path). The fake validates every send as Telegram does (tags, balance,
entities, length in UTF-16 units); `fake.refused()` lists what Telegram would have rejected.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from botapi_server import ANN, BOB, BOT_USERNAME, GROUP, BotHarness, InProcessBot, recording_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from telegram.constants import InlineKeyboardButtonLimit, MessageLimit

from bot.app import build_application, running
from bot.fake_telegram import FakeTelegram, FakeTelegramRequest, StoredMessage, utf16_len
from bot.render import telegram_html_problems
from bot.session import STORE_KEY
from bot.settings import Settings
from bot.store import SessionStore

T = TypeVar("T")
_GROUP_IDS = itertools.count(1)
NORMAL = "13b lora 4090"

CORPUS = (
    "<b>bold</b> <script>alert(1)</script> &amp; & &lt; <a href='javascript:x'>x</a> </b>",
    "<i>unclosed <b>tags <pre>",
    "{{ 7*7 }} {% for x in range(10) %}{{ x }}{% endfor %} ${7*7} #{7*7} {{ config.items() }}",
    "'; DROP TABLE sessions; -- \" OR 1=1 -- ",
    "Robert'); DELETE FROM checklists WHERE 1=1; --",
    "مرحبا هل يمكن تشغيل لاما على ٤٠٩٠؟ \u202eRTL override\u202c",
    "שלום 13b lora 4090 עברית",
    "🙂🚀🔥👩‍💻🏳️‍🌈 4090 🤖" * 20,
    "zero\u200bwidth\u200c\u200djoiner\ufeff 7b\u2060 inference",
    "\x00\x01\x02\x07\x1b[31mred\x1b[0m\x7f",
    "a" * 10_000,
    "<b>" * 3000,
    "&" * 5000,
    "13b lora 4090 " + "🙂" * 4000,
    "𝕳𝖊𝖑𝖑𝖔 𝟒𝟎𝟗𝟎 ℌ𝔢𝔩𝔩𝔬",
    "Z̷̡̢̛̝͎̟͈̀͂͆a̶̧̛̹̗͉̿̈́̎l̴̨͙̗̈́̓g̶̢̛͖̈́o̵̢͔͒ 70b",
    "\n\n\n   \t 7b   \n\n",
    "@" + BOT_USERNAME + " " + "<tg-spoiler>" * 10,
    "/start " + "x" * 300,
    "/fit <b>&</b>",
    "/card {{7*7}}",
    "/cancel",
)


def _problems(message: StoredMessage) -> list[str]:
    found = telegram_html_problems(message.html or "")
    if utf16_len(message.text) > MessageLimit.MAX_TEXT_LENGTH:
        found.append(f"{utf16_len(message.text)} UTF-16 units")
    return found


# -- property tests, in process ---------------------------------------------------------------------


class LoopThread:
    """One event loop in a thread with the bot running in it, so synchronous hypothesis tests can drive it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


class Session:
    """The in-process bot and its fake Telegram, started once for a whole property test."""

    def __init__(self, tmp: Path) -> None:
        self.fake = FakeTelegram(bot_username=BOT_USERNAME)
        self.fake.add_user(ANN, "Ann", language_code="en")
        self.fake.add_user(BOB, "Bob", language_code="zh-hans")
        self.fake.add_group(GROUP, "GPU team", creator=ANN)
        settings = Settings(token=self.fake.token, db_path=tmp / "input.sqlite3", throttle_burst=1_000_000)
        self.app = build_application(
            settings,
            request=FakeTelegramRequest(self.fake),
            get_updates_request=FakeTelegramRequest(self.fake),
        )
        self.errors = recording_errors(self.app)
        self.bot = InProcessBot(self.app, self.fake, self.errors)
        self._running = running(self.app, polling=False)

    async def start(self) -> None:
        await self._running.__aenter__()

    async def stop(self) -> None:
        await self._running.__aexit__(None, None, None)

    async def say(self, chat_id: int, user_id: int, text: str) -> list[StoredMessage]:
        before = len(self.fake.bot_messages(chat_id))
        self.fake.send_text(chat_id, user_id, text)
        await self.bot.process()
        return self.fake.bot_messages(chat_id)[before:]

    async def check(self, chat_id: int, user_id: int, text: str) -> None:
        """The hostile message gets well-formed replies (one at least, unless it is a command); then a
        normal question is still answered."""
        replies = await self.say(chat_id, user_id, text)
        addressed = chat_id > 0 and not text.lstrip().startswith("/")
        assert replies or not addressed, f"no reply to {text[:80]!r}"
        for reply in replies:
            assert not _problems(reply), (text[:80], _problems(reply))
        assert not self.fake.refused(), self.fake.refused()[-1].description
        assert not self.errors, self.errors
        [answer] = await self.say(chat_id, user_id, NORMAL if chat_id > 0 else f"@{BOT_USERNAME} {NORMAL}")
        assert "4090" in answer.text


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopThread, Session]]:
    loop = LoopThread()
    bot = loop.run(_started(Session(tmp_path_factory.mktemp("input"))))
    yield loop, bot
    loop.run(bot.stop())
    loop.close()


async def _started(session: Session) -> Session:
    await session.start()
    return session


ANY_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=300)
HOSTILE_PIECES = st.sampled_from(
    [
        "<b>",
        "</b>",
        "<script>",
        "&",
        "&amp;",
        "&#0;",
        "{{ 7*7 }}",
        "{%",
        "'; DROP TABLE x; --",
        "\u202e",
        "\u200b",
        "\x00",
        "🙂",
        "👩‍💻",
        "/",
        "@",
        '<a href="x">',
        "]]>",
        "\\",
        "%s",
        "{0}",
        "4090",
        "70b",
        "lora",
    ]
)
MIXED = st.lists(st.one_of(HOSTILE_PIECES, ANY_TEXT), min_size=1, max_size=12).map("".join)


def _sendable(text: str) -> bool:
    """What a Telegram client can send: not blank (Telegram trims messages)."""
    return bool(text.strip())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(ANY_TEXT, MIXED).filter(_sendable))
def test_any_private_message_gets_valid_replies(session: tuple[LoopThread, Session], text: str) -> None:
    loop, bot = session
    loop.run(bot.check(ANN, ANN, text))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=MIXED.filter(_sendable))
def test_any_group_mention_gets_valid_replies(session: tuple[LoopThread, Session], text: str) -> None:
    """A fresh group each time: Telegram's (and the rate limiter's) 20 messages a minute are per group."""
    loop, bot = session
    group = GROUP - next(_GROUP_IDS)
    bot.fake.add_group(group, "Hostile group", creator=BOB)
    loop.run(bot.check(group, ANN, f"@{BOT_USERNAME} {text}"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.one_of(ANY_TEXT, MIXED, st.just("")))
def test_any_inline_query_gets_a_valid_answer(session: tuple[LoopThread, Session], query: str) -> None:
    loop, bot = session

    async def ask() -> None:
        query_id = bot.fake.inline_query(ANN, query)
        await bot.bot.process()
        assert query_id in bot.fake.inline_answers
        for result in bot.fake.inline_answers[query_id].get("results") or []:
            html = str((result.get("input_message_content") or {}).get("message_text", ""))
            assert not telegram_html_problems(html)
        assert not bot.fake.refused() and not bot.errors

    loop.run(ask())


_MAX_DATA = InlineKeyboardButtonLimit.MAX_CALLBACK_DATA
CALLBACK_DATA = st.text(st.characters(codec="utf-8"), min_size=1, max_size=_MAX_DATA).filter(
    lambda d: 1 <= len(d.encode()) <= _MAX_DATA
) | st.from_regex(
    r"\A(ck:v1:\d{1,20}:(\d{1,3}|x):[A-Za-z0-9_.:-]{1,30}|k:[A-Za-z0-9_-]{1,12}:[a-z=_]{1,20})\Z"
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=CALLBACK_DATA)
def test_any_callback_data_is_answered(session: tuple[LoopThread, Session], data: str) -> None:
    """Callback data arrives from clients and may be forged: every press gets an answer, nothing crashes."""
    loop, bot = session

    async def press() -> None:
        [anchor] = await bot.say(ANN, ANN, NORMAL)
        query_id = bot.fake.press_stale(ANN, anchor.message_id, data, ANN)
        await bot.bot.process()
        assert query_id in bot.fake.callback_answers
        assert not bot.fake.refused() and not bot.errors
        for message in bot.fake.bot_messages(ANN)[-3:]:
            assert not _problems(message)

    loop.run(press())


# -- the fixed corpus, over HTTP ---------------------------------------------------------------------------


async def test_corpus_over_http(running_bot: BotHarness) -> None:
    bot = running_bot
    for text in CORPUS:
        expected = len(bot.fake.bot_messages(ANN)) + (0 if text.startswith("/") else 1)
        bot.fake.send_text(ANN, ANN, text)
        await bot.wait_until(bot.settled, f"the bot to read {text[:40]!r}")
        await bot.wait_until(
            lambda n=expected: len(bot.fake.bot_messages(ANN)) >= n,  # type: ignore[misc]
            f"a reply to {text[:40]!r}",
        )
        [answer] = await bot.say(ANN, ANN, NORMAL)
        assert "4090" in answer.text
    for message in bot.fake.bot_messages(ANN):
        assert not _problems(message), (message.html or "")[:200]
    assert not bot.fake.refused()
    # Nothing the users wrote ran as SQL: the store still works and holds the last question.
    store = bot.app.bot_data[STORE_KEY]
    assert isinstance(store, SessionStore) and await store.get_last_query(ANN, ANN) is not None


async def test_corpus_in_a_group_over_http(running_bot: BotHarness) -> None:
    bot = running_bot
    for text in CORPUS[:12]:
        [reply] = await bot.say(GROUP, BOB, f"@{BOT_USERNAME} {text}")
        assert not _problems(reply)
    assert not bot.fake.refused()
