"""The bot's small parts: Telegram's HTML and limits in the stand-in, settings, redaction, callback data."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pytest
from botapi_server import ANN, InProcessBot
from hypothesis import given
from hypothesis import strategies as st
from telegram.constants import InlineKeyboardButtonLimit, MessageLimit

from bot.console import chat_session
from bot.fake_telegram import ApiError, FakeTelegram, parse_html, parse_message_text, validate_reply_markup
from bot.keyboards import MAX_CALLBACK_BYTES, action_data, parse_callback, payload_question, question_payload
from bot.logging_setup import REDACTED, RedactingFilter, redact
from bot.replies import messages
from bot.settings import Settings, SettingsError, load_settings

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"

# -- the stand-in refuses what Telegram refuses ----------------------------------------------------


@pytest.mark.parametrize(
    ("html", "wording"),
    [
        ("a <br> b", 'Unsupported start tag "br"'),
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<b><i>x</b></i>", "Unmatched end tag"),
        ("1 < 2", 'Unexpected character "<"'),
        ("fish & chips", "Can't find end of the entity"),
        ("<code><b>x</b></code>", "inside a code block"),
        ('<a href="javascript:x">x</a>', "Wrong URL"),
        ("<span>x</span>", "tg-spoiler"),
    ],
)
def test_html_refusals_use_telegrams_wording(html: str, wording: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_html(html)
    assert caught.value.status == 400
    assert caught.value.description.startswith("Bad Request: can't parse entities")
    assert wording in caught.value.description


def test_html_entities_offsets_are_utf16() -> None:
    parsed = parse_html("😀 <b>bold</b> &lt;ok&gt; &#39;x&#39;")
    assert parsed.text == "😀 bold <ok> 'x'"
    assert parsed.entities == [{"type": "bold", "offset": 3, "length": 4}]


def test_text_limits() -> None:
    most = MessageLimit.MAX_TEXT_LENGTH  # Telegram counts it in UTF-16 code units
    parse_message_text("x" * most, "HTML")
    parse_message_text("😀" * (most // 2), "HTML")  # two units each: exactly at the limit
    with pytest.raises(ApiError, match="message is too long"):
        parse_message_text("😀" * (most // 2 + 1), "HTML")  # two units over, though fewer characters
    with pytest.raises(ApiError, match="message text is empty"):
        parse_message_text("<b> </b>", "HTML")


def test_callback_data_limit() -> None:
    most = InlineKeyboardButtonLimit.MAX_CALLBACK_DATA  # in UTF-8 bytes
    ok = {"inline_keyboard": [[{"text": "x", "callback_data": "a" * most}]]}
    assert validate_reply_markup(ok) == ok
    over = "数" * (most // 3 + 1)  # three bytes each: fewer characters than the limit, more bytes
    assert len(over) < most < len(over.encode())
    with pytest.raises(ApiError, match="BUTTON_DATA_INVALID"):
        validate_reply_markup({"inline_keyboard": [[{"text": "x", "callback_data": over}]]})


async def test_unknown_method_and_token() -> None:
    fake = FakeTelegram()
    status, body = await fake.call("getMe", {}, token="1:wrong")
    assert status == 401 and json.loads(body) == {
        "ok": False,
        "error_code": 401,
        "description": "Unauthorized",
    }
    status, _ = await fake.call("noSuchMethod", {}, token=fake.token)
    assert status == 404


@given(st.text(max_size=300))
def test_split_answers_always_pass_telegrams_checks(text: str) -> None:
    """What the bot sends is escaped by the templates; any escaped text splits into acceptable messages."""
    from bot.render import escape

    html = "<b>" + escape(text * 20) + "</b>"
    for chunk in messages(html):
        parse_message_text(chunk, "HTML")


# -- callback data and deep links ------------------------------------------------------------------


@given(st.text(min_size=1, max_size=200), st.integers(0, 9), st.integers(0, 9))
def test_callback_data_fits_and_parses(action: str, row: int, col: int) -> None:
    data = action_data("AbC-12_x", action, row, col)
    assert len(data.encode()) <= MAX_CALLBACK_BYTES
    press = parse_callback(data)
    assert press is not None


def test_stale_callback_data() -> None:
    assert parse_callback("v0:fit:x:method=lora") is None
    assert parse_callback("garbage") is None
    assert parse_callback(None) is None


@given(st.text(max_size=60))
def test_deep_link_payload_roundtrip(question: str) -> None:
    payload = question_payload(question)
    normalized = " ".join(question.split())
    if payload is None:
        return
    assert len(payload) <= MessageLimit.DEEP_LINK_LENGTH
    assert re.fullmatch(r"[A-Za-z0-9_-]+", payload)  # what /start accepts (isalnum() would pass "数")
    assert payload_question(payload) == (normalized or None)


def test_bad_payload_is_no_question() -> None:
    assert payload_question("q!!!") is None
    assert payload_question("checklist") is None


# -- settings and the token ------------------------------------------------------------------------


def test_missing_and_malformed_token_give_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError) as missing:
        load_settings(dotenv=tmp_path / ".env")
    assert "TELEGRAM_BOT_TOKEN" in str(missing.value) and "\n" not in str(missing.value)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "hello")
    with pytest.raises(SettingsError) as bad:
        load_settings(dotenv=tmp_path / ".env")
    assert str(bad.value).startswith("TELEGRAM_BOT_TOKEN ") and "hello" not in str(bad.value)


def test_settings_from_dotenv_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        f'TELEGRAM_BOT_TOKEN="{TOKEN}"\n# comment\nGPUFIT_DB=/tmp/x.db\nGPUFIT_RETENTION_DAYS=9\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("TELEGRAM_API_URL", "http://localhost:8081")
    monkeypatch.setenv("GPUFIT_RETENTION_DAYS", "12")  # the environment wins over .env
    settings = load_settings(dotenv=dotenv)
    assert settings.token_value == TOKEN
    assert settings.base_url == "http://localhost:8081/bot"
    assert settings.base_file_url == "http://localhost:8081/file/bot"
    assert str(settings.db_path) == "/tmp/x.db" and settings.retention_days == 12
    assert TOKEN not in repr(settings)
    assert load_settings(dotenv=tmp_path / "none", require_token=False).token is None
    with pytest.raises(SettingsError, match="https"):
        load_settings(dotenv=dotenv, webhook_url="http://example.com/hook")


def test_token_is_redacted_from_logs() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter([TOKEN]))
    log = logging.getLogger("httpx.test_redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning('HTTP Request: POST https://api.telegram.org/bot%s/getMe "HTTP/1.1 200 OK"', TOKEN)
        try:
            raise RuntimeError(f"failed https://api.telegram.org/bot{TOKEN}/sendMessage")
        except RuntimeError:
            log.exception("boom")
    finally:
        log.removeHandler(handler)
    output = stream.getvalue()
    assert TOKEN not in output and "AAHdqTcv" not in output
    assert output.count(REDACTED) >= 2
    assert redact("bot987654321:abcdefghijklmnopqrstuvwxyz/x") == f"bot{REDACTED}/x"


# -- the in-process path (the console chat's transport) --------------------------------------------


async def test_inprocess_question_and_lang_choice(inprocess_app: InProcessBot) -> None:
    fake = inprocess_app.fake
    fake.send_text(ANN, ANN, "/lang")
    await inprocess_app.process()
    [menu] = fake.bot_messages(ANN)
    assert menu.reply_markup is not None
    zh = next(
        b["callback_data"]
        for row in menu.reply_markup["inline_keyboard"]
        for b in row
        if b["callback_data"].endswith(":zh")
    )
    fake.press(ANN, menu.message_id, zh, ANN)
    await inprocess_app.process()
    fake.send_text(ANN, ANN, "13b lora 4090")
    await inprocess_app.process()
    answer = fake.bot_messages(ANN)[-1]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in answer.text)
    fake.send_text(ANN, ANN, "/forget")
    await inprocess_app.process()
    assert inprocess_app.errors == [] and fake.refused() == []
    assert await inprocess_app.app.bot_data["store"].get_lang(ANN, ANN) is None


def test_console_chat_prints_answers_and_numbered_buttons(tmp_path: Path) -> None:
    lines = iter(["13b lora on a 4090\n", "2\n", "/quit\n"])
    out = io.StringIO()
    settings = Settings(db_path=tmp_path / "c.sqlite3")
    code = chat_session(lambda: next(lines, ""), out, settings, ansi=False, lang="en")
    printed = out.getvalue()
    assert code == 0
    assert "4090" in printed and "[1] " in printed and "[2] " in printed
    assert "✎" in printed, "pressing a number edits the answer in place"
    assert "<b>" not in printed and "Telegram would refuse" not in printed
