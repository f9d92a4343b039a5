"""What a new user meets first: the greeting, switching language in one command, and /forget and retention
walking the same list of tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from botapi_server import ANN, InProcessBot

from bot.store import OTHER_TABLES, USER_TABLES, SessionStore

CJK = range(0x4E00, 0xA000)


def _has_chinese(text: str) -> bool:
    return any(ord(ch) in CJK for ch in text)


async def test_start_greets_by_first_name(inprocess_app: InProcessBot) -> None:
    fake = inprocess_app.fake
    fake.send_text(ANN, ANN, "/start")
    await inprocess_app.process()
    greeting = fake.bot_messages(ANN)[-1].text
    assert greeting.startswith("Hi Ann!")


async def test_lang_with_an_argument_switches_at_once(inprocess_app: InProcessBot) -> None:
    fake = inprocess_app.fake
    fake.send_text(ANN, ANN, "/lang zh")
    await inprocess_app.process()
    confirmation = fake.bot_messages(ANN)[-1]
    assert confirmation.reply_markup is None, "no menu: the argument chose already"
    assert _has_chinese(confirmation.text)
    assert await inprocess_app.app.bot_data["store"].get_lang(ANN, ANN) == "zh"
    fake.send_text(ANN, ANN, "13b lora 4090")
    await inprocess_app.process()
    assert _has_chinese(fake.bot_messages(ANN)[-1].text)
    fake.send_text(ANN, ANN, "/lang auto")
    await inprocess_app.process()
    assert await inprocess_app.app.bot_data["store"].get_lang(ANN, ANN) is None
    assert inprocess_app.errors == []


async def test_every_table_is_either_about_a_user_or_named_as_not(tmp_path: Path) -> None:
    """A new table must be added to USER_TABLES (so /forget and retention both reach it) or OTHER_TABLES."""
    path = tmp_path / "s.db"
    store = await SessionStore.open(path)
    await store.close()
    db = sqlite3.connect(path)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in USER_TABLES:
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table.name})")}
        assert {table.user_column, table.time_column} <= columns, table
    db.close()
    assert tables == {t.name for t in USER_TABLES} | set(OTHER_TABLES)
