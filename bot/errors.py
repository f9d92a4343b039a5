"""The one error handler: log the trace, apologise to the user briefly, never crash, never show a traceback.

Sorted by kind: Forbidden (the user blocked the bot, or it was removed from the group) marks the chat in the
store and sends nothing; "message is not modified" is not an error; RetryAfter left after the rate limiter's
retries and network trouble left after the transport's retries are logged without a trace.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import ContextTypes

from bot import session
from bot.replies import is_not_modified, send_html, text, toast

logger = logging.getLogger(__name__)


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log what went wrong and tell the user, if there is one, in a short apology."""
    error = context.error
    chat = update.effective_chat if isinstance(update, Update) else None
    where = f"chat {chat.id}" if chat else "no chat"
    if isinstance(error, Forbidden):
        logger.warning("Forbidden in %s: %s; chat marked", where, error.message)
        if chat is not None:
            await session.mark_blocked(context, chat.id)
        return
    if isinstance(error, BadRequest) and is_not_modified(error):
        return
    if isinstance(error, RetryAfter | TimedOut) or (
        isinstance(error, NetworkError) and not isinstance(error, BadRequest)
    ):
        logger.warning("Telegram unreachable in %s after retries: %s", where, error)
    else:
        logger.error("update failed in %s", where, exc_info=error)
    if chat is None or not isinstance(update, Update):
        return
    if update.inline_query is not None:
        return  # nowhere to write in inline mode
    _, user_id = session.ids(update)
    lang = session.ui_lang(await session.lang_override(context, chat, user_id), update.effective_user)
    try:
        if update.callback_query is not None:
            await update.callback_query.answer(toast("bot_error", lang))
        else:
            await send_html(context.bot, chat.id, text("bot_error", lang))
    except TelegramError as apology_error:
        logger.warning("could not apologise in %s: %s", where, apology_error)
    except Exception:
        logger.exception("the apology itself failed in %s", where)
