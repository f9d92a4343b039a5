"""The session store unusable, end to end through the Bot API stand-in: the database locked by another
process, read-only, or corrupt at start. Each time: a clear message to the user where memory is needed, one
clear log line for the operator, and plain questions still answered.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from botapi_server import (
    ANN,
    BotApiServer,
    BotHarness,
    loopback_request,
    loopback_updates_request,
    recording_errors,
)

from bot.app import build_application, running
from bot.settings import Settings
from bot.store import SessionStore

QUESTION = "can a 4090 run qwen2.5 7b?"
GARBAGE = b"this is not an sqlite database, it is a text file that got in the way\n" * 100


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _chmod(db_path: Path, file_mode: int, dir_mode: int) -> None:
    db_path.chmod(file_mode)
    db_path.parent.chmod(dir_mode)


@asynccontextmanager
async def _bot(
    settings: Settings, server: BotApiServer, store: SessionStore | None = None
) -> AsyncIterator[BotHarness]:
    app = build_application(
        settings, request=loopback_request(), get_updates_request=loopback_updates_request(), store=store
    )
    errors = recording_errors(app)
    async with running(app, poll_timeout=2):
        yield BotHarness(app, server.fake, errors)


async def _memory_down_but_answering(bot: BotHarness) -> None:
    """What the user sees with the store down: a clear note where memory is needed, answers otherwise."""
    [note] = await bot.say(ANN, ANN, "/checklist")
    assert "memory" in note.text and "Plain questions still work" in note.text
    [forgot] = await bot.say(ANN, ANN, "/forget")
    assert "memory is unavailable" in forgot.text
    [answer] = await bot.say(ANN, ANN, QUESTION)
    assert "4090" in answer.text and "memory is unavailable" not in answer.text
    assert not bot.errors and not bot.fake.refused()


def _store_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("bot") and r.levelno >= logging.ERROR]


async def test_corrupt_file_at_start(
    bot_settings: Settings, botapi_server: BotApiServer, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(db_path, GARBAGE)
    async with _bot(bot_settings, botapi_server) as bot:
        await _memory_down_but_answering(bot)
    lines = _store_lines(caplog)
    # the operator is told which file and SQLite's reason
    assert any(str(db_path) in line and "file is not a database" in line for line in lines), lines
    assert _read(db_path) == GARBAGE, "a corrupt file is left for the operator, not replaced"


async def test_read_only_database(
    bot_settings: Settings, botapi_server: BotApiServer, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Writes refused with SQLITE_READONLY (the same error a read-only file or mount gives, also as root)."""
    store = await SessionStore.open(db_path)
    await store._connection().run(lambda db: db.execute("PRAGMA query_only = ON"))
    try:
        async with _bot(bot_settings, botapi_server, store=store) as bot:
            await _memory_down_but_answering(bot)
    finally:
        await store.close()
    lines = _store_lines(caplog)
    assert len([line for line in lines if "read-only" in line]) == 1, lines


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes through file permissions")
async def test_read_only_file(
    bot_settings: Settings, botapi_server: BotApiServer, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await (await SessionStore.open(db_path)).close()
    _chmod(db_path, 0o444, 0o555)
    try:
        async with _bot(bot_settings, botapi_server) as bot:
            await _memory_down_but_answering(bot)
    finally:
        _chmod(db_path, 0o644, 0o755)
    assert _store_lines(caplog)


_LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")  # in WAL mode: no other writer until this transaction ends; readers go on
db.execute("CREATE TABLE IF NOT EXISTS held (x)")
print("locked", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
"""


async def test_database_locked_by_another_process(
    bot_settings: Settings, botapi_server: BotApiServer, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Opened first, as by a running bot; a short busy timeout, so the test need not wait 5 s a write.
    store = await SessionStore.open(db_path, busy_timeout_ms=200)
    locker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _LOCKER,
        str(db_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert locker.stdin is not None and locker.stdout is not None
    try:
        assert await asyncio.wait_for(locker.stdout.readline(), timeout=30) == b"locked\n"
        async with _bot(bot_settings, botapi_server, store=store) as bot:
            await _memory_down_but_answering(bot)
            locker.stdin.close()
            await locker.wait()
            # The lock is gone: memory works again without a restart.
            [prompt] = await bot.say(ANN, ANN, "/checklist")
            assert "1/7" in prompt.text
    finally:
        if locker.returncode is None:
            locker.kill()
            await locker.wait()
        await store.close()
    lines = _store_lines(caplog)
    assert len([line for line in lines if "locked by another process" in line]) == 1, lines
    assert any("available again" in r.getMessage() for r in caplog.records)
