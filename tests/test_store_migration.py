"""A version-1 store file (tests/fixtures/store_v1.sql) opens, migrates forward and keeps its data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.store import SCHEMA_VERSION, GroupSettings, SessionStore
from core.checklist import start
from core.query import Precision, Query

FIXTURE = Path(__file__).parent / "fixtures" / "store_v1.sql"
FIXTURE_TIME = 1_767_312_000.0  # the newest row's timestamp in the fixture


def _v1_file(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(FIXTURE.read_text(encoding="utf-8"))
    db.close()
    return path


async def test_v1_file_migrates_and_keeps_its_rows(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    store = await SessionStore.open(path, clock=lambda: FIXTURE_TIME + 3600)
    last = await store.get_last_query(111, 111)
    assert last == Query(model="qwen2.5-7b", card="rtx-4090", precision=Precision.FP16)
    assert await store.get_lang(111, 111) == "zh"
    assert await store.get_lang(-1001234567890, 111) == "en"
    assert await store.get_last_query(222, 222) is not None
    assert await store.get_last_query(333, 333) is None  # the row an old bug wrote reads as missing
    assert await store.get_group_settings(-1001234567890) == GroupSettings(lang="zh", currency=None)
    loaded = await store.load_keyboard_query("k1AbCdEf")
    assert loaded is not None and loaded[1] == "zh"
    # What version 2 added works on the migrated file.
    assert await store.save_checklist(111, 111, start("zh"))
    await store.set_group_settings(-1001234567890, currency="CNY")
    assert (await store.get_group_settings(-1001234567890)).currency == "CNY"
    assert await store.forget_user(111) >= 3
    await store.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


async def test_migration_runs_once(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    for _ in range(2):
        store = await SessionStore.open(path, clock=lambda: FIXTURE_TIME)
        await store.close()
    db = sqlite3.connect(path)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert {"sessions", "group_settings", "keyboard_queries", "checklists", "blocked_chats"} <= tables


async def test_v1_rows_older_than_retention_are_purged_on_open(tmp_path: Path) -> None:
    path = _v1_file(tmp_path)
    store = await SessionStore.open(path, retention_days=30, clock=lambda: FIXTURE_TIME + 60 * 86_400)
    assert await store.get_last_query(111, 111) is None
    await store.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
    db.close()
