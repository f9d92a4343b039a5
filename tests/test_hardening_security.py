"""Security and privacy: the token never reaches a log line or traceback, user text is never a template or
SQL, group settings change only by admins, /forget leaves no row about the user, retention is configurable.
"""

from __future__ import annotations

import ast
import io
import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from botapi_server import ANN, BOB, BOT_USERNAME, GROUP, BotApiServer, BotHarness, start_bot
from telegram import Update
from telegram.ext import CommandHandler, ContextTypes

from bot.app import running
from bot.fake_telegram import Fault
from bot.logging_setup import REDACTED, RedactingFilter, install_redaction
from bot.session import STORE_KEY
from bot.settings import Settings, load_settings
from bot.store import GROUP_SETTING_COLUMNS, SessionStore

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
    app, errors = start_bot(bot_settings)
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
    assert "HTTP Request" in output or "httpx" in output, "httpx debug output was captured"
    assert "Traceback" in output and "RuntimeError" in output, "the traceback was captured"
    assert REDACTED in output
    secret = token.split(":", 1)[1]
    assert token not in output and secret not in output


def test_token_is_not_in_settings_repr_or_errors() -> None:
    token = "123456789:TEST-token-for-the-fake-bot-api-00000"
    settings = load_settings({"TELEGRAM_BOT_TOKEN": token})
    assert token not in repr(settings) and token not in str(settings)
    with pytest.raises(ValueError) as error:
        load_settings({"TELEGRAM_BOT_TOKEN": token, "TELEGRAM_API_URL": "not a url"})
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
    from bot.render import environment

    assert environment().autoescape is True or environment().autoescape("en/bot_start.j2")  # type: ignore[operator]


def test_sql_is_parameterised() -> None:
    """Every execute() in bot/ takes a literal SQL string; the only interpolations are a fixed column name
    (from GROUP_SETTING_COLUMNS) and an int() in a PRAGMA. No %-formatting, no .format(), no concatenation."""
    problems: list[str] = []
    for path in _python_files("bot"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany", "executescript")
                and node.args
            ):
                continue
            sql = node.args[0]
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if isinstance(sql, ast.Constant) and isinstance(sql.value, str):
                continue
            if isinstance(sql, ast.Name) and sql.id in ("sql", "statement"):
                continue  # loops over tuples of literal statements (checked below)
            if isinstance(sql, ast.JoinedStr):
                for part in sql.values:
                    if isinstance(part, ast.FormattedValue):
                        value = part.value
                        safe = (isinstance(value, ast.Name) and value.id == "column") or (
                            isinstance(value, ast.Call)
                            and isinstance(value.func, ast.Name)
                            and value.func.id == "int"
                        )
                        if not safe:
                            problems.append(f"{where}: interpolates {ast.unparse(value)}")
                continue
            problems.append(f"{where}: SQL built as {type(sql).__name__}: {ast.unparse(sql)[:80]}")
    assert not problems, problems
    assert all(re.fullmatch(r"[a-z_]+", column) for column in GROUP_SETTING_COLUMNS.values())
    store_source = (REPO / "bot" / "store.py").read_text(encoding="utf-8")
    assert not re.search(r"execute\([^)]*(%\s*\(|\.format\()", store_source)


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
    assert "admin" not in anonymous.text.lower() or "English" in anonymous.text
    store = bot.app.bot_data[STORE_KEY]
    assert isinstance(store, SessionStore)
    assert (await store.get_group_settings(GROUP)).currency == "CNY"


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


async def test_retention_is_configurable(bot_settings: Settings, botapi_server: BotApiServer) -> None:
    settings = load_settings(
        {
            "TELEGRAM_BOT_TOKEN": botapi_server.fake.token,
            "TELEGRAM_API_URL": botapi_server.base_url,
            "GPUFIT_DB": str(bot_settings.db_path),
            "GPUFIT_RETENTION_DAYS": "7",
        }
    )
    assert settings.retention_days == 7
    app, _ = start_bot(settings)
    async with running(app, poll_timeout=2):
        store = app.bot_data[STORE_KEY]
        assert isinstance(store, SessionStore) and store.retention_days == 7
    assert load_settings({"TELEGRAM_BOT_TOKEN": botapi_server.fake.token}).retention_days == 30
    with pytest.raises(ValueError, match="GPUFIT_RETENTION_DAYS"):
        load_settings({"TELEGRAM_BOT_TOKEN": botapi_server.fake.token, "GPUFIT_RETENTION_DAYS": "0"})
