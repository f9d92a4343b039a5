"""Inline keyboards and their callback data: versioned, at most 64 bytes, parsed back without surprises.

Callback data formats (version 1):
- ``v1:fit:<key>:<action>``  a core action ("method=qlora", "seq=8192", "details") on the query stored
  under ``<key>`` in the session store (so buttons survive a restart);
- ``v1:fit:<key>:#<row>.<col>``  the same when the action does not fit in 64 bytes: the action is
  recomputed from the stored query;
- ``v1:ask:<key>:<row>.<col>``  a button that asks the question written on it (its label), with the stored
  query as context;
- ``v1:lang:<en|zh|auto>``  the /lang choice.
Anything else (an older version, a foreign prefix) is stale: the user gets a polite "please ask again".
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Literal

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import InlineKeyboardButtonLimit, MessageLimit

from bot.answer import Button
from bot.answer.model import CHART_ACTION

VERSION = "v1"
MIN_CALLBACK_BYTES = int(InlineKeyboardButtonLimit.MIN_CALLBACK_DATA)
MAX_CALLBACK_BYTES = int(InlineKeyboardButtonLimit.MAX_CALLBACK_DATA)
LANG_CHOICES = ("en", "zh", "auto")
DETAILS = "details"
CHART = CHART_ACTION  # sends the answer's chart as a photo; the message itself stays
_KEY = r"[A-Za-z0-9_-]{1,12}"
_FIT = re.compile(rf"^v1:fit:({_KEY}):(#\d+\.\d+|[^:].*)$", re.DOTALL)
_ASK = re.compile(rf"^v1:ask:({_KEY}):(\d+)\.(\d+)$")
_LANG = re.compile(r"^v1:lang:(en|zh|auto)$")
_DEEP_LINK_PREFIX = "q"
MAX_DEEP_LINK = int(MessageLimit.DEEP_LINK_LENGTH)
_DEEP_LINK = re.compile(rf"[A-Za-z0-9_-]{{2,{MAX_DEEP_LINK}}}")


@dataclass(frozen=True)
class FitPress:
    """A press on an answer's button: the stored query's key and what to do with it."""

    key: str
    action: str | None  # None: look the action up by position
    row: int = 0
    col: int = 0
    ask_label: bool = False  # ask the question on the button's label


@dataclass(frozen=True)
class LangPress:
    choice: Literal["en", "zh", "auto"]


def fits(data: str) -> bool:
    return MIN_CALLBACK_BYTES <= len(data.encode("utf-8")) <= MAX_CALLBACK_BYTES


def action_data(key: str, action: str, row: int, col: int) -> str:
    """Callback data for one answer button; always within Telegram's 64 bytes."""
    direct = f"{VERSION}:fit:{key}:{action}"
    if fits(direct) and not action.startswith(("#", ":")):
        return direct
    if action.startswith("ask="):
        return f"{VERSION}:ask:{key}:{row}.{col}"
    return f"{VERSION}:fit:{key}:#{row}.{col}"


# An inline keyboard as the Bot API's JSON: {"inline_keyboard": [[{"text": …, "callback_data": …}, …], …]}.
KeyboardJson = dict[str, list[list[dict[str, str]]]]


def answer_keyboard_json(rows: list[list[Button]], key: str) -> KeyboardJson | None:
    """Answer buttons as the Bot API's reply_markup JSON, whose data points at the query stored under `key`:
    what `answer_keyboard(...).to_dict()` gives, without building PTB's objects (bot/replies.py post_html:
    a reply's keyboard built, turned into a dict and parsed back from Telegram's answer was the largest
    share of the event loop's CPU per reply)."""
    keyboard = [
        [
            {"text": _label(button.label), "callback_data": action_data(key, button.action, r, c)}
            for c, button in enumerate(row)
        ]
        for r, row in enumerate(rows)
        if row
    ]
    return {"inline_keyboard": keyboard} if keyboard else None


def answer_keyboard(rows: list[list[Button]], key: str) -> InlineKeyboardMarkup | None:
    """Answer buttons as an inline keyboard whose data points at the query stored under `key` (for edits,
    which PTB sends as objects; a new message takes answer_keyboard_json)."""
    data = answer_keyboard_json(rows, key)
    if data is None:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(b["text"], callback_data=b["callback_data"]) for b in row]
            for row in data["inline_keyboard"]
        ]
    )


def lang_keyboard(labels: dict[str, str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(labels[c], callback_data=f"{VERSION}:lang:{c}") for c in LANG_CHOICES]]
    )


def parse_callback(data: str | None) -> FitPress | LangPress | None:
    """What a press means, or None when the data is stale or foreign."""
    if not data:
        return None
    match = _FIT.match(data)
    if match:
        key, action = match.groups()
        if action.startswith("#"):
            row, col = action[1:].split(".")
            return FitPress(key, None, int(row), int(col))
        return FitPress(key, action)
    match = _ASK.match(data)
    if match:
        return FitPress(match.group(1), None, int(match.group(2)), int(match.group(3)), ask_label=True)
    match = _LANG.match(data)
    if match:
        choice = match.group(1)
        return LangPress("en" if choice == "en" else "zh" if choice == "zh" else "auto")
    return None


def button_at(markup: InlineKeyboardMarkup | None, row: int, col: int) -> InlineKeyboardButton | None:
    if markup is None or row >= len(markup.inline_keyboard) or col >= len(markup.inline_keyboard[row]):
        return None
    return markup.inline_keyboard[row][col]


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 64 else text[:63] + "…"


# -- deep links: a question carried in /start's payload (<= 64 chars of [A-Za-z0-9_-]) --------------------


def question_payload(question: str) -> str | None:
    """`/start` payload for a question, or None when it does not fit in Telegram's 64 characters."""
    encoded = base64.urlsafe_b64encode(" ".join(question.split()).encode("utf-8")).decode("ascii").rstrip("=")
    payload = _DEEP_LINK_PREFIX + encoded
    return payload if 1 < len(payload) <= MAX_DEEP_LINK else None


def payload_question(payload: str) -> str | None:
    """The question inside a `/start` payload; None for any other payload (or a damaged one)."""
    if not payload.startswith(_DEEP_LINK_PREFIX) or not _DEEP_LINK.fullmatch(payload):
        return None
    body = payload[len(_DEEP_LINK_PREFIX) :]
    try:
        text = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    text = " ".join(text.split())
    return text or None


def deep_link(bot_username: str, question: str) -> str | None:
    payload = question_payload(question)
    return f"https://t.me/{bot_username}?start={payload}" if payload and bot_username else None
