"""Group commit in the session store: writes asked for together share one commit (one flush to disk with
`synchronous=FULL`), each is durable when its call returns, and one that fails undoes only itself."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from bot.store import MARK_RIDE_SECONDS, KeyboardRow, SessionStore, StoreUnavailable
from core.query import Query


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

    async def broken(db: aiosqlite.Connection) -> None:
        await db.execute("INSERT INTO sessions (chat_id, user_id, lang, updated_at) VALUES (7, 7, 'en', 0)")
        await db.execute("INSERT INTO no_such_table VALUES (1)")

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


async def test_reads_during_a_flush_see_only_what_is_committed(tmp_path: Path) -> None:
    """A flush is several trips to the writer's thread; a lookup made between them (on the reader) sees the
    last commit, never a write of the flush under way, which could still be rolled back."""
    store = await SessionStore.open(tmp_path / "s.db")
    inside = asyncio.Event()
    release = asyncio.Event()

    async def slow(db: aiosqlite.Connection) -> None:
        await db.execute(
            "INSERT INTO sessions (chat_id, user_id, lang, updated_at) VALUES (7, 7, 'en', 1e12)"
        )
        inside.set()
        await release.wait()

    write = asyncio.ensure_future(store._write(slow))
    await inside.wait()
    assert await store.get_lang(7, 7) is None  # written, not yet committed
    assert await store.was_handled(1, 1) is False
    release.set()
    await write
    assert await store.get_lang(7, 7) == "en"  # committed before the write returned
    await store.close()


def test_the_store_uses_only_aiosqlites_public_api() -> None:
    source = (Path(__file__).parent.parent / "bot" / "store.py").read_text(encoding="utf-8")
    for private in ("._execute", "._conn", "._connection", "._tx", "._thread"):
        assert private not in source.replace("self._connection", ""), private


def _marked_on_disk(path: Path) -> list[int]:
    other = sqlite3.connect(path)
    try:
        return [row[0] for row in other.execute("SELECT update_id FROM handled_updates ORDER BY update_id")]
    finally:
        other.close()


async def test_a_handled_mark_rides_in_the_next_commit_and_is_on_disk_when_it_returns(tmp_path: Path) -> None:
    """A reply's handled-mark does not cost a flush of its own when another write comes within
    MARK_RIDE_SECONDS: it is committed with that write (bot/store.py, mark_handled)."""
    store = await SessionStore.open(tmp_path / "s.db")
    before = store.commits
    mark = asyncio.ensure_future(store.mark_handled(1, 41))
    await asyncio.sleep(0)  # the mark waits for a commit to ride in
    assert _marked_on_disk(tmp_path / "s.db") == []
    await store.set_lang(5, 5, "zh")  # the next question's write: the mark goes with it
    await mark
    assert store.commits - before == 1
    assert _marked_on_disk(tmp_path / "s.db") == [41]
    assert await store.was_handled(1, 41) and await store.get_lang(5, 5) == "zh"
    await store.close()


async def test_a_handled_mark_alone_is_committed_after_its_wait(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.gather(store.mark_handled(1, 7), store.mark_handled(1, 8))
    assert loop.time() - started >= MARK_RIDE_SECONDS * 0.9  # it waited for a ride, none came
    assert _marked_on_disk(tmp_path / "s.db") == [7, 8]
    await store.close()


async def test_close_commits_the_handled_marks_still_waiting(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    marks = [asyncio.ensure_future(store.mark_handled(1, n)) for n in (3, 4, 5)]
    await asyncio.sleep(0)
    await store.close()
    await asyncio.gather(*marks)
    assert _marked_on_disk(tmp_path / "s.db") == [3, 4, 5]
    with pytest.raises(StoreUnavailable):
        await store.mark_handled(1, 6)


async def test_a_failing_write_beside_riding_marks_undoes_only_itself(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "s.db")

    async def broken(db: aiosqlite.Connection) -> None:
        await db.execute("INSERT INTO sessions (chat_id, user_id, lang, updated_at) VALUES (7, 7, 'en', 0)")
        await db.execute("INSERT INTO no_such_table VALUES (1)")

    mark = asyncio.ensure_future(store.mark_handled(1, 9))
    await asyncio.sleep(0)
    with pytest.raises(StoreUnavailable):
        await store._write(broken)
    await mark  # committed all the same
    assert _marked_on_disk(tmp_path / "s.db") == [9]
    assert await store.get_lang(7, 7) is None
    await store.close()


def _answer_keyboard(message_id: int) -> KeyboardRow:
    return KeyboardRow(message_id=message_id, query=Query(), lang="en", chart='{"kind": "memory"}')


class _Trips:
    """Counts the statements sent to the writer's thread (one trip each) while it is installed."""

    def __init__(self, store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        writer = store._writer
        assert writer is not None
        execute, executemany = writer.execute, writer.executemany

        def counted(call: Any) -> Any:
            def inner(*args: Any, **kwargs: Any) -> Any:
                self.count += 1
                return call(*args, **kwargs)

            return inner

        monkeypatch.setattr(writer, "execute", counted(execute))
        monkeypatch.setattr(writer, "executemany", counted(executemany))


async def test_an_answers_commit_carries_the_waiting_marks_in_its_one_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session row, the buttons' query and the handled-marks waiting for a ride: one statement, one
    trip to the writer's thread and one commit (it was BEGIN, two INSERTs, the marks and COMMIT)."""
    store = await SessionStore.open(tmp_path / "s.db")
    trips = _Trips(store, monkeypatch)
    before = store.commits
    marks = [asyncio.ensure_future(store.mark_handled(1, n)) for n in (41, 42)]
    await asyncio.sleep(0)
    key = await store.remember_answer(5, 5, Query(), None, _answer_keyboard(9))
    await asyncio.gather(*marks)
    assert (trips.count, store.commits - before) == (1, 1)
    assert key is not None and await store.load_keyboard_chart(key) == '{"kind": "memory"}'
    assert await store.get_last_query(5, 5) == Query()
    assert _marked_on_disk(tmp_path / "s.db") == [41, 42]
    assert await store.remember_answer(6, 6, Query(), None, None) is None  # no buttons: no key
    assert await store.get_last_query(6, 6) == Query()
    await store.close()


async def test_an_answer_that_fails_writes_nothing_and_its_riding_marks_are_committed(
    tmp_path: Path,
) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON keyboard_queries BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    other.commit()
    mark = asyncio.ensure_future(store.mark_handled(1, 7))
    await asyncio.sleep(0)
    with pytest.raises(StoreUnavailable):
        await store.remember_answer(5, 5, Query(), None, _answer_keyboard(9))
    await mark  # committed all the same, on its own
    assert _marked_on_disk(tmp_path / "s.db") == [7]
    assert await store.get_last_query(5, 5) is None  # the session row went with the statement
    other.execute("DROP TRIGGER refuse")
    other.commit()
    other.close()
    assert await store.remember_answer(5, 5, Query(), None, _answer_keyboard(9)) is not None
    assert store.healthy
    await store.close()


async def test_a_keyboard_key_drawn_twice_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await SessionStore.open(tmp_path / "s.db")
    first = await store.remember_answer(5, 5, Query(), None, _answer_keyboard(9))
    assert first is not None
    draws = iter([first, first, "fresh-key"])
    monkeypatch.setattr("bot.store.secrets.token_urlsafe", lambda _: next(draws))
    row = KeyboardRow(message_id=10, query=Query(model="llama-3-8b"), lang="zh")
    assert await store.remember_answer(6, 6, Query(), None, row) == "fresh-key"
    loaded = await store.load_keyboard_query("fresh-key")
    assert loaded is not None and loaded[0].model == "llama-3-8b"
    assert (await store.load_keyboard_query(first) or (None,))[0] == Query()  # the first one untouched
    await store.close()
