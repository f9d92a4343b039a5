"""The one session store of the bot: per-user sessions, checklists, group settings and keyboard queries.

Why it looks like this:
- SQLite in WAL mode with ``synchronous=FULL`` through aiosqlite's public API only (``connect``,
  ``execute``, ``execute_fetchall``, ``close``): every write is committed (flushed to disk) before its call
  returns, so an answer the bot has acknowledged survives a crash or ``kill -9`` and the user resumes at the
  same step.
- Two connections to the one file: a writer, used only by the group commit, and a reader for every lookup.
  A flush is several trips to the writer's thread (BEGIN, a savepoint per write, COMMIT), and a read on the
  writer between them would see writes not yet committed (an update marked handled that a failing commit
  then loses). The reader sees only committed data (WAL: each read is a snapshot of the last commit) and
  never waits for a flush to disk, which a lock around the writer would make every read do.
- Writes are group-committed: the writes asked for while one commit is under way are run together, each in
  a savepoint of its own, in the next ``BEGIN IMMEDIATE … COMMIT`` (one flush to disk for all of them; none
  of them returns before that commit; an answer alone in its commit is one statement, the handled-marks
  waiting included: the `answer_writes` view's trigger). Chats are answered concurrently
  (bot/delivery.py), so under load one question's session write and another's handled-mark share a flush
  instead of paying one each. A write
  that fails rolls back only its own savepoint; a commit that fails fails every write in it. The checklist
  is saved with compare-and-set on its step, so a double tap or two racing updates are applied once.
- JSON columns are validated by pydantic on read; a row that no longer validates is logged and treated as
  missing instead of crashing a handler.
- Any SQLite failure (locked past ``busy_timeout``, corrupt file, disk full) becomes ``StoreUnavailable``: the
  handlers tell the user the memory is down and keep answering plain questions; the operator gets one log line
  when the store goes down and one when it recovers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import aiosqlite
from pydantic import BaseModel, ConfigDict, ValidationError

from core.checklist import ChecklistState
from core.query import Query
from core.vision.job import VisionJob

logger = logging.getLogger(__name__)

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=BaseModel)

SECONDS_PER_DAY = 86_400
# How long an update's handled-mark waits for another write's commit to ride in before it is committed on
# its own (see mark_handled): under load a reply's commit comes every few tens of milliseconds.
MARK_RIDE_SECONDS = 0.1
# Telegram keeps an unconfirmed update for 24 hours; remembering handled ones for two days covers that.
HANDLED_UPDATE_DAYS = 2
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,12}$")
# a keyboard key is 48 random bits: a draw that collides is drawn again, this many times at most
KEY_DRAWS = 8

# Ordered forward migrations; migration i (1-based) brings the file to schema version i.
# Never edit a released migration: append a new one (tests/fixtures/store_v1.sql is a real version-1 file).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            chat_id INTEGER NOT NULL,
            user_id INTEGER NOT NULL,
            lang TEXT,
            last_query TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (chat_id, user_id))""",
        """CREATE TABLE group_settings (
            chat_id INTEGER PRIMARY KEY,
            lang TEXT,
            updated_at REAL NOT NULL)""",
        """CREATE TABLE keyboard_queries (
            key TEXT PRIMARY KEY,
            chat_id INTEGER NOT NULL,
            message_id INTEGER,
            query TEXT NOT NULL,
            lang TEXT NOT NULL,
            created_at REAL NOT NULL)""",
    ),
    (
        """CREATE TABLE checklists (
            chat_id INTEGER NOT NULL,
            user_id INTEGER NOT NULL,
            step INTEGER NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (chat_id, user_id))""",
        "ALTER TABLE group_settings ADD COLUMN currency TEXT",
        """CREATE TABLE blocked_chats (
            chat_id INTEGER PRIMARY KEY,
            blocked_at REAL NOT NULL)""",
        "CREATE INDEX sessions_by_user ON sessions (user_id)",
        "CREATE INDEX sessions_by_age ON sessions (updated_at)",
        "CREATE INDEX checklists_by_user ON checklists (user_id)",
        "CREATE INDEX checklists_by_age ON checklists (updated_at)",
        "CREATE INDEX keyboard_queries_by_chat ON keyboard_queries (chat_id)",
        "CREATE INDEX keyboard_queries_by_age ON keyboard_queries (created_at)",
    ),
    (
        # Updates already answered, so one Telegram delivers again after a crash is not answered twice.
        """CREATE TABLE handled_updates (
            bot_id INTEGER NOT NULL,
            update_id INTEGER NOT NULL,
            handled_at REAL NOT NULL,
            PRIMARY KEY (bot_id, update_id))""",
        "CREATE INDEX handled_updates_by_age ON handled_updates (handled_at)",
    ),
    (
        # The chart behind a message's "📊 Chart" button (a bot/charts spec as JSON): drawn after a restart.
        "ALTER TABLE keyboard_queries ADD COLUMN chart TEXT",
    ),
    (
        # The last image / video / speech job answered (a core.vision VisionJob as JSON), so its follow-ups
        # ('那1024x1024呢', 'and on an L40S?') still work after a restart.
        "ALTER TABLE sessions ADD COLUMN last_vision TEXT",
    ),
    (
        # A chat that blocked the bot is cleared when it talks to the bot again, i.e. when a session row is
        # written for it: in SQLite itself, so a reply's commit needs no DELETE of its own (one trip to the
        # writer's thread fewer per reply).
        """CREATE TRIGGER sessions_insert_unblocks AFTER INSERT ON sessions
           BEGIN DELETE FROM blocked_chats WHERE chat_id = NEW.chat_id; END""",
        """CREATE TRIGGER sessions_update_unblocks AFTER UPDATE ON sessions
           BEGIN DELETE FROM blocked_chats WHERE chat_id = NEW.chat_id; END""",
    ),
    (
        # Updates parked: in hand for a while (a send held by flood control, a Hub lookup), so kept here and
        # confirmed to Telegram before they are answered (bot/delivery.py), then answered after a restart.
        # The update's JSON as Telegram sent it. An update is unparked by the very statement that remembers
        # it handled (the trigger): answered and no longer parked in one transaction, never one without the
        # other.
        """CREATE TABLE parked_updates (
            bot_id INTEGER NOT NULL,
            update_id INTEGER NOT NULL,
            user_id INTEGER,
            payload TEXT NOT NULL,
            parked_at REAL NOT NULL,
            PRIMARY KEY (bot_id, update_id))""",
        "CREATE INDEX parked_updates_by_user ON parked_updates (user_id)",
        """CREATE TRIGGER handled_updates_unpark AFTER INSERT ON handled_updates
           BEGIN DELETE FROM parked_updates
                 WHERE bot_id = NEW.bot_id AND update_id = NEW.update_id; END""",
    ),
    (
        # What an answer leaves behind (remember_answer) as one statement: a row inserted into this view is
        # the session row, the query behind the buttons and the handled-marks riding along (a JSON array of
        # [bot id, update id, when]), each written only when given. One statement is one trip to the
        # writer's thread and its own transaction (SQLite makes a statement and its triggers atomic): an
        # answer's commit was BEGIN, two INSERTs, the marks and COMMIT, five trips of ~50 us of CPU each.
        """CREATE VIEW answer_writes AS
           SELECT NULL AS chat_id, NULL AS user_id, NULL AS remembered, NULL AS last_query,
                  NULL AS last_vision, NULL AS keyboard_key, NULL AS message_id, NULL AS keyboard_query,
                  NULL AS lang, NULL AS chart, NULL AS written_at, NULL AS marks
           WHERE 0""",
        """CREATE TRIGGER answer_writes_insert INSTEAD OF INSERT ON answer_writes
           BEGIN
             INSERT INTO sessions (chat_id, user_id, last_query, last_vision, updated_at)
               SELECT NEW.chat_id, NEW.user_id, NEW.last_query, NEW.last_vision, NEW.written_at
               WHERE NEW.remembered
               ON CONFLICT (chat_id, user_id)
               DO UPDATE SET last_query = COALESCE(excluded.last_query, sessions.last_query),
                             last_vision = excluded.last_vision, updated_at = excluded.updated_at;
             INSERT INTO keyboard_queries (key, chat_id, message_id, query, lang, created_at, chart)
               SELECT NEW.keyboard_key, NEW.chat_id, NEW.message_id, NEW.keyboard_query, NEW.lang,
                      NEW.written_at, NEW.chart
               WHERE NEW.keyboard_key IS NOT NULL;
             INSERT INTO handled_updates (bot_id, update_id, handled_at)
               SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
               FROM json_each(NEW.marks)
               WHERE NEW.marks IS NOT NULL
               ON CONFLICT (bot_id, update_id) DO NOTHING;
           END""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

GROUP_SETTING_COLUMNS = {"lang": "lang", "currency": "currency"}


class UserTable(BaseModel):
    """A table that holds rows about one user: `/forget` and retention both walk `USER_TABLES`."""

    model_config = ConfigDict(frozen=True)

    name: str
    user_column: str  # a private chat's id is its user's id, so `chat_id` names the user there
    time_column: str  # when the row was last touched, for retention


# Every table with rows about a person; a new one is added here once, and /forget and retention follow.
USER_TABLES: tuple[UserTable, ...] = (
    UserTable(name="sessions", user_column="user_id", time_column="updated_at"),
    UserTable(name="checklists", user_column="user_id", time_column="updated_at"),
    UserTable(name="keyboard_queries", user_column="chat_id", time_column="created_at"),
    UserTable(name="blocked_chats", user_column="chat_id", time_column="blocked_at"),
    UserTable(name="parked_updates", user_column="user_id", time_column="parked_at"),
)
# Tables about no person: a group's settings (set by its admins) and the update ids already handled.
OTHER_TABLES = ("group_settings", "handled_updates", "schema_version")


class StoreUnavailable(RuntimeError):  # noqa: N818 (the name handlers already code against)
    """The session store cannot be used right now (locked, corrupt, closed); plain answers still work."""


class GroupSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lang: str | None = None
    currency: str | None = None


@dataclass(frozen=True)
class ChatMemory:
    """What the store holds about one user in one chat before their message: the session row (their /lang
    choice, the last question and vision job), the chat's group settings and the user's checklist there,
    read in one trip."""

    lang: str | None = None
    last_query: Query | None = None
    last_vision: VisionJob | None = None
    group: GroupSettings = field(default_factory=GroupSettings)
    checklist: ChecklistState | None = None


@dataclass(frozen=True)
class KeyboardRow:
    """The query behind one message's buttons, and the chart spec (JSON) its "📊 Chart" button draws."""

    message_id: int | None
    query: Query
    lang: str
    chart: str | None = None


# A handled-mark: (bot id, update id, when)
Mark = tuple[int, int, float]

# A write or a read: statements on a connection, awaited (each `await db.execute(...)` is one trip to
# that connection's thread).
Op = Callable[[aiosqlite.Connection], Awaitable[Any]]


@dataclass
class _Write:
    """A write waiting for the next group commit, and the future its caller awaits. `one_statement`: the op
    runs a single statement, so alone in its group it needs no BEGIN and COMMIT (SQLite commits a lone
    statement by itself, flushed as any commit with `synchronous=FULL`): one trip to the writer's thread
    instead of three (an update's handled-mark is such a write, and usually alone)."""

    op: Op
    done: asyncio.Future[Any]
    one_statement: bool = False
    # the same write with handled-marks in its one statement (remember_answer's): marks waiting to ride need
    # no BEGIN, COMMIT and statement of their own beside it
    with_marks: Callable[[list[Mark]], Op] | None = None


class SessionStore:
    """Sessions, checklists, group settings and keyboard queries in one SQLite file."""

    def __init__(
        self,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        path: str,
        *,
        retention_days: int,
        clock: Callable[[], float],
    ) -> None:
        self._writer: aiosqlite.Connection | None = writer  # the group commit's alone
        self._reader: aiosqlite.Connection | None = reader  # every lookup: sees only what is committed
        self.path = path
        self.retention_days = retention_days
        self._clock = clock
        self._queued: list[_Write] = []  # writes for the next group commit
        self._committing: asyncio.Task[None] | None = None
        # handled-marks (bot id, update id, when) waiting to ride in the next commit, each with its caller's
        # future; `_marks_due` once they waited MARK_RIDE_SECONDS (or the store closes): committed then
        self._marks: list[tuple[tuple[int, int, float], asyncio.Future[None]]] = []
        self._marks_due = False
        self._mark_timer: asyncio.TimerHandle | None = None
        self.commits = 0  # group commits made (each one flush to disk): benchmarks and tests count them
        self._healthy = True
        self._writes_failing = False  # a lock can fail writes while reads go on: reads do not prove recovery
        self._last_purge = clock()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        retention_days: int = 30,
        busy_timeout_ms: int = 5000,
        clock: Callable[[], float] = time.time,
    ) -> SessionStore:
        """Open (creating or migrating) the store and drop sessions older than the retention period."""
        if retention_days < 1:
            raise ValueError("retention_days must be at least 1")
        location = str(path)
        try:
            writer = await aiosqlite.connect(location, isolation_level=None)
        except sqlite3.Error as exc:
            logger.error("session store %s cannot be opened: %s", location, exc)
            raise StoreUnavailable(f"cannot open session store: {exc}") from exc
        reader: aiosqlite.Connection | None = None
        try:
            await _prepare(writer, location, busy_timeout_ms)
            reader = await aiosqlite.connect(location, isolation_level=None)
            await reader.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        except (sqlite3.Error, StoreUnavailable) as exc:
            await _close_quietly(reader, writer)
            if isinstance(exc, StoreUnavailable):
                raise
            logger.error("session store %s is unusable (%s: %s)", location, type(exc).__name__, exc)
            raise StoreUnavailable(f"session store unusable: {exc}") from exc
        store = cls(writer, reader, location, retention_days=retention_days, clock=clock)
        purged = await store.purge_expired()
        if purged:
            logger.info("session store: purged %d expired rows on start", purged)
        return store

    async def close(self) -> None:
        """Commit the writes still queued (handled-marks included), then close."""
        if self._marks and self._writer is not None:
            self._commit_marks()
        committing = self._committing
        if committing is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(committing)
        writer, self._writer = self._writer, None
        reader, self._reader = self._reader, None
        if reader is not None:  # the reader first: the writer, closing last, checkpoints the WAL
            try:
                await reader.close()
            finally:
                if writer is not None:
                    await writer.close()
        elif writer is not None:
            await writer.close()

    async def __aenter__(self) -> SessionStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def healthy(self) -> bool:
        """False after the last call failed; true again once a call succeeds."""
        return self._healthy

    # ------------------------------------------------------------------ sessions

    async def get_last_query(self, chat_id: int, user_id: int) -> Query | None:
        row = await self._fetchone(
            "SELECT last_query FROM sessions WHERE chat_id = ? AND user_id = ? AND updated_at >= ?",
            (chat_id, user_id, self._cutoff()),
        )
        if row is None or row[0] is None:
            return None
        return _parse(Query, row[0], f"sessions.last_query chat={chat_id} user={user_id}")

    async def set_last_query(self, chat_id: int, user_id: int, query: Query) -> None:
        payload = query.model_dump_json()
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                """INSERT INTO sessions (chat_id, user_id, last_query, updated_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (chat_id, user_id)
                   DO UPDATE SET last_query = excluded.last_query, updated_at = excluded.updated_at""",
                (chat_id, user_id, payload, now),
            )  # and the chat is no longer blocked (the sessions triggers)

        await self._write(op, one_statement=True)

    async def get_chat_memory(self, chat_id: int, user_id: int) -> ChatMemory:
        """The session row, the group settings and the checklist at once: what get_lang, get_last_query,
        get_last_vision, get_group_settings and get_checklist give, in one trip to SQLite's thread instead of
        five (a private message is first offered to the checklist, then answered as a question)."""
        # One statement (one trip, one snapshot): a LEFT JOIN of the rows onto the key gives NULLs where
        # a row is missing, which reads the same as no row.
        cutoff = self._cutoff()
        row = await self._fetchone(
            """SELECT s.lang, s.last_query, s.last_vision, g.lang, g.currency, c.state
               FROM (SELECT ? AS chat_id, ? AS user_id) AS k
               LEFT JOIN sessions AS s
                 ON s.chat_id = k.chat_id AND s.user_id = k.user_id AND s.updated_at >= ?
               LEFT JOIN group_settings AS g ON g.chat_id = k.chat_id
               LEFT JOIN checklists AS c
                 ON c.chat_id = k.chat_id AND c.user_id = k.user_id AND c.updated_at >= ?""",
            (chat_id, user_id, cutoff, cutoff),
        )
        assert row is not None  # the key row is always there
        where = f"chat={chat_id} user={user_id}"
        return ChatMemory(
            lang=_optional_str(row[0]),
            last_query=_parse(Query, row[1], f"sessions.last_query {where}") if row[1] is not None else None,
            last_vision=_parse(VisionJob, row[2], f"sessions.last_vision {where}")
            if row[2] is not None
            else None,
            group=GroupSettings(lang=_optional_str(row[3]), currency=_optional_str(row[4])),
            checklist=_parse(ChecklistState, row[5], f"checklists {where}") if row[5] is not None else None,
        )

    async def get_last_vision(self, chat_id: int, user_id: int) -> VisionJob | None:
        row = await self._fetchone(
            "SELECT last_vision FROM sessions WHERE chat_id = ? AND user_id = ? AND updated_at >= ?",
            (chat_id, user_id, self._cutoff()),
        )
        if row is None or row[0] is None:
            return None
        return _parse(VisionJob, row[0], f"sessions.last_vision chat={chat_id} user={user_id}")

    async def set_last_question(
        self, chat_id: int, user_id: int, query: Query | None, vision: VisionJob | None
    ) -> None:
        """The context of this user's next message here, in one write: a language-model question's query
        (its vision job cleared), or a vision job (the last language-model query kept for later)."""
        await self.remember_answer(chat_id, user_id, query, vision, None)

    async def remember_answer(
        self,
        chat_id: int,
        user_id: int,
        query: Query | None,
        vision: VisionJob | None,
        keyboard: KeyboardRow | None,
    ) -> str | None:
        """What an answer leaves behind before it is sent, in one commit: the context of the user's next
        message (set_last_question, when the answer has a query or a vision job) and the query behind its
        buttons (save_keyboard_query, when it has buttons; its key is returned). Two commits before; with
        `synchronous=FULL` each is a flush to disk, and both are made before the reply goes out either way.
        One statement (the `answer_writes` view's trigger writes both), which takes the handled-marks
        waiting to ride as well when it is alone in its commit (_commit_queued): one trip to the writer's
        thread for the whole commit."""
        if query is None and vision is None and keyboard is None:
            return None
        query_json = query.model_dump_json() if query is not None else None
        vision_json = vision.model_dump_json() if vision is not None else None
        keyboard_json: str | None = None
        if keyboard is not None:
            # the buttons' query is usually the answer's own: its JSON is made once
            same = query_json is not None and keyboard.query is query
            keyboard_json = query_json if same else keyboard.query.model_dump_json()
        now = self._clock()

        def with_marks(marks: list[Mark]) -> Op:
            marks_json = json.dumps(marks, separators=(",", ":")) if marks else None

            async def op(db: aiosqlite.Connection) -> str | None:
                for _ in range(KEY_DRAWS):
                    key = secrets.token_urlsafe(6) if keyboard is not None else None  # 8 of [A-Za-z0-9_-]
                    try:
                        await db.execute(
                            """INSERT INTO answer_writes
                                   (chat_id, user_id, remembered, last_query, last_vision, keyboard_key,
                                    message_id, keyboard_query, lang, chart, written_at, marks)
                               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                            (
                                chat_id,
                                user_id,
                                query is not None or vision is not None,
                                query_json,
                                vision_json,
                                key,
                                keyboard.message_id if keyboard is not None else None,
                                keyboard_json,
                                keyboard.lang if keyboard is not None else None,
                                keyboard.chart if keyboard is not None else None,
                                now,
                                marks_json,
                            ),
                        )  # and the chat is no longer blocked (the sessions triggers)
                    except sqlite3.IntegrityError:
                        if key is None:
                            raise
                        continue  # the key was drawn before: nothing written (one statement), drawn again
                    return key
                raise sqlite3.IntegrityError(f"no free keyboard key in {KEY_DRAWS} draws")

            return op

        return await self._write(with_marks([]), one_statement=True, with_marks=with_marks)

    async def get_lang(self, chat_id: int, user_id: int) -> str | None:
        row = await self._fetchone(
            "SELECT lang FROM sessions WHERE chat_id = ? AND user_id = ? AND updated_at >= ?",
            (chat_id, user_id, self._cutoff()),
        )
        return None if row is None else _optional_str(row[0])

    async def set_lang(self, chat_id: int, user_id: int, lang: str | None) -> None:
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                """INSERT INTO sessions (chat_id, user_id, lang, updated_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (chat_id, user_id)
                   DO UPDATE SET lang = excluded.lang, updated_at = excluded.updated_at""",
                (chat_id, user_id, lang, now),
            )

        await self._write(op, one_statement=True)

    # ------------------------------------------------------------------ keyboard queries

    async def save_keyboard_query(
        self, chat_id: int, message_id: int | None, query: Query, lang: str, chart: str | None = None
    ) -> str:
        """Keep the query behind a message's buttons (and the chart spec its "📊 Chart" button draws, as
        JSON); the short key goes into callback data."""
        keyboard = KeyboardRow(message_id=message_id, query=query, lang=lang, chart=chart)
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> str:
            return await _insert_keyboard(db, chat_id, keyboard, now)

        return await self._write(op)

    async def load_keyboard_query(self, key: str) -> tuple[Query, str] | None:
        if not KEY_PATTERN.match(key):
            return None
        row = await self._fetchone(
            "SELECT query, lang FROM keyboard_queries WHERE key = ? AND created_at >= ?",
            (key, self._cutoff()),
        )
        if row is None:
            return None
        query = _parse(Query, row[0], f"keyboard_queries key={key}")
        lang = _optional_str(row[1])
        if query is None or lang is None:
            return None
        return query, lang

    async def load_keyboard_chart(self, key: str) -> str | None:
        """The chart spec JSON kept with a keyboard (None: none kept, expired, or an older row)."""
        if not KEY_PATTERN.match(key):
            return None
        row = await self._fetchone(
            "SELECT chart FROM keyboard_queries WHERE key = ? AND created_at >= ?", (key, self._cutoff())
        )
        return _optional_str(row[0]) if row is not None else None

    # ------------------------------------------------------------------ groups and chats

    async def get_group_settings(self, chat_id: int) -> GroupSettings:
        row = await self._fetchone("SELECT lang, currency FROM group_settings WHERE chat_id = ?", (chat_id,))
        if row is None:
            return GroupSettings()
        return GroupSettings(lang=_optional_str(row[0]), currency=_optional_str(row[1]))

    async def set_group_settings(self, chat_id: int, **fields: str | None) -> None:
        """Change only the named settings (``lang``, ``currency``); ``None`` clears one."""
        unknown = set(fields) - set(GROUP_SETTING_COLUMNS)
        if unknown:
            raise ValueError(f"unknown group settings: {sorted(unknown)}")
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                """INSERT INTO group_settings (chat_id, updated_at) VALUES (?, ?)
                   ON CONFLICT (chat_id) DO NOTHING""",
                (chat_id, now),
            )
            for name, value in fields.items():
                column = GROUP_SETTING_COLUMNS[name]  # a fixed column name, never user text
                await db.execute(
                    f"UPDATE group_settings SET {column} = ?, updated_at = ? WHERE chat_id = ?",
                    (value, now, chat_id),
                )

        await self._write(op)

    async def mark_blocked(self, chat_id: int) -> None:
        """Remember that this chat blocked or removed the bot (cleared when it talks to the bot again: any
        session row written for the chat clears it, by trigger)."""
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                """INSERT INTO blocked_chats (chat_id, blocked_at) VALUES (?, ?)
                   ON CONFLICT (chat_id) DO UPDATE SET blocked_at = excluded.blocked_at""",
                (chat_id, now),
            )

        await self._write(op, one_statement=True)

    async def is_blocked(self, chat_id: int) -> bool:
        row = await self._fetchone("SELECT 1 FROM blocked_chats WHERE chat_id = ?", (chat_id,))
        return row is not None

    # ------------------------------------------------------------------ updates handled once

    async def was_handled(self, bot_id: int, update_id: int) -> bool:
        """Whether this update was answered before (Telegram delivers an unconfirmed update again)."""
        row = await self._fetchone(
            "SELECT 1 FROM handled_updates WHERE bot_id = ? AND update_id = ?", (bot_id, update_id)
        )
        return row is not None

    async def newest_handled(self, bot_id: int) -> int | None:
        """The highest update id remembered as handled for this bot (None: none): an update above it, and
        above every one this process has seen since, cannot have been handled before (bot/delivery.py)."""
        row = await self._fetchone("SELECT MAX(update_id) FROM handled_updates WHERE bot_id = ?", (bot_id,))
        return None if row is None or row[0] is None else int(row[0])

    async def park_update(self, bot_id: int, update_id: int, user_id: int | None, payload: str) -> bool:
        """Keep an update in hand (its JSON as Telegram sent it) until it is marked handled, so the poll may
        confirm it before it is answered (bot/delivery.py); returns once committed. Not parked, and False,
        when it is remembered handled already (its mark committed first)."""
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> bool:
            cursor = await db.execute(
                """INSERT INTO parked_updates (bot_id, update_id, user_id, payload, parked_at)
                   SELECT ?, ?, ?, ?, ?
                   WHERE NOT EXISTS (SELECT 1 FROM handled_updates WHERE bot_id = ? AND update_id = ?)
                   ON CONFLICT (bot_id, update_id) DO NOTHING""",
                (bot_id, update_id, user_id, payload, now, bot_id, update_id),
            )
            return cursor.rowcount == 1

        return await self._write(op, one_statement=True)

    async def parked_updates(self, bot_id: int) -> list[tuple[int, str]]:
        """The updates parked and not yet handled, oldest first: (update id, JSON), answered on start."""
        reader = self._reader
        if reader is None:
            raise StoreUnavailable("session store is closed")
        try:
            rows = await reader.execute_fetchall(
                "SELECT update_id, payload FROM parked_updates WHERE bot_id = ? ORDER BY update_id", (bot_id,)
            )
        except (sqlite3.Error, ValueError) as exc:
            self._report_failure(exc, writing=False)
            raise StoreUnavailable(_describe(exc)) from exc
        return [(int(row[0]), str(row[1])) for row in rows]

    async def mark_handled(self, bot_id: int, update_id: int, *, at_once: bool = False) -> None:
        """Remember an update as answered; returns once that is committed.

        The mark rides in the next commit another write makes (a reply's session and keyboard, usually
        the next question's), or, when none comes within MARK_RIDE_SECONDS, in a commit of its own: every
        reply's mark its own commit was a flush to disk and ~0.6 ms of CPU per reply. All marks waiting
        go in one statement (`executemany`), after the commit's other writes. The mark only matters for an
        update Telegram delivers again after a crash, and a crash between an answer and its mark repeats
        that one answer (bot/delivery.py: at least once, never lost); riding widens that window by at most
        MARK_RIDE_SECONDS. `close` commits the marks still waiting. `at_once`: a parked update's mark (the
        statement that unparks it) goes into the next commit without waiting for a ride: until it is
        committed a crash answers that update again after the restart."""
        self._connection()  # a closed store refuses at once
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._marks.append(((bot_id, update_id, self._clock()), done))
        if at_once:
            self._commit_marks()
        elif self._mark_timer is None and not self._marks_due:
            self._mark_timer = loop.call_later(MARK_RIDE_SECONDS, self._commit_marks)
        await done

    # ------------------------------------------------------------------ privacy and expiry

    async def forget_user(self, user_id: int) -> int:
        """Delete every row about this user (in every chat); returns how many rows went."""

        async def op(db: aiosqlite.Connection) -> int:
            deleted = 0
            for table in USER_TABLES:
                cursor = await db.execute(
                    f"DELETE FROM {table.name} WHERE {table.user_column} = ?",
                    (user_id,),
                )
                deleted += max(cursor.rowcount, 0)
            return deleted

        return await self._write(op)

    async def purge_expired(self) -> int:
        """Delete rows of `USER_TABLES` untouched for longer than the retention period."""
        cutoff = self._cutoff()

        async def op(db: aiosqlite.Connection) -> int:
            deleted = 0
            for table in USER_TABLES:
                cursor = await db.execute(
                    f"DELETE FROM {table.name} WHERE {table.time_column} < ?",
                    (cutoff,),
                )
                deleted += max(cursor.rowcount, 0)
            cursor = await db.execute(
                "DELETE FROM handled_updates WHERE handled_at < ?",
                (self._clock() - HANDLED_UPDATE_DAYS * SECONDS_PER_DAY,),
            )
            return deleted + max(cursor.rowcount, 0)

        return await self._write(op)

    # ------------------------------------------------------------------ checklist

    async def get_checklist(self, chat_id: int, user_id: int) -> ChecklistState | None:
        row = await self._fetchone(
            "SELECT state FROM checklists WHERE chat_id = ? AND user_id = ? AND updated_at >= ?",
            (chat_id, user_id, self._cutoff()),
        )
        if row is None:
            return None
        return _parse(ChecklistState, row[0], f"checklists chat={chat_id} user={user_id}")

    async def save_checklist(
        self,
        chat_id: int,
        user_id: int,
        state: ChecklistState,
        *,
        expected_step: int | None = None,
    ) -> bool:
        """Save the state; with ``expected_step`` only while the stored step is still that (else False)."""
        payload = state.model_dump_json()
        now = self._clock()

        async def op(db: aiosqlite.Connection) -> bool:
            if expected_step is None:
                await db.execute(
                    """INSERT INTO checklists (chat_id, user_id, step, state, updated_at)
                       VALUES (?, ?, ?, ?, ?)
                       ON CONFLICT (chat_id, user_id) DO UPDATE
                       SET step = excluded.step, state = excluded.state, updated_at = excluded.updated_at""",
                    (chat_id, user_id, state.step, payload, now),
                )
                return True
            cursor = await db.execute(
                """UPDATE checklists SET step = ?, state = ?, updated_at = ?
                   WHERE chat_id = ? AND user_id = ? AND step = ?""",
                (state.step, payload, now, chat_id, user_id, expected_step),
            )
            return cursor.rowcount == 1

        return await self._write(op, one_statement=True)

    async def clear_checklist(self, chat_id: int, user_id: int) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute("DELETE FROM checklists WHERE chat_id = ? AND user_id = ?", (chat_id, user_id))

        await self._write(op, one_statement=True)

    # ------------------------------------------------------------------ plumbing

    def _cutoff(self) -> float:
        return self._clock() - self.retention_days * SECONDS_PER_DAY

    def _connection(self) -> aiosqlite.Connection:
        """The writer (the group commit's connection); StoreUnavailable once the store is closed."""
        if self._writer is None:
            raise StoreUnavailable("session store is closed")
        return self._writer

    async def _fetchone(self, sql: str, params: tuple[object, ...]) -> sqlite3.Row | None:
        """The row of a lookup by key, on the reader, in one trip to its thread (`execute_fetchall`; a
        cursor's execute, fetchone and close would be three: those trips, not SQLite, were most of a read's
        cost). It sees every write that returned, and nothing of a commit still under way."""
        reader = self._reader
        if reader is None:
            raise StoreUnavailable("session store is closed")
        try:
            rows = await reader.execute_fetchall(sql, params)
        except (sqlite3.Error, ValueError) as exc:  # ValueError: aiosqlite's "connection closed"
            self._report_failure(exc, writing=False)
            raise StoreUnavailable(_describe(exc)) from exc
        if not self._healthy and not self._writes_failing:
            self._recovered()
        return next(iter(rows), None)

    async def _write(
        self,
        op: Callable[[aiosqlite.Connection], Awaitable[T]],
        *,
        one_statement: bool = False,
        with_marks: Callable[[list[Mark]], Op] | None = None,
    ) -> T:
        """`op` in the next group commit; returns once that commit is on disk (`synchronous=FULL`).
        `one_statement`: the op runs one statement; `with_marks`: the same statement writing handled-marks
        too (see _Write)."""
        self._connection()  # a closed store refuses at once
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queued.append(_Write(op, done, one_statement, with_marks))
        self._start_committing()
        result = await done
        if self._clock() - self._last_purge >= SECONDS_PER_DAY:
            # A daily purge without a scheduler: the first write of each day drops what expired.
            self._last_purge = self._clock()
            purged = await self.purge_expired()
            if purged:
                logger.info("session store: purged %d expired rows", purged)
        return result

    def _start_committing(self) -> None:
        if self._committing is None or self._committing.done():
            self._committing = asyncio.ensure_future(self._commit_queued())

    def _commit_marks(self) -> None:
        """The waiting handled-marks waited long enough (or the store closes, or one must not wait): into the
        next commit now."""
        if self._mark_timer is not None:
            self._mark_timer.cancel()  # a no-op when it is the timer calling
            self._mark_timer = None
        if self._marks:
            self._marks_due = True
            self._start_committing()

    def _take_marks(self) -> list[tuple[tuple[int, int, float], asyncio.Future[None]]]:
        marks, self._marks, self._marks_due = self._marks, [], False
        if self._mark_timer is not None:
            self._mark_timer.cancel()
            self._mark_timer = None
        return marks

    async def _commit_queued(self) -> None:
        """Group commit: while one commit is on its way to disk new writes queue; they go together next.
        Each write runs in a savepoint of its own, so one that fails does not undo the others; the
        handled-marks waiting ride along (mark_handled), in one statement after them. A write alone in its
        commit that can carry the marks in its own statement (remember_answer's) takes them there: no
        BEGIN, COMMIT or statement of their own."""
        while self._queued or self._marks_due:
            group, self._queued = self._queued, []
            marks = self._take_marks()
            rider = _marks_op([mark for mark, _ in marks]) if marks else None
            writes = [*group, *(_Write(_no_op, done) for _, done in marks)]
            try:
                if not group and len(marks) == 1:  # a lone statement commits by itself
                    assert rider is not None
                    outcomes = [await _run_alone(self._connection(), rider)]
                elif len(group) == 1 and group[0].one_statement and rider is None:
                    outcomes = [await _run_alone(self._connection(), group[0].op)]
                elif len(group) == 1 and group[0].with_marks is not None and marks:
                    # the write and the marks in its one statement, committed by itself
                    carrier = group[0].with_marks([mark for mark, _ in marks])
                    outcomes = [await _run_alone(self._connection(), carrier), (None, None)]
                    if outcomes[0][1] is not None:
                        # nothing of that statement was written: the write fails alone, as in a group,
                        # and the marks go into the next commit (at once: they waited their ride)
                        writes, outcomes = group, outcomes[:1]
                        self._marks = [*marks, *self._marks]
                        self._commit_marks()
                else:
                    outcomes = await _commit_group(self._connection(), [w.op for w in group], rider)
            except (sqlite3.Error, ValueError, StoreUnavailable) as exc:  # BEGIN or COMMIT failed: none saved
                if not isinstance(exc, StoreUnavailable):
                    self._report_failure(exc, writing=True)
                failure = exc if isinstance(exc, StoreUnavailable) else StoreUnavailable(_describe(exc))
                for write in writes:
                    _settle(write.done, error=failure, cause=exc)
                continue
            if len(outcomes) < len(writes):  # the marks' one outcome stands for each of them
                outcomes = [*outcomes, *[outcomes[-1]] * (len(writes) - len(outcomes))]
            group = writes
            if any(error is None for _, error in outcomes):
                self.commits += 1
            failed = False
            for write, (value, error) in zip(group, outcomes, strict=True):
                if isinstance(error, sqlite3.Error):
                    failed = True
                    self._report_failure(error, writing=True)
                    _settle(write.done, error=StoreUnavailable(_describe(error)), cause=error)
                else:
                    _settle(write.done, value=value, error=error)
            if not failed and not self._healthy:
                self._recovered()

    def _recovered(self) -> None:
        self._healthy = True
        self._writes_failing = False
        logger.warning("session store %s is available again", self.path)

    def _report_failure(self, exc: Exception, *, writing: bool) -> None:
        self._writes_failing = self._writes_failing or writing
        if self._healthy:
            logger.error(
                "session store %s unavailable: %s (%s: %s); checklists and follow-ups are off, "
                "plain questions still work",
                self.path,
                _describe(exc),
                type(exc).__name__,
                exc,
            )
        self._healthy = False


async def _insert_keyboard(
    db: aiosqlite.Connection, chat_id: int, keyboard: KeyboardRow, now: float, query_json: str | None = None
) -> str:
    """Insert a keyboard row under a fresh random key (drawn again on the rare collision); its key.
    `query_json`: the keyboard query's JSON when the caller has it already."""
    payload = query_json if query_json is not None else keyboard.query.model_dump_json()
    while True:
        key = secrets.token_urlsafe(6)  # 8 characters of [A-Za-z0-9_-]
        try:
            await db.execute(
                """INSERT INTO keyboard_queries
                       (key, chat_id, message_id, query, lang, created_at, chart)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (key, chat_id, keyboard.message_id, payload, keyboard.lang, now, keyboard.chart),
            )
        except sqlite3.IntegrityError:
            continue
        return key


async def _run_alone(db: aiosqlite.Connection, op: Op) -> tuple[Any, BaseException | None]:
    """A one-statement write alone in its group, in SQLite's own transaction for the statement: committed
    (and flushed) when the statement returns, or nothing written if it raises."""
    try:
        return await op(db), None
    except Exception as error:  # handed to that write's caller (an sqlite3.Error marks the store down)
        return None, error


async def _commit_group(
    db: aiosqlite.Connection, ops: list[Op], rider: Op | None = None
) -> list[tuple[Any, BaseException | None]]:
    """Every op between one BEGIN IMMEDIATE and COMMIT, each in a savepoint (an op that raises is rolled back
    alone); (result, error) per op, then the rider's when there is one. A lone write needs no savepoint (two
    trips fewer): if it raises, the whole transaction is its own and is rolled back (the rider then goes
    alone). The rider, one statement (the handled-marks), runs last with no savepoint: a statement that
    fails is undone by SQLite itself, and one that took the transaction with it fails the commit. If BEGIN
    or COMMIT fails, everything is rolled back and the error raised."""
    await db.execute("BEGIN IMMEDIATE")
    outcomes: list[tuple[Any, BaseException | None]] = []
    try:
        if len(ops) == 1:
            try:
                value = await ops[0](db)
            except Exception as error:  # handed to that write's caller
                await db.execute("ROLLBACK")
                return [(None, error)] + ([await _run_alone(db, rider)] if rider is not None else [])
            outcomes.append((value, None))
            if rider is not None:
                outcomes.append(await _run_rider(db, rider))
            await db.execute("COMMIT")
            return outcomes
        for op in ops:
            await db.execute("SAVEPOINT one_write")
            try:
                value = await op(db)
            except Exception as error:  # handed to that write's caller
                await db.execute("ROLLBACK TO one_write")
                await db.execute("RELEASE one_write")
                outcomes.append((None, error))
            else:
                await db.execute("RELEASE one_write")
                outcomes.append((value, None))
        if rider is not None:
            outcomes.append(await _run_rider(db, rider))
        await db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error, ValueError):  # "no transaction is active" is fine too
            await db.execute("ROLLBACK")
        raise
    return outcomes


async def _run_rider(db: aiosqlite.Connection, rider: Op) -> tuple[Any, BaseException | None]:
    """The rider inside the group's transaction; if its failure ended the transaction, the commit fails."""
    outcome = await _run_alone(db, rider)
    if outcome[1] is not None and not db.in_transaction:
        raise outcome[1]
    return outcome


def _marks_op(marks: list[tuple[int, int, float]]) -> Op:
    """Handled-marks as one statement."""

    async def op(db: aiosqlite.Connection) -> None:
        await db.executemany(
            """INSERT INTO handled_updates (bot_id, update_id, handled_at) VALUES (?, ?, ?)
               ON CONFLICT (bot_id, update_id) DO NOTHING""",
            marks,
        )

    return op


async def _no_op(db: aiosqlite.Connection) -> None:
    """A mark's place among a commit's writes: its statement is the rider's."""


def _settle(
    done: asyncio.Future[Any],
    *,
    value: Any = None,
    error: BaseException | None = None,
    cause: BaseException | None = None,
) -> None:
    if done.done():  # its caller was cancelled: the write is committed (or not) all the same
        return
    if error is None:
        done.set_result(value)
        return
    if cause is not None and cause is not error:
        error.__cause__ = cause
    done.set_exception(error)


async def _prepare(db: aiosqlite.Connection, path: str, busy_timeout_ms: int) -> None:
    """On opening the writer: the pragmas, then the migrations."""
    await db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    await db.execute("PRAGMA journal_mode = WAL")
    await db.execute("PRAGMA synchronous = FULL")
    await _migrate(db, path)


async def _close_quietly(*connections: aiosqlite.Connection | None) -> None:
    """Close what an open that failed half-way had opened; its own error is the one worth raising."""
    for connection in connections:
        if connection is not None:
            with contextlib.suppress(sqlite3.Error, ValueError):
                await connection.close()


async def _migrate(db: aiosqlite.Connection, path: str) -> None:
    """Bring the file forward to SCHEMA_VERSION, one migration per transaction."""
    await db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    rows = list(await db.execute_fetchall("SELECT version FROM schema_version"))
    if len(rows) > 1:
        raise StoreUnavailable(f"session store {path}: schema_version holds {len(rows)} rows")
    current = int(rows[0][0]) if rows else 0
    if current > SCHEMA_VERSION:
        logger.error(
            "session store %s has schema version %d, newer than this code's %d; refusing to downgrade",
            path,
            current,
            SCHEMA_VERSION,
        )
        raise StoreUnavailable(f"session store schema {current} is newer than supported {SCHEMA_VERSION}")
    if not rows:
        await db.execute("INSERT INTO schema_version (version) VALUES (0)")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        await db.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version - 1]:
                await db.execute(statement)
            await db.execute("UPDATE schema_version SET version = ?", (version,))
            await db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error, ValueError):
                await db.execute("ROLLBACK")
            raise
        logger.info("session store %s migrated to schema version %d", path, version)


def _parse(model: type[ModelT], payload: object, where: str) -> ModelT | None:
    """Validate a JSON column; a row that no longer fits the model is logged and treated as missing."""
    if not isinstance(payload, str | bytes):
        logger.warning("session store: %s holds %s, not JSON; ignored", where, type(payload).__name__)
        return None
    try:
        return model.model_validate_json(payload)
    except ValidationError as exc:
        logger.warning("session store: %s does not validate as %s; ignored (%s)", where, model.__name__, exc)
        return None


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _describe(exc: Exception) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "database is locked by another process"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "database file is corrupt"
    if "readonly" in text or "read-only" in text:
        return "database file is read-only"
    if "disk" in text and "full" in text:
        return "disk is full"
    if "closed" in text or "no active connection" in text:
        return "database connection is closed"
    return "database error"
