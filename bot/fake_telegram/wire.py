"""Bot API wire basics the stand-in shares: limits, Telegram's error envelope and wording.

The limits come from `telegram.constants` (PTB's copy of the Bot API's); the stand-in only decides how to
count: text and captions in UTF-16 code units after entity parsing, callback data in UTF-8 bytes.
"""

from __future__ import annotations

from typing import Any

from telegram.constants import (
    BotCommandLimit,
    CallbackQueryLimit,
    InlineKeyboardButtonLimit,
    InlineQueryLimit,
    InlineQueryResultLimit,
    MessageLimit,
    PollingLimit,
    WebhookLimit,
)

JSON = dict[str, Any]

MAX_TEXT_UTF16 = int(MessageLimit.MAX_TEXT_LENGTH)
MAX_CAPTION_UTF16 = int(MessageLimit.CAPTION_LENGTH)
MIN_CALLBACK_DATA_BYTES = int(InlineKeyboardButtonLimit.MIN_CALLBACK_DATA)
MAX_CALLBACK_DATA_BYTES = int(InlineKeyboardButtonLimit.MAX_CALLBACK_DATA)
MAX_CALLBACK_ANSWER = int(CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH)
MAX_INLINE_RESULTS = int(InlineQueryLimit.RESULTS)
MIN_RESULT_ID_BYTES = int(InlineQueryResultLimit.MIN_ID_LENGTH)
MAX_RESULT_ID_BYTES = int(InlineQueryResultLimit.MAX_ID_LENGTH)
MAX_COMMANDS = int(BotCommandLimit.MAX_COMMAND_NUMBER)
MIN_COMMAND, MAX_COMMAND = int(BotCommandLimit.MIN_COMMAND), int(BotCommandLimit.MAX_COMMAND)
MAX_COMMAND_DESCRIPTION = int(BotCommandLimit.MAX_DESCRIPTION)
MIN_UPDATES_LIMIT, MAX_UPDATES_LIMIT = int(PollingLimit.MIN_LIMIT), int(PollingLimit.MAX_LIMIT)
MAX_SECRET_TOKEN = int(WebhookLimit.MAX_SECRET_TOKEN_LENGTH)
ANONYMOUS_ADMIN_ID = 1087968824

# Fields PTB sends as JSON text inside form bodies.
JSON_FIELDS = frozenset(
    {
        "reply_markup",
        "reply_parameters",
        "results",
        "commands",
        "scope",
        "allowed_updates",
        "entities",
        "caption_entities",
        "link_preview_options",
        "button",
        "media",
    }
)
INT_FIELDS = frozenset(
    {"chat_id", "message_id", "user_id", "cache_time", "offset", "limit", "timeout", "message_thread_id"}
)
# Updates Telegram leaves out unless allowed_updates names them.
OPT_IN_UPDATES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are exactly the "
    "same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"


def utf16_len(text: str) -> int:
    """Telegram counts text length and entity offsets in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


class ApiError(Exception):
    """A Bot API refusal: HTTP status and Telegram's description."""

    def __init__(self, status: int, description: str, parameters: JSON | None = None) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


class ConnectionDroppedError(Exception):
    """The transport must close the connection without an answer (fault injection)."""


def bad_request(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")
