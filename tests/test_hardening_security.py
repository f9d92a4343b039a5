"""Security and privacy: the token never reaches a log line or traceback, user text is never a template or
SQL, group settings change only by admins, /forget leaves no row about the user, retention is configurable.
"""

from __future__ import annotations

import io
import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from botapi_server import (
    ANN,
    BOB,
    BOT_USERNAME,
    GROUP,
    BotApiServer,
    BotHarness,
    loopback_updates_request,
    start_bot,
)
from sql_sources import sql_problems
from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.app import running
from bot.fake_telegram import Fault
from bot.logging_setup import REDACTED, RedactingFilter, install_redaction
from bot.session import STORE_KEY
from bot.settings import Settings, load_settings
from bot.store import GroupSettings, SessionStore
from core.query import Query

REPO = Path(__file__).resolve().parents[1]
NOISY = ("httpx", "httpcore", "telegram", "telegram.ext", "bot", "aiosqlite")


# -- the token -----------------------------------------------------------------------------------------------


@pytest.fixture
def all_logs() -> Iterator[io.StringIO]:
    """Every log record at DEBUG (httpx and httpcore included) into one buffer, redaction as in production."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    levels = {name: logging.getLogger(name).level for name in ("", *NOISY)}
    root.addHandler(handler)
    for name in ("", *NOISY):
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        for name in ("", *NOISY):
            target = logging.getLogger(name)
            for flt in [f for f in target.filters if isinstance(f, RedactingFilter)]:
                target.removeFilter(flt)
        for other in root.handlers:
            for flt in [f for f in other.filters if isinstance(f, RedactingFilter)]:
                other.removeFilter(flt)


async def _boom(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A handler that fails with the token in its exception, the worst case for a traceback."""
    raise RuntimeError(f"failed calling {context.bot.base_url}/sendMessage with token {context.bot.token}")


async def test_token_never_logged_even_at_debug_with_errors(
    bot_settings: Settings, botapi_server: BotApiServer, all_logs: io.StringIO
) -> None:
    token = botapi_server.fake.token
    install_redaction([token])
    # Polls through httpx (PTB's own transport), whose request lines quote the URL: they must be redacted.
    app, errors = start_bot(bot_settings, get_updates_request=loopback_updates_request())
    app.add_handler(CommandHandler("boom", _boom), group=-5)
    async with running(app, poll_timeout=2):
        bot = BotHarness(app, botapi_server.fake, errors)
        await bot.say(ANN, ANN, "13b lora 4090")
        fake = botapi_server.fake
        fake.schedule(Fault("drop", "sendMessage"))  # a network error; the apology follows
        for text, failures in (("/help", 1), ("/boom", 2)):  # then a handler crashing with the token
            sent = len(fake.bot_messages(ANN))
            fake.send_text(ANN, ANN, text)
            await fake.wait_for(
                lambda n=sent, f=failures: len(errors) >= f and len(fake.bot_messages(ANN)) > n,
                what=f"the apology after {text}",
            )
    output = all_logs.getvalue()
    # httpx's own request lines (they carry the URL, and so the token) were captured, redacted (the sends go
    # over bot/http11.py, which logs no URL)
    request_line = rf"httpx: HTTP Request: POST \S*/bot{re.escape(REDACTED)}/getUpdates"
    assert re.search(request_line, output), output[:2000]
    assert "Traceback" in output and "RuntimeError" in output, "the traceback was captured"
    assert REDACTED in output
    secret = token.split(":", 1)[1]
    assert token not in output and secret not in output


def test_token_is_not_in_settings_repr_or_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "123456789:TEST-token-for-the-fake-bot-api-00000"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", token)
    settings = load_settings(dotenv=tmp_path / ".env")
    assert token not in repr(settings) and token not in str(settings)
    monkeypatch.setenv("TELEGRAM_API_URL", "not a url")
    with pytest.raises(ValueError) as error:
        load_settings(dotenv=tmp_path / ".env")
    assert token not in str(error.value)


# -- templates and SQL ------------------------------------------------------------------------------------


def _python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def test_no_user_text_is_ever_a_template() -> None:
    """Templates come only from templates/ through bot.render (autoescaped); nothing builds one from text."""
    pattern = re.compile(r"\b(Template\(|from_string\(|\.compile_expression\(|Environment\()")
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in _python_files("bot", "core")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    # The one jinja2 Environment, with autoescape on and a file loader, lives in bot/render.py.
    assert all(f.startswith("bot/render.py") and "Environment(" in f for f in found), found
    from jinja2.nodes import EvalContext

    from bot.render import environment

    env = environment()
    names = env.list_templates(extensions=["j2"])
    assert len(names) > 10, names  # the loader finds the real templates/
    # EvalContext applies the autoescape setting (a flag, or a function of the name) to one template
    assert [name for name in names if not EvalContext(env, name).autoescape] == []


HOSTILE = (
    "'; DROP TABLE sessions; --",
    "Robert'); DROP TABLE group_settings;--",
    '" OR 1=1 --',
    "x' || (SELECT group_concat(sql) FROM sqlite_master) || '",
    "?; DELETE FROM keyboard_queries; --",
    ":name @name $name %s %(x)s {0} {}",
    "a\x00b\\n\u202e数据库😀",
    "",
)


async def test_hostile_strings_are_stored_byte_identical_and_tables_stay_intact(tmp_path: Path) -> None:
    """Every text column the store writes gets each hostile string through the real store and gives it back
    unchanged; afterwards the schema is the same and only the rows written exist (a canary row untouched)."""
    store = await SessionStore.open(tmp_path / "sessions.sqlite3")
    try:
        db = sqlite3.connect(tmp_path / "sessions.sqlite3")
        schema = sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
        db.close()
        canary = Query(model="canary", card="rtx-4090")
        await store.set_last_query(1, 1, canary)
        await store.set_lang(1, 1, "en")
        await store.set_group_settings(-1, lang="en", currency="USD")
        keys = []
        for n, text in enumerate(HOSTILE, start=10):
            query = Query(model=text, card=text)
            await store.set_last_query(n, n, query)
            await store.set_lang(n, n, text)
            await store.set_group_settings(-n, lang=text, currency=text)
            keys.append(await store.save_keyboard_query(n, n, query, text))
            assert await store.get_last_query(n, n) == query
            assert await store.get_lang(n, n) == text
            assert await store.get_group_settings(-n) == GroupSettings(lang=text, currency=text)
            assert await store.load_keyboard_query(keys[-1]) == (query, text)
        assert await store.get_last_query(1, 1) == canary and await store.get_lang(1, 1) == "en"
        assert await store.get_group_settings(-1) == GroupSettings(lang="en", currency="USD")
    finally:
        await store.close()
    db = sqlite3.connect(tmp_path / "sessions.sqlite3")
    try:
        assert sorted(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall()) == schema
        count = len(HOSTILE) + 1
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (count,)
        assert db.execute("SELECT count(*) FROM group_settings").fetchone() == (count,)
        assert db.execute("SELECT count(*) FROM keyboard_queries").fetchone() == (len(HOSTILE),)
        stored = {row[0] for row in db.execute("SELECT lang FROM sessions WHERE chat_id >= 10")}
        assert stored == set(HOSTILE)  # byte-identical in the file too, not only after a round trip
    finally:
        db.close()


def test_sql_text_comes_only_from_literals() -> None:
    """Every execute() in bot/ gets SQL text made only of literals in its module, followed back through
    names, loops, constants and callers (tests/sql_sources.py): values reach SQLite only as parameters."""
    problems = [
        problem
        for path in _python_files("bot")
        for problem in sql_problems(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    ]
    assert not problems, problems


_UNSAFE_SQL = {
    "f-string of a value": "def f(db, text):\n    db.execute(f\"SELECT * FROM t WHERE x = '{text}'\")",
    "%-formatting": "def f(db, text):\n    db.execute(\"SELECT * FROM t WHERE x = '%s'\" % text)",
    ".format()": 'def f(db, text):\n    db.execute("SELECT {}".format(text))',
    "concatenation": 'def f(db, text):\n    sql = "SELECT " + text\n    db.execute(sql)',
    "a caller passing input": (
        "class S:\n    def run(self, db, sql):\n        db.execute(sql)\n"
        "    def ask(self, db, text):\n        self.run(db, text)\n        self.run(db, 'SELECT 1')"
    ),
    "a loop over input": "def f(db, texts):\n    for sql in texts:\n        db.execute(sql)",
    "a name it cannot trace": "def f(db):\n    db.execute(SQL)",
    "a computed constant": "import os\nSQL = os.environ['Q']\ndef f(db):\n    db.execute(SQL)",
    "a branch with a value": "def f(db, text, x):\n    db.execute('SELECT 1' if x else text)",
    "a lookup in input": "def f(db, names, key):\n    db.execute(f'SELECT {names.get(key)}')",
    "a function's result": "SQL = input()\ndef f(db):\n    db.execute(SQL)",
    "a join": "def f(db, cols):\n    db.execute('SELECT ' + ', '.join(cols))",
}
_SAFE_SQL = {
    "a literal": "def f(db, x):\n    db.execute('SELECT ?', (x,))",
    "a loop over literals": (
        "def f(db, x):\n    for sql in ('DELETE FROM a WHERE u = ?', 'DELETE FROM b WHERE u = ?'):\n"
        "        db.execute(sql, (x,))"
    ),
    "columns from a literal table": (
        "COLUMNS = {'lang': 'lang'}\n"
        "def f(db, name, value):\n    column = COLUMNS[name]\n"
        "    db.execute(f'UPDATE t SET {column} = ?', (value,))"
    ),
    "rows of a literal table": (
        "TABLES = (('sessions', 'user_id'), ('checklists', 'user_id'))\n"
        "def f(db, user):\n    for table, column in TABLES:\n"
        "        db.execute(f'DELETE FROM {table} WHERE {column} = ?', (user,))"
    ),
    "an int in a PRAGMA": "def f(db, ms):\n    db.execute(f'PRAGMA busy_timeout = {int(ms)}')",
    "one of two literals": "def f(db, x):\n    db.execute('SELECT 1' if x else 'SELECT 2')",
    "rows of literal objects": (
        "class Table:\n    pass\n"
        "USER_TABLES = (Table(name='sessions', user_column='user_id'),)\n"
        "def f(db, user):\n    for table in USER_TABLES:\n"
        "        db.execute(f'DELETE FROM {table.name} WHERE {table.user_column} = ?', (user,))"
    ),
    "a helper every caller gives a literal": (
        "class S:\n    def one(self, db, sql, params):\n        db.execute(sql, params)\n"
        "    def get(self, db, x):\n        return self.one(db, 'SELECT ?', (x,))"
    ),
}


@pytest.mark.parametrize("source", _UNSAFE_SQL.values(), ids=_UNSAFE_SQL.keys())
def test_sql_check_catches_text_built_from_values(source: str) -> None:
    assert sql_problems(source)


@pytest.mark.parametrize("source", _SAFE_SQL.values(), ids=_SAFE_SQL.keys())
def test_sql_check_accepts_literal_sql_with_parameters(source: str) -> None:
    assert sql_problems(source) == []


# -- groups --------------------------------------------------------------------------------------------------


async def test_group_settings_follow_current_admin_rights(running_bot: BotHarness) -> None:
    """Rights are asked from Telegram each time: a member promoted can change settings, demoted cannot;
    an anonymous admin (posting as the group) can."""
    bot = running_bot
    command = f"/settings@{BOT_USERNAME} currency cny"
    [denied] = await bot.say(GROUP, BOB, command)
    assert "admin" in denied.text.lower()
    bot.fake.members[(GROUP, BOB)] = "administrator"
    [saved] = await bot.say(GROUP, BOB, command)
    assert "CNY" in saved.text
    bot.fake.members[(GROUP, BOB)] = "member"
    [denied_again] = await bot.say(GROUP, BOB, f"/settings@{BOT_USERNAME} currency usd")
    assert "admin" in denied_again.text.lower()
    [anonymous] = await bot.say(GROUP, BOB, f"/settings@{BOT_USERNAME} lang en", anonymous_admin=True)
    assert anonymous.text != denied.text
    store = bot.app.bot_data[STORE_KEY]
    assert isinstance(store, SessionStore)
    # what each sender could change did change: Bob as admin the currency, the anonymous admin the language
    assert await store.get_group_settings(GROUP) == GroupSettings(lang="en", currency="CNY")


# -- privacy -------------------------------------------------------------------------------------------------


VICTIM = 987_654_321


def _cells_mentioning(db_path: Path, user_id: int) -> list[str]:
    db = sqlite3.connect(db_path)
    try:
        found = []
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):  # table names from sqlite_master
                for cell in row:
                    if cell == user_id or (isinstance(cell, str | bytes) and str(user_id) in str(cell)):
                        found.append(f"{table}: {row}")
        return found
    finally:
        db.close()


async def test_forget_leaves_no_row_about_the_user(running_bot: BotHarness, db_path: Path) -> None:
    bot = running_bot
    bot.fake.add_user(VICTIM, "Victim", language_code="en")
    await bot.say(VICTIM, VICTIM, "13b lora 4090")
    await bot.say(VICTIM, VICTIM, "/lang zh", replies=1)
    await bot.say(VICTIM, VICTIM, "/checklist")
    await bot.say(GROUP, VICTIM, f"@{BOT_USERNAME} 7b inference 3090")
    await bot.say(GROUP, VICTIM, "/checklist")
    assert _cells_mentioning(db_path, VICTIM), "the test must first leave traces"
    await bot.say(VICTIM, VICTIM, "/forget")
    assert _cells_mentioning(db_path, VICTIM) == []


async def test_retention_is_configurable(
    bot_settings: Settings, botapi_server: BotApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv = tmp_path / ".env"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", botapi_server.fake.token)
    assert load_settings(dotenv=dotenv).retention_days == 30
    monkeypatch.setenv("TELEGRAM_API_URL", botapi_server.base_url)
    monkeypatch.setenv("GPUFIT_DB", str(bot_settings.db_path))
    monkeypatch.setenv("GPUFIT_RETENTION_DAYS", "7")
    settings = load_settings(dotenv=dotenv)
    assert settings.retention_days == 7
    app, _ = start_bot(settings)
    async with running(app, poll_timeout=2):
        store = app.bot_data[STORE_KEY]
        assert isinstance(store, SessionStore) and store.retention_days == 7
    monkeypatch.setenv("GPUFIT_RETENTION_DAYS", "0")
    with pytest.raises(ValueError, match="GPUFIT_RETENTION_DAYS"):
        load_settings(dotenv=dotenv)
