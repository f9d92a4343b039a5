"""Group commit in the session store: writes asked for together share one commit (one flush to disk with
`synchronous=FULL`), each is durable when its call returns, and one that fails undoes only itself."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.store import SessionStore, StoreUnavailable


async def test_concurrent_writes_share_commits_and_each_is_on_disk_when_it_returns(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    before = store.commits
    await asyncio.gather(*(store.set_lang(n, n, "zh") for n in range(50)))
    commits = store.commits - before
    assert 1 <= commits < 50, f"{commits} commits for 50 concurrent writes"
    other = sqlite3.connect(tmp_path / "s.db")  # another connection sees them all: committed, not queued
    assert other.execute("SELECT COUNT(*) FROM sessions WHERE lang = 'zh'").fetchone()[0] == 50
    other.close()
    await store.close()


async def test_a_failing_write_undoes_only_itself(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")

    def broken(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO sessions (chat_id, user_id, lang, updated_at) VALUES (7, 7, 'en', 0)")
        db.execute("INSERT INTO no_such_table VALUES (1)")

    results = await asyncio.gather(
        store.set_lang(1, 1, "en"), store._write(broken), store.set_lang(2, 2, "zh"), return_exceptions=True
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], StoreUnavailable)
    assert await store.get_lang(1, 1) == "en" and await store.get_lang(2, 2) == "zh"
    assert await store.get_lang(7, 7) is None  # its first statement was rolled back with it
    await store.set_lang(3, 3, "en")
    assert store.healthy
    await store.close()


async def test_close_commits_what_is_queued(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    writes = [asyncio.ensure_future(store.set_lang(n, n, "en")) for n in range(10)]
    await asyncio.sleep(0)  # queued, the first commit under way
    await store.close()
    await asyncio.gather(*writes)
    reopened = await SessionStore.open(tmp_path / "s.db")
    assert [await reopened.get_lang(n, n) for n in range(10)] == ["en"] * 10
    await reopened.close()
    with pytest.raises(StoreUnavailable):
        await store.set_lang(11, 11, "en")
