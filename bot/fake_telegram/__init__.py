"""An in-process stand-in for the Telegram Bot API, strict the way Telegram is.

One implementation of Bot API semantics serves two front ends: `FakeTelegramRequest` plugs it into PTB without
sockets (the console chat, fast tests) and `tests/botapi_server.py` serves it over loopback HTTP (end-to-end
tests). It validates what the bot sends (HTML tag set and balance, text length in UTF-16 units, callback data
size) and answers with Telegram's envelope and wording, so a bot that works here is not rejected by Telegram.
Faults (429 with retry_after, 500/502, slow answers, dropped connections before or after handling, calls
held unanswered, refused connections) are scheduled per method, or drawn at random from a seed (RandomFaults).
getUpdates keeps an update until a later call's offset confirms it, as Telegram does, so an unconfirmed update
is delivered again (`confirmed_offset` and `deliveries` show what happened).
"""

from __future__ import annotations

from bot.fake_telegram.fake import FakeTelegram
from bot.fake_telegram.faults import Fault, FaultKind, RandomFaults
from bot.fake_telegram.html import ParsedText, parse_html, parse_message_text, validate_reply_markup
from bot.fake_telegram.request import FakeTelegramRequest
from bot.fake_telegram.state import ApiCall, StoredMessage
from bot.fake_telegram.wire import (
    ANONYMOUS_ADMIN_ID,
    INT_FIELDS,
    JSON,
    JSON_FIELDS,
    MAX_CALLBACK_ANSWER,
    MAX_CALLBACK_DATA_BYTES,
    MAX_CAPTION_UTF16,
    MAX_INLINE_RESULTS,
    MAX_TEXT_UTF16,
    NOT_MODIFIED,
    OPT_IN_UPDATES,
    QUERY_TOO_OLD,
    ApiError,
    ConnectionDroppedError,
    bad_request,
    utf16_len,
)

__all__ = [
    "ANONYMOUS_ADMIN_ID",
    "INT_FIELDS",
    "JSON",
    "JSON_FIELDS",
    "MAX_CALLBACK_ANSWER",
    "MAX_CALLBACK_DATA_BYTES",
    "MAX_CAPTION_UTF16",
    "MAX_INLINE_RESULTS",
    "MAX_TEXT_UTF16",
    "NOT_MODIFIED",
    "OPT_IN_UPDATES",
    "QUERY_TOO_OLD",
    "ApiCall",
    "ApiError",
    "ConnectionDroppedError",
    "FakeTelegram",
    "FakeTelegramRequest",
    "Fault",
    "FaultKind",
    "ParsedText",
    "RandomFaults",
    "StoredMessage",
    "bad_request",
    "parse_html",
    "parse_message_text",
    "utf16_len",
    "validate_reply_markup",
]
