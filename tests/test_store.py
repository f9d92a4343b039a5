"""The session store: every API call, expiry, /forget, corrupt rows, a locked or corrupt file."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import bot.store
from bot.store import (
    SCHEMA_VERSION,
    GroupSettings,
    KeyboardRow,
    SessionStore,
    StoreUnavailable,
)
from core.checklist import ChecklistState, start
from core.query import Method, Query, Task

DAY = 86_400.0


class Clock:
    def __init__(self, now: float = 1_767_225_600.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(tmp_path: Path, clock: Clock) -> AsyncIterator[SessionStore]:
    opened = await SessionStore.open(tmp_path / "s.db", retention_days=30, clock=clock)
    yield opened
    await opened.close()


async def test_fresh_file_is_wal_full_sync_at_current_schema(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    await store.close()
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


async def test_last_query_and_lang_per_chat_and_user(store: SessionStore) -> None:
    query = Query(task=Task.FINETUNE, method=Method.LORA, model="qwen2.5-7b", card="rtx-4090")
    await store.set_last_query(1, 10, query)
    await store.set_lang(1, 10, "zh")
    assert await store.get_last_query(1, 10) == query
    assert await store.get_lang(1, 10) == "zh"
    assert await store.get_last_query(1, 11) is None  # another user in the same chat
    assert await store.get_last_query(2, 10) is None  # the same user in another chat
    await store.set_lang(1, 10, None)
    assert await store.get_lang(1, 10) is None
    assert await store.get_last_query(1, 10) == query  # setting the language kept the query


async def test_keyboard_query_round_trip_with_short_key(store: SessionStore) -> None:
    query = Query(model="llama-3.1-70b", precision="int4")
    key = await store.save_keyboard_query(-100, None, query, "zh")
    assert 1 <= len(key) <= 12
    assert await store.load_keyboard_query(key) == (query, "zh")
    assert await store.load_keyboard_query("nope") is None
    assert await store.load_keyboard_query("x' OR 1=1 --") is None


async def test_group_settings_change_only_named_fields(store: SessionStore) -> None:
    assert await store.get_group_settings(-5) == GroupSettings()
    await store.set_group_settings(-5, lang="zh")
    await store.set_group_settings(-5, currency="USD")
    assert await store.get_group_settings(-5) == GroupSettings(lang="zh", currency="USD")
    await store.set_group_settings(-5, lang=None)
    assert await store.get_group_settings(-5) == GroupSettings(lang=None, currency="USD")
    with pytest.raises(ValueError):
        await store.set_group_settings(-5, colour="red")


async def test_blocked_until_the_chat_talks_again(store: SessionStore) -> None:
    await store.mark_blocked(7)
    assert await store.is_blocked(7)
    await store.set_last_query(7, 7, Query(model="qwen2.5-7b"))
    assert not await store.is_blocked(7)
    # the same through a reply's one commit (its session row and its buttons), a first row and an update
    for chat_id in (8, 7):
        await store.mark_blocked(chat_id)
        keyboard = KeyboardRow(message_id=1, query=Query(model="qwen2.5-7b"), lang="en")
        assert await store.remember_answer(chat_id, chat_id, keyboard.query, None, keyboard)
        assert not await store.is_blocked(chat_id)
    await store.mark_blocked(9)
    await store.set_last_query(10, 10, Query(model="qwen2.5-7b"))
    assert await store.is_blocked(9)  # only the chat that talked


async def test_checklist_compare_and_set(store: SessionStore) -> None:
    state = start("en")
    assert await store.save_checklist(1, 10, state)
    moved = state.model_copy(update={"step": 1})
    assert await store.save_checklist(1, 10, moved, expected_step=0)
    # The same tap again: the step moved on, so it is not applied a second time.
    assert not await store.save_checklist(1, 10, moved.model_copy(update={"step": 2}), expected_step=0)
    assert (await store.get_checklist(1, 10)) == moved
    # Compare-and-set never creates a checklist that is not there.
    assert not await store.save_checklist(1, 11, moved, expected_step=0)
    await store.clear_checklist(1, 10)
    assert await store.get_checklist(1, 10) is None


async def test_forget_user_deletes_every_row_about_them(store: SessionStore, tmp_path: Path) -> None:
    query = Query(model="qwen2.5-7b")
    await store.set_last_query(10, 10, query)  # private chat
    await store.set_last_query(-100, 10, query)  # a group
    await store.save_checklist(-100, 10, start("en"))
    await store.save_checklist(10, 10, start("zh"))
    await store.save_keyboard_query(10, 5, query, "en")
    await store.mark_blocked(10)
    await store.set_last_query(-100, 11, query)  # someone else
    await store.set_group_settings(-100, lang="zh")
    deleted = await store.forget_user(10)
    assert deleted == 6
    assert await store.get_last_query(10, 10) is None
    assert await store.get_checklist(-100, 10) is None
    assert await store.get_last_query(-100, 11) == query
    assert (await store.get_group_settings(-100)).lang == "zh"
    db = sqlite3.connect(tmp_path / "s.db")
    for table, column in (
        ("sessions", "user_id"),
        ("checklists", "user_id"),
        ("keyboard_queries", "chat_id"),
    ):
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} = 10").fetchone()[0] == 0
    db.close()
    assert await store.forget_user(10) == 0


async def test_old_sessions_expire_on_access_and_purge(store: SessionStore, clock: Clock) -> None:
    query = Query(model="qwen2.5-7b")
    await store.set_last_query(1, 1, query)
    await store.save_checklist(1, 1, start("en"))
    key = await store.save_keyboard_query(1, 2, query, "en")
    clock.now += 29 * DAY
    await store.set_last_query(2, 2, query)
    assert await store.get_last_query(1, 1) == query
    clock.now += 2 * DAY  # 31 days after the first rows, 2 after the second
    assert await store.get_last_query(1, 1) is None
    assert await store.get_checklist(1, 1) is None
    assert await store.load_keyboard_query(key) is None
    assert await store.purge_expired() == 3
    assert await store.get_last_query(2, 2) == query


async def test_purge_on_open(tmp_path: Path) -> None:
    clock = Clock()
    store = await SessionStore.open(tmp_path / "s.db", retention_days=7, clock=clock)
    await store.set_last_query(1, 1, Query(model="qwen2.5-7b"))
    await store.close()
    clock.now += 8 * DAY
    store = await SessionStore.open(tmp_path / "s.db", retention_days=7, clock=clock)
    await store.close()
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    db.close()


async def test_corrupt_rows_read_as_missing_and_are_logged(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await store.set_last_query(1, 1, Query(model="qwen2.5-7b"))
    await store.save_checklist(1, 1, start("en"))
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE sessions SET last_query = '{\"task\": 5'")
    db.execute("UPDATE checklists SET state = '{\"step\": 99}'")
    db.commit()
    db.close()
    with caplog.at_level(logging.WARNING, logger="bot.store"):
        assert await store.get_last_query(1, 1) is None
        assert await store.get_checklist(1, 1) is None
    assert "does not validate" in caplog.text


async def test_locked_database_raises_store_unavailable_and_logs_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = await SessionStore.open(tmp_path / "s.db", busy_timeout_ms=50)
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with caplog.at_level(logging.ERROR, logger="bot.store"):
        with pytest.raises(StoreUnavailable):
            await store.set_lang(1, 1, "en")
        with pytest.raises(StoreUnavailable):
            await store.save_checklist(1, 1, start("en"))
    assert not store.healthy
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "locked" in errors[0].getMessage()
    other.execute("ROLLBACK")
    other.close()
    await store.set_lang(1, 1, "en")  # it recovers by itself once the lock is gone
    assert store.healthy
    assert await store.get_lang(1, 1) == "en"
    await store.close()


async def test_corrupt_file_raises_store_unavailable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not an SQLite database, just some bytes " * 200)
    with caplog.at_level(logging.ERROR, logger="bot.store"), pytest.raises(StoreUnavailable):
        await SessionStore.open(path)
    [record] = [r for r in caplog.records if r.name == "bot.store" and r.levelno == logging.ERROR]
    assert str(path) in record.getMessage() and "file is not a database" in record.getMessage()


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (99);"
    )
    db.close()
    with pytest.raises(StoreUnavailable):
        await SessionStore.open(path)


async def test_closed_store_raises_store_unavailable(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    await store.close()
    with pytest.raises(StoreUnavailable):
        await store.get_lang(1, 1)


async def test_state_round_trips_exactly(store: SessionStore) -> None:
    state = ChecklistState.model_validate(
        {
            "step": 3,
            "lang": "zh",
            "answers": {"job": "ft_lora", "params_b": 7.0, "precision": "bf16", "skipped": ["precision"]},
            "prompt_message_id": 42,
        }
    )
    await store.save_checklist(-1, 5, state)
    assert await store.get_checklist(-1, 5) == state


async def test_expired_rows_are_purged_daily_by_the_next_write(
    store: SessionStore, clock: Clock, tmp_path: Path
) -> None:
    await store.set_last_query(1, 1, Query(model="qwen2.5-7b"))
    clock.now += 31 * DAY
    await store.set_lang(2, 2, "en")  # the first write of a new day purges
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("SELECT user_id FROM sessions").fetchall() == [(2,)]
    db.close()


async def test_a_vision_job_is_kept_across_a_restart(tmp_path: Path, clock: Clock) -> None:
    """Vision follow-ups ('and at 1024x1024?') work after a restart: the job is in the store, beside the
    last language-model query, and a language-model answer clears it."""
    from core.vision.job import VisionJob

    path = tmp_path / "s.db"
    query = Query(model="qwen2.5-7b", card="rtx-4090")
    job = VisionJob(model="sdxl", width=1024, height=1024, card="rtx-4090")
    first = await SessionStore.open(path, retention_days=30, clock=clock)
    await first.set_last_question(1, 10, query, None)
    await first.set_last_question(1, 10, None, job)
    await first.close()
    again = await SessionStore.open(path, retention_days=30, clock=clock)
    assert await again.get_last_vision(1, 10) == job
    assert await again.get_last_query(1, 10) == query  # kept for a later language-model follow-up
    await again.set_last_question(1, 10, query, None)
    assert await again.get_last_vision(1, 10) is None
    await again.close()


async def test_a_parked_update_is_kept_until_the_statement_that_marks_it_handled(
    store: SessionStore, tmp_path: Path
) -> None:
    """bot/delivery.py parks an update held up in hand; marking it handled unparks it in the same statement
    (a trigger), so a crash leaves it either parked (answered on start) or handled, never both or neither."""
    bot = 42
    assert await store.park_update(bot, 7, 10, '{"update_id": 7}')
    assert await store.park_update(bot, 5, 11, '{"update_id": 5}')
    assert not await store.park_update(bot, 7, 10, '{"update_id": 7}')  # parked already
    assert await store.parked_updates(bot) == [(5, '{"update_id": 5}'), (7, '{"update_id": 7}')]
    assert await store.parked_updates(43) == []
    await store.mark_handled(bot, 7, at_once=True)
    assert await store.parked_updates(bot) == [(5, '{"update_id": 5}')]
    assert await store.was_handled(bot, 7)
    # A park that comes after the mark (the update finished while its park was on the way) parks nothing.
    assert not await store.park_update(bot, 7, 10, '{"update_id": 7}')
    assert await store.parked_updates(bot) == [(5, '{"update_id": 5}')]
    # A parked update holds the user's words: /forget removes it.
    assert await store.forget_user(11) == 1
    assert await store.parked_updates(bot) == []


async def test_a_mark_at_once_does_not_wait_for_a_ride(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parked update's mark is committed at once (until it is, a crash answers the update again), not
    after MARK_RIDE_SECONDS (made an hour here)."""
    monkeypatch.setattr(bot.store, "MARK_RIDE_SECONDS", 3600.0)
    commits = store.commits
    await asyncio.wait_for(store.mark_handled(1, 1, at_once=True), 60)
    assert store.commits == commits + 1
    assert await store.was_handled(1, 1)
