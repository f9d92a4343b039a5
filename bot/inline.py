"""Inline mode: `@<bot> 13b lora 4090` in any chat offers the verdict as a ready-to-send message.

Results depend only on the query text, so Telegram may cache them for everyone (300 s, not personal); the
empty query shows a few examples in the user's language, so that one is personal.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from telegram import InlineQueryResultArticle, InputTextMessageContent, Update
from telegram.constants import InlineQueryLimit, ParseMode
from telegram.ext import BaseHandler, ContextTypes, InlineQueryHandler

from bot import session
from bot.answer import Answer, ChatContext, answer_message
from bot.answer.service import NO_CONTEXT
from bot.hub.lookup import HUB_LOOKUP_KEY
from bot.keyboards import deep_link
from bot.private import examples
from bot.render import escape
from bot.replies import label, messages, url_keyboard

logger = logging.getLogger(__name__)

CACHE_SECONDS = 300
EXAMPLE_RESULTS = 3


def article(reply: Answer, question: str, bot_username: str) -> InlineQueryResultArticle:
    """One result: the verdict as title, a one-line breakdown as description, the compact answer to send."""
    digest = hashlib.sha256(f"{reply.lang}:{question}".encode()).hexdigest()[:32]
    link = deep_link(bot_username, question)
    body = next(iter(messages(reply.compact_html)), None) or escape(reply.title)
    return InlineQueryResultArticle(
        id=digest,
        title=_one_line(reply.title, 256) or question[:256],
        description=_one_line(reply.summary, 512),
        input_message_content=InputTextMessageContent(body, parse_mode=ParseMode.HTML),
        reply_markup=url_keyboard(label("open_in_bot", reply.lang, bot_username=bot_username), link)
        if link
        else None,
    )


def _one_line(text: str, limit: int) -> str:
    words = " ".join(text.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


async def inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer an inline query with one article, or examples for an empty query."""
    query = update.inline_query
    if query is None:
        return
    text = " ".join(query.query.split())[: InlineQueryLimit.MAX_QUERY_LENGTH]
    bot_username = context.bot.username or ""
    # The same answer service as a typed question, Hub lookup included, off the event loop. No chat
    # context: Telegram may show the result to anyone who types the same text.
    lookup = context.bot_data.get(HUB_LOOKUP_KEY)
    if text:
        reply = await asyncio.to_thread(answer_message, text, NO_CONTEXT, lookup=lookup, compact=True)
        results = [article(reply, text, bot_username)]
    else:
        lang = session.ui_lang(None, query.from_user)
        asked = examples(lang)[:EXAMPLE_RESULTS]
        replies = await asyncio.to_thread(
            lambda: [answer_message(q, ChatContext(lang=lang), lookup=lookup, compact=True) for q in asked]
        )
        results = [article(reply, q, bot_username) for reply, q in zip(replies, asked, strict=True)]
    await query.answer(results, cache_time=CACHE_SECONDS, is_personal=not text)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [InlineQueryHandler(inline_query)]
