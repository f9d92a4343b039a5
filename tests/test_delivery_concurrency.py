"""Updates of different chats handled at once, each chat's in order, each answered once (bot/delivery.py).

Through the real Application polling the loopback stand-in: one chat's send is held at the stand-in (as a
slow Telegram or flood control would hold it) while other chats go on. Once it is in hand for PARK_SECONDS
it is parked (kept in the real SQLite store) and the polls confirm past it, so Telegram stops handing it, and
every update after it, back again; it is still answered once, and unparked by the same statement that marks
it handled. A `kill -9` while it is held (a real `python -m bot` on a real SQLite file) answers it after the
restart from the store, once, and nothing else again. One that Telegram also delivers again (killed before
the poll that confirmed it) is answered once too.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from bot_process import BotProcess
from botapi_server import WAIT, BotApiServer, BotHarness

from bot.delivery import ChatOrder, order_keys
from bot.fake_telegram import FakeTelegram
from bot.store import SessionStore

HELD = 7001  # the chat whose sends the stand-in holds
OTHERS = (7002, 7003, 7004)
CONTROL = 7000
FIRST_QUESTION = "7b inference 3090"
SECOND_QUESTION = "13b lora 4090"

Call = Callable[..., Awaitable[tuple[int, bytes]]]


class HeldChat:
    """The stand-in holds every sendMessage to one chat until released (handled once released)."""

    def __init__(self, fake: FakeTelegram, chat_id: int) -> None:
        self.chat_id = chat_id
        self.release = asyncio.Event()
        self.waiting = 0
        self._call: Call = fake.call
        fake.call = self._gated  # type: ignore[method-assign]

    def undo(self, fake: FakeTelegram) -> None:
        fake.call = self._call  # type: ignore[method-assign,assignment]

    async def _gated(
        self, method: str, params: Mapping[str, Any], files: Any = None, *, token: str | None = None
    ) -> tuple[int, bytes]:
        if method.lower() == "sendmessage" and str(params.get("chat_id")) == str(self.chat_id):
            self.waiting += 1
            await self.release.wait()
        return await self._call(method, params, files, token=token)


def _users(fake: FakeTelegram, *users: int) -> None:
    for user in users:
        fake.add_user(user, f"User{user}", language_code="en")


async def _expected_answers(bot: BotHarness, *questions: str) -> list[str]:
    """What the bot answers to each question, asked one at a time by a control user."""
    return [(await bot.say(CONTROL, CONTROL, question))[0].text for question in questions]


async def test_a_held_update_is_parked_confirmed_and_answered_once_while_other_chats_go_on(
    running_bot: BotHarness, db_path: Path
) -> None:
    fake = running_bot.fake
    _users(fake, CONTROL, HELD, *OTHERS)
    [expected] = await _expected_answers(running_bot, FIRST_QUESTION)
    held = HeldChat(fake, HELD)
    fake.send_text(HELD, HELD, FIRST_QUESTION)
    held_update = fake.last_update_id
    await running_bot.wait_until(lambda: held.waiting == 1, "the held chat's answer at the stand-in")
    # Held past PARK_SECONDS: kept in the store, and the polls confirm past it before it is answered.
    await running_bot.wait_until(lambda: _parked(db_path) == [held_update], "the held update parked")
    await running_bot.wait_until(lambda: fake.confirmed_offset > held_update, "the held update confirmed")
    delivered_when_parked = fake.deliveries[held_update]
    others: list[int] = []
    for chat in OTHERS:
        await running_bot.say(chat, chat, FIRST_QUESTION)  # answered while the held one waits
        others.append(fake.last_update_id)
    assert fake.bot_messages(HELD) == []
    held.release.set()
    await running_bot.wait_until(lambda: len(fake.bot_messages(HELD)) == 1, "the held answer")
    await running_bot.wait_until(lambda: fake.confirmed_offset > fake.last_update_id, "all confirmed")
    await running_bot.say(CONTROL, CONTROL, "/help")  # a late repeat would have landed by now
    assert [m.text for m in fake.bot_messages(HELD)] == [expected]
    for chat in OTHERS:
        assert [m.text for m in fake.bot_messages(chat)] == [expected]
    # Confirmed while unanswered: Telegram never handed it again once parked.
    assert fake.deliveries[held_update] == delivered_when_parked
    await running_bot.wait_until(lambda: _marked(db_path, [held_update]), "the held update marked handled")
    assert _parked(db_path) == [], "answered, and unparked by the same statement that marked it handled"


async def test_one_chats_updates_keep_their_order(running_bot: BotHarness) -> None:
    fake = running_bot.fake
    _users(fake, CONTROL, HELD, *OTHERS)
    expected = await _expected_answers(running_bot, FIRST_QUESTION, SECOND_QUESTION, "/help")
    held = HeldChat(fake, HELD)
    for question in (FIRST_QUESTION, SECOND_QUESTION, "/help"):
        fake.send_text(HELD, HELD, question)
    await running_bot.wait_until(lambda: held.waiting == 1, "the first answer held at the stand-in")
    await running_bot.say(OTHERS[0], OTHERS[0], SECOND_QUESTION)  # another chat is not held up
    await asyncio.sleep(0.3)
    assert held.waiting == 1, "a later update of the held chat was handled before the first was answered"
    held.release.set()
    await running_bot.wait_until(lambda: len(fake.bot_messages(HELD)) == 3, "the held chat's answers")
    assert [m.text for m in fake.bot_messages(HELD)] == expected


async def test_kill_9_mid_answer_answers_the_parked_update_once_after_the_restart(
    botapi_server: BotApiServer, db_path: Path, tmp_path: Path
) -> None:
    fake = botapi_server.fake
    _users(fake, CONTROL, HELD, *OTHERS)
    log = tmp_path / "bot.log"
    async with BotProcess(botapi_server, db_path, log) as first:
        fake.send_text(CONTROL, CONTROL, FIRST_QUESTION)
        await fake.wait_for(lambda: len(fake.bot_messages(CONTROL)) == 1, within=WAIT, what="control")
        expected = fake.bot_messages(CONTROL)[0].text
        held = HeldChat(fake, HELD)
        fake.send_text(HELD, HELD, FIRST_QUESTION)
        held_update = fake.last_update_id
        await fake.wait_for(lambda: held.waiting == 1, within=WAIT, what="the held answer at the stand-in")
        await fake.wait_for(
            lambda: _parked(db_path) == [held_update], within=WAIT, what="the held one parked"
        )
        others: list[int] = []
        for chat in OTHERS:
            fake.send_text(chat, chat, FIRST_QUESTION)
            others.append(fake.last_update_id)
        await fake.wait_for(
            lambda: all(len(fake.bot_messages(chat)) == 1 for chat in OTHERS), within=WAIT, what="the others"
        )
        await fake.wait_for(lambda: _marked(db_path, others), within=WAIT, what="the others marked handled")
        await fake.wait_for(lambda: fake.confirmed_offset > others[-1], within=WAIT, what="all confirmed")
        # Mid-answer (its reply held at Telegram), parked, and confirmed to Telegram: only the store has it.
        assert _parked(db_path) == [held_update]
        delivered_before_kill = fake.deliveries[held_update]
        await first.kill()
    held.undo(fake)  # the restarted bot's sends go through
    fake.release_held()
    async with BotProcess(botapi_server, db_path, log):
        await fake.wait_for(lambda: len(fake.bot_messages(HELD)) == 1, within=WAIT * 2, what="the held one")
        fake.send_text(CONTROL, CONTROL, "/help")
        await fake.wait_for(lambda: len(fake.bot_messages(CONTROL)) == 2, within=WAIT, what="a late reply")
        await fake.wait_for(lambda: _parked(db_path) == [], within=WAIT, what="the held one unparked")
    assert "answering 1 updates parked before the restart" in log.read_text()
    assert fake.deliveries[held_update] == delivered_before_kill, (
        "confirmed before the kill: only the store had it"
    )
    assert [m.text for m in fake.bot_messages(HELD)] == [expected]
    for chat in OTHERS:
        assert [m.text for m in fake.bot_messages(chat)] == [expected], f"chat {chat} answered twice"


async def test_a_parked_update_that_telegram_delivers_again_is_answered_once(
    botapi_server: BotApiServer, db_path: Path, tmp_path: Path
) -> None:
    """Killed after parking an update but before the poll that confirmed it: after the restart the store
    replays it and Telegram delivers it again; one answer."""
    fake = botapi_server.fake
    _users(fake, CONTROL, HELD)
    log = tmp_path / "bot.log"
    async with BotProcess(botapi_server, db_path, log):
        fake.send_text(CONTROL, CONTROL, FIRST_QUESTION)
        await fake.wait_for(lambda: len(fake.bot_messages(CONTROL)) == 1, within=WAIT, what="control")
        expected = fake.bot_messages(CONTROL)[0].text
    # The bot is gone (killed): a question comes in, and the store holds it parked, as a bot killed between
    # the park's commit and the next poll leaves it.
    message = fake.send_text(HELD, HELD, FIRST_QUESTION)
    update_id = fake.last_update_id
    update = {"update_id": update_id, "message": message}
    async with await SessionStore.open(db_path) as store:
        assert await store.park_update(int(fake.token.split(":")[0]), update_id, HELD, json.dumps(update))
    async with BotProcess(botapi_server, db_path, log):
        await fake.wait_for(lambda: len(fake.bot_messages(HELD)) == 1, within=WAIT * 2, what="the answer")
        await fake.wait_for(lambda: fake.confirmed_offset > update_id, within=WAIT, what="confirmed")
        fake.send_text(CONTROL, CONTROL, "/help")
        await fake.wait_for(lambda: len(fake.bot_messages(CONTROL)) == 2, within=WAIT, what="a late reply")
        await fake.wait_for(lambda: _parked(db_path) == [], within=WAIT, what="unparked")
    assert fake.deliveries[update_id] >= 1  # Telegram handed it too
    assert [m.text for m in fake.bot_messages(HELD)] == [expected], "answered once"


def _parked(db_path: Path) -> list[int]:
    """The update ids the bot's store holds parked (read beside the running bot, as WAL allows)."""
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT update_id FROM parked_updates ORDER BY update_id").fetchall()
    except sqlite3.Error:
        return []
    finally:
        db.close()
    return [row[0] for row in rows]


def _marked(db_path: Path, update_ids: list[int]) -> bool:
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT update_id FROM handled_updates").fetchall()
    except sqlite3.Error:
        return False
    finally:
        db.close()
    return set(update_ids) <= {row[0] for row in rows}


async def test_chat_order_waits_only_for_updates_sharing_a_chat_or_user() -> None:
    order = ChatOrder()
    ran: list[str] = []

    async def update(name: str, keys: tuple[tuple[str, int], ...], hold: asyncio.Event | None) -> None:
        before, mine = order.enter(keys)
        try:
            if before:
                await asyncio.wait(before)
            if hold is not None:
                await hold.wait()
            ran.append(name)
        finally:
            order.leave(keys, mine)

    first_done = asyncio.Event()
    group_then_private = [
        asyncio.ensure_future(update("ann in the group", (("chat", -1), ("user", 1)), first_done)),
        asyncio.ensure_future(update("bob in the group", (("chat", -1), ("user", 2)), None)),
        asyncio.ensure_future(update("ann's inline query", (("user", 1),), None)),
        asyncio.ensure_future(update("li in private", (("chat", 3), ("user", 3)), None)),
    ]
    await asyncio.sleep(0.05)
    assert ran == ["li in private"]  # shares nothing with the held update
    first_done.set()
    await asyncio.gather(*group_then_private)
    assert ran.index("ann in the group") < ran.index("bob in the group")
    assert ran.index("ann in the group") < ran.index("ann's inline query")
    assert order.busy_keys == 0


def test_an_update_is_ordered_by_its_chat_and_its_user() -> None:
    from telegram import Update

    message = {
        "message_id": 1,
        "date": 0,
        "chat": {"id": -5, "type": "group", "title": "g"},
        "from": {"id": 9, "is_bot": False, "first_name": "A"},
        "text": "hi",
    }
    assert order_keys(Update.de_json({"update_id": 1, "message": message}, None)) == (
        ("chat", -5),
        ("user", 9),
    )
    inline = {"id": "q", "from": {"id": 9, "is_bot": False, "first_name": "A"}, "query": "x", "offset": ""}
    assert order_keys(Update.de_json({"update_id": 2, "inline_query": inline}, None)) == (("user", 9),)
    assert order_keys(object()) == ()
