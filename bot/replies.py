"""Putting answers into Telegram: the bot's own texts, messages within 4096 characters, keyboards, edits.

Every text goes through templates (bot.render.render, autoescaped) and bot.render.split_message, so a long
answer becomes several well-formed messages with the keyboard under the last one; nothing is sent that
Telegram would reject. Edits that change nothing ("message is not modified") are not errors.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from telegram import (
    Bot,
    CallbackQuery,
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import CallbackQueryLimit
from telegram.error import BadRequest
from telegram.ext import ContextTypes

from bot import session
from bot.answer import Answer, Button
from bot.answer.kinds_table import rebuildable
from bot.charts.spec import spec_json
from bot.keyboards import CHART, DETAILS, KeyboardJson, answer_keyboard, answer_keyboard_json
from bot.render import plain_text, render, split_message
from bot.store import KeyboardRow
from core.query import Query

logger = logging.getLogger(__name__)


def text(template: str, lang: str, /, **data: Any) -> str:
    """A bot template (templates/<lang>/<name>.j2) as Telegram HTML."""
    return render(template, lang, **data)


def label(which: str, lang: str, /, **data: Any) -> str:
    """A short plain-text label (buttons, toasts) from templates/<lang>/bot_label.j2."""
    return " ".join(plain_text(render("bot_label", lang, which=which, **data)).split())


def toast(template: str, lang: str, /, **data: Any) -> str:
    """A callback-query answer: plain text, at most 200 characters."""
    words = " ".join(plain_text(render(template, lang, **data)).split())
    limit = int(CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH)
    return words if len(words) <= limit else words[: limit - 1] + "…"


def messages(html: str) -> list[str]:
    """`html` as Telegram messages: each well formed, within 4096 UTF-16 units and with visible text."""
    return [chunk for chunk in split_message(html) if _visible(chunk)]


# Tags and character references: what is left of Telegram HTML without them is text a client shows.
_MARKUP = re.compile(r"<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);")


def _visible(chunk: str) -> bool:
    """Whether a client shows any text for `chunk`: `plain_text(chunk).strip()`, which parses the whole
    message as HTML (about a quarter of a millisecond of the event loop per reply), asked only when the
    text between the tags does not answer at once (none there, or a stray '<' or '&' left)."""
    text = _MARKUP.sub("", chunk)
    if text.strip() and "<" not in text and "&" not in text:
        return True
    return bool(plain_text(chunk).strip())


def is_not_modified(error: BadRequest) -> bool:
    return "not modified" in error.message.lower()


async def send_html(
    bot: Bot,
    chat_id: int,
    html: str,
    *,
    reply_markup: InlineKeyboardMarkup | None = None,
    reply_to: int | None = None,
    thread_id: int | None = None,
) -> Message | None:
    """Send `html` as one or more messages (each ≤ 4096); the keyboard goes under the last one."""
    chunks = messages(html)
    sent: Message | None = None
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        sent = await bot.send_message(
            chat_id,
            chunk,
            reply_markup=reply_markup if last else None,
            reply_parameters=(
                ReplyParameters(reply_to, allow_sending_without_reply=True)
                if reply_to and index == 0
                else None
            ),
            message_thread_id=thread_id,
        )
    return sent


# What PTB's Defaults (bot/app.py) add to every sendMessage; post_html says them itself.
_SEND_DEFAULTS = {"parse_mode": "HTML", "link_preview_options": {"is_disabled": True}}


async def post_html(
    bot: Bot,
    chat_id: int,
    html: str,
    *,
    reply_markup: InlineKeyboardMarkup | KeyboardJson | None = None,
    reply_to: int | None = None,
    thread_id: int | None = None,
) -> None:
    """send_html for a caller that needs nothing back (an answer, a notice): the same sendMessage calls,
    through PTB's public Bot.do_api_request (its rate limiter, transport and errors as for send_message),
    with the result left as Telegram's JSON. Bot.send_message builds a Message from every answer, its text,
    entities and keyboard object by object, and the keyboard was built as objects only to be turned into a
    dict: together about a third of the event loop's CPU per reply. The Bot API's method names are
    case-insensitive; "sendmessage" is the name PTB does not warn about (it asks do_api_request's callers
    to use its own method when one is there)."""
    chunks = messages(html)
    markup = reply_markup.to_dict() if isinstance(reply_markup, InlineKeyboardMarkup) else reply_markup
    for index, chunk in enumerate(chunks):
        call: dict[str, object] = {"chat_id": chat_id, "text": chunk, **_SEND_DEFAULTS}
        if markup is not None and index == len(chunks) - 1:
            call["reply_markup"] = markup
        if reply_to and index == 0:
            call["reply_parameters"] = {"message_id": reply_to, "allow_sending_without_reply": True}
        if thread_id is not None:
            call["message_thread_id"] = thread_id
        await bot.do_api_request("sendmessage", api_kwargs=call)


async def reply_html(
    message: Message, html: str, *, reply_markup: InlineKeyboardMarkup | KeyboardJson | None = None
) -> None:
    """Answer a user's message: quoted in groups (so the group sees who asked), plain in private chats."""
    group = message.chat.type != Chat.PRIVATE
    await post_html(
        message.get_bot(),
        message.chat_id,
        html,
        reply_markup=reply_markup,
        reply_to=message.message_id if group else None,
        thread_id=message.message_thread_id if message.is_topic_message else None,
    )


async def edit_html(
    query: CallbackQuery, html: str, *, reply_markup: InlineKeyboardMarkup | None = None
) -> None:
    """Replace the pressed message with `html`; what does not fit in one message follows as new messages."""
    message = query.message
    chunks = messages(html)
    if not chunks:
        return
    try:
        if message is None:  # a message sent via inline mode: edited by its inline id, first chunk only
            await query.edit_message_text(chunks[0], reply_markup=reply_markup)
            return
        await query.edit_message_text(chunks[0], reply_markup=reply_markup if len(chunks) == 1 else None)
    except BadRequest as error:
        if not is_not_modified(error):
            raise
    if message is not None and len(chunks) > 1:
        thread = (
            message.message_thread_id if isinstance(message, Message) and message.is_topic_message else None
        )
        await send_html(
            query.get_bot(),
            message.chat.id,
            "\n".join(chunks[1:]),
            reply_markup=reply_markup,
            thread_id=thread,
        )


async def answer_callback(query: CallbackQuery, text_: str | None = None) -> None:
    """Stop the button's spinner; a late or repeated answer (the query expired) is not worth an error."""
    try:
        await query.answer(text_)
    except BadRequest as error:
        logger.info("callback answer refused: %s", error.message)


# -- answers -----------------------------------------------------------------------------------------------


def visible_rows(reply: Answer, *, compact: bool) -> list[list[Button]]:
    """Buttons under an answer: in compact form only "details" (and "📊 Chart", which a group wants most);
    in full form everything but "details"."""
    own = [row for row in ([b for b in r if b.action != DETAILS] for r in reply.buttons) if row]
    if compact and reply.compact_html != reply.html and expandable(reply):
        chart = [b for row in own for b in row if b.action == CHART]
        return [[Button(label=label("details", reply.lang), action=DETAILS), *chart]]
    return own


def expandable(reply: Answer) -> bool:
    """A compact answer that "details" can expand: one its stored query rebuilds (the kinds table says)."""
    return rebuildable(reply.query, reply.kind)


async def keyboard_for(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, anchor_id: int | None, reply: Answer, *, compact: bool
) -> InlineKeyboardMarkup | None:
    """Store the query behind the buttons (by chat and message) and draw them; none if the store is down."""
    rows = visible_rows(reply, compact=compact)
    if not rows:
        return None
    keyboard = keyboard_row(reply, anchor_id)
    key = await session.save_keyboard(
        context, chat_id, anchor_id, keyboard.query, keyboard.lang, chart=keyboard.chart
    )
    return answer_keyboard(rows, key) if key else None


def keyboard_row(reply: Answer, anchor_id: int | None) -> KeyboardRow:
    """What the store keeps behind an answer's buttons: its query, language and chart."""
    chart = spec_json(reply.chart) if reply.chart is not None else None
    return KeyboardRow(message_id=anchor_id, query=reply.query or Query(), lang=reply.lang, chart=chart)


def body(reply: Answer, *, compact: bool) -> str:
    return reply.compact_html if compact else reply.html


async def send_answer(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    reply: Answer,
    *,
    compact: bool,
    remember_for: int | None = None,
) -> None:
    """Send an answer under the user's message, with its keyboard. With `remember_for` (a user id) the
    answer is also this user's context for their next message here, written in the keyboard's commit."""
    message = update.effective_message
    if message is None:
        return
    markup: InlineKeyboardMarkup | KeyboardJson | None
    if remember_for is None:
        markup = await keyboard_for(context, message.chat_id, message.message_id, reply, compact=compact)
    else:
        rows = visible_rows(reply, compact=compact)
        keyboard = keyboard_row(reply, message.message_id) if rows else None
        key = await session.remember_with_keyboard(
            context, message.chat_id, remember_for, reply.query, reply.vision, keyboard=keyboard
        )
        markup = answer_keyboard_json(rows, key) if rows and key else None
    await reply_html(message, body(reply, compact=compact), reply_markup=markup)


async def edit_answer(
    query: CallbackQuery, context: ContextTypes.DEFAULT_TYPE, reply: Answer, *, compact: bool
) -> None:
    """Show a recomputed answer in place of the pressed one, with a fresh keyboard."""
    message = query.message
    markup = None
    if message is not None:
        markup = await keyboard_for(context, message.chat.id, message.message_id, reply, compact=compact)
    await edit_html(query, body(reply, compact=compact), reply_markup=markup)


def url_keyboard(text_: str, url: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(text_, url=url)]])
