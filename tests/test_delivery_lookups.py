"""OnceOnlyUpdates asks the store about an update only when it can have been handled before (bot/delivery.py):
at or below the newest id the store held at the start, or below one this process already took in. The
store's one-statement writes (the handled-mark) commit on their own and are durable when they return."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from botapi_server import ANN, BotHarness
from telegram import Update

from bot.delivery import AnyApplication, OnceOnlyUpdates
from bot.session import STORE_KEY
from bot.store import ChatMemory, SessionStore, StoreUnavailable
from core.checklist import ChecklistState

BOT_ID = 42


class CountingStore(SessionStore):
    looked_up: list[int]

    async def was_handled(self, bot_id: int, update_id: int) -> bool:
        self.looked_up.append(update_id)
        return await super().was_handled(bot_id, update_id)


async def _open(path: Path) -> CountingStore:
    store = cast(CountingStore, await SessionStore.open(path))
    store.__class__ = CountingStore
    store.looked_up = []
    return store


def _processor(store: SessionStore) -> OnceOnlyUpdates:
    processor = OnceOnlyUpdates()
    app = SimpleNamespace(bot=SimpleNamespace(id=BOT_ID), bot_data={STORE_KEY: store})
    processor.watch(cast(AnyApplication, app))
    return processor


async def _handle(processor: OnceOnlyUpdates, update_id: int, answered: list[int]) -> None:
    async def answer() -> None:
        answered.append(update_id)

    await processor.do_process_update(Update(update_id=update_id), answer())


async def test_only_updates_that_can_have_been_handled_are_looked_up(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    for handled in (9, 10):  # a previous process handled these, then crashed before confirming them
        await store.mark_handled(BOT_ID, handled)
    processor = _processor(store)
    answered: list[int] = []
    for update_id in (9, 10, 11, 12):  # Telegram delivers 9 and 10 again, then the new ones
        await _handle(processor, update_id, answered)
    assert answered == [11, 12]
    assert store.looked_up == [9, 10]  # 11 and 12 are above everything handled or seen: no lookup
    await _handle(processor, 11, answered)  # 11 again in this process (a webhook's repeat): looked up
    assert answered == [11, 12] and store.looked_up == [9, 10, 11]
    await store.close()


async def test_an_empty_store_looks_up_nothing_new_and_marks_are_durable(tmp_path: Path) -> None:
    store = await _open(tmp_path / "s.db")
    processor = _processor(store)
    answered: list[int] = []
    for update_id in (100, 101, 102):
        await _handle(processor, update_id, answered)
    assert answered == [100, 101, 102] and store.looked_up == []
    other = sqlite3.connect(tmp_path / "s.db")  # each mark was committed when its write returned
    rows = other.execute("SELECT update_id FROM handled_updates ORDER BY update_id").fetchall()
    assert [r[0] for r in rows] == [100, 101, 102]
    other.close()
    await store.close()


async def test_a_failing_one_statement_write_reports_the_store_down(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")

    async def broken(db: Any) -> None:
        await db.execute("INSERT INTO no_such_table VALUES (1)")

    with pytest.raises(StoreUnavailable):
        await store._write(broken, one_statement=True)
    assert not store.healthy
    await store.set_lang(1, 1, "en")  # the next write succeeds: the store is back
    assert store.healthy and await store.get_lang(1, 1) == "en"
    await store.close()


async def test_a_private_question_reads_the_chat_memory_once(running_bot: BotHarness) -> None:
    """The checklist's handler reads this chat's memory to see whether a message answers a step, and the
    question handler uses what it read (bot/session.py chat_memory): one trip to SQLite's thread, not two.
    A follow-up still sees the previous question (the memory was read, not skipped)."""
    store = running_bot.app.bot_data[STORE_KEY]
    assert isinstance(store, SessionStore)
    reads: list[str] = []
    memory, checklist = store.get_chat_memory, store.get_checklist

    async def counted_memory(chat_id: int, user_id: int) -> ChatMemory:
        reads.append("memory")
        return await memory(chat_id, user_id)

    async def counted_checklist(chat_id: int, user_id: int) -> ChecklistState | None:
        reads.append("checklist")
        return await checklist(chat_id, user_id)

    store.get_chat_memory = counted_memory  # type: ignore[method-assign]
    store.get_checklist = counted_checklist  # type: ignore[method-assign]
    await running_bot.say(ANN, ANN, "13b lora 4090")
    assert reads == ["memory"]
    reads.clear()
    [reply] = await running_bot.say(ANN, ANN, "what about a 3090?")
    assert reads == ["memory"]
    assert "3090" in reply.text and "13" in reply.text, reply.text
