"""Button presses under answers: recompute with one thing changed and edit the answer in place.

The query behind a keyboard lives in the session store, so a button keeps working after a restart; a button
whose query is gone (expired, forgotten, an older callback format) gets a polite "please ask again" and its
dead keyboard is removed. Never an error to the user.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import ValidationError
from telegram import Message, ReplyParameters, Update
from telegram.constants import ChatAction
from telegram.error import BadRequest
from telegram.ext import BaseHandler, CallbackQueryHandler, ContextTypes

from bot import session
from bot.answer import answer_message, answer_query, answer_stored, apply_action
from bot.answer.kinds_table import rebuildable, spec_of
from bot.answer.service import with_context
from bot.charts import ChartSpec, caption, render_png, spec_from_json
from bot.hub.lookup import HUB_LOOKUP_KEY
from bot.keyboards import CHART, DETAILS, FitPress, LangPress, button_at, parse_callback
from bot.private import chat_context, remember
from bot.replies import answer_callback, edit_answer, edit_html, text, toast
from core.query import Query

logger = logging.getLogger(__name__)


async def on_press(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Any button of ours (the checklist's "ck:" buttons are matched before this handler)."""
    query = update.callback_query
    if query is None:
        return
    press = parse_callback(query.data)
    if isinstance(press, LangPress):
        await _choose_lang(update, context, press)
    elif isinstance(press, FitPress):
        await _fit_press(update, context, press)
    else:
        await _stale(update, context)


async def _fit_press(update: Update, context: ContextTypes.DEFAULT_TYPE, press: FitPress) -> None:
    query = update.callback_query
    assert query is not None
    stored = await session.load_keyboard(context, press.key)
    if stored is None:
        await _stale(update, context)
        return
    base, lang = stored
    chat_id, user_id = session.ids(update)
    message = query.message if isinstance(query.message, Message) else None
    await answer_callback(query)  # stop the spinner before the work
    if press.action == CHART:
        await _send_chart(update, context, press.key, base, lang)
        return
    action = press.action
    # The chat's context as inputs; the stored keyboard's language is the language the answer was in.
    inputs = with_context(await chat_context(update, context, previous=base), lang=lang)
    if press.ask_label:
        button = button_at(message.reply_markup if message else None, press.row, press.col)
        if button is None:
            await _stale(update, context, answered=True)
            return
        action = "ask=" + button.text
    elif action is None:
        rows = answer_stored(base, inputs).buttons
        if press.row >= len(rows) or press.col >= len(rows[press.row]):
            await _stale(update, context, answered=True)
            return
        action = rows[press.row][press.col].action
    if action.startswith("ask="):
        # A question on a button: the same path as a typed one, Hub lookup included (off the event loop).
        lookup = context.bot_data.get(HUB_LOOKUP_KEY)
        reply = await asyncio.to_thread(answer_message, action.removeprefix("ask="), inputs, lookup=lookup)
    elif action == DETAILS:
        if not rebuildable(base, base.answer_kind):
            await _stale(update, context, answered=True)
            return
        reply = answer_stored(base, inputs)
    else:
        try:
            changed = apply_action(base, action)
        except ValueError:
            logger.info("unknown button action %r", action)
            await _stale(update, context, answered=True)
            return
        reply = answer_stored(changed, inputs)
    await remember(context, chat_id, user_id, reply)
    # In a group "details" expands the compact answer, and the other buttons are only under full answers.
    await edit_answer(query, context, reply, compact=False)


async def _send_chart(
    update: Update, context: ContextTypes.DEFAULT_TYPE, key: str, base: Query, lang: str
) -> None:
    """ "📊 Chart": the answer's chart as a photo under it, with a one-line caption; the answer stays as it
    is. The chart is the one stored with the keyboard (the figures the text showed); a keyboard stored
    before charts existed gets its answer's chart recomputed from its query. Drawing (~0.1 s of CPU) runs in
    a worker thread, so other chats' answers do not wait for it."""
    query = update.callback_query
    assert query is not None
    message = query.message if isinstance(query.message, Message) else None
    if message is None:
        await _stale(update, context, answered=True)
        return
    spec = _stored_chart(await session.load_chart(context, key))
    if spec is None and spec_of(base.answer_kind).chart and rebuildable(base, base.answer_kind):
        spec = answer_query(base, lang=lang).chart
    if spec is None:
        await _stale(update, context, answered=True)
        return
    bot = query.get_bot()
    thread = message.message_thread_id if message.is_topic_message else None
    await bot.send_chat_action(message.chat.id, ChatAction.UPLOAD_PHOTO, message_thread_id=thread)
    png = await asyncio.to_thread(render_png, spec, lang)
    await bot.send_photo(
        message.chat.id,
        png,
        caption=caption(spec, lang),
        filename=f"gpufit-{spec.kind}.png",
        reply_parameters=ReplyParameters(message.message_id, allow_sending_without_reply=True),
        message_thread_id=thread,
    )


def _stored_chart(text: str | None) -> ChartSpec | None:
    if text is None:
        return None
    try:
        return spec_from_json(text)
    except ValidationError:
        logger.info("a stored chart no longer validates; drawing it from its query instead")
        return None


async def _choose_lang(update: Update, context: ContextTypes.DEFAULT_TYPE, press: LangPress) -> None:
    query = update.callback_query
    assert query is not None
    chat_id, user_id = session.ids(update)
    choice = None if press.choice == "auto" else press.choice
    saved = await session.set_lang(context, chat_id, user_id, choice)
    words = session.ui_lang(choice, update.effective_user)
    await answer_callback(query)
    if not saved:
        await edit_html(query, text("bot_forget", words, ok=False))
        return
    await edit_html(query, text("bot_lang_set", words, choice=press.choice))


async def _stale(update: Update, context: ContextTypes.DEFAULT_TYPE, *, answered: bool = False) -> None:
    """A button from an older answer or bot version: say so politely and remove the dead keyboard."""
    query = update.callback_query
    assert query is not None
    _, user_id = session.ids(update)
    lang = session.ui_lang(
        await session.lang_override(context, update.effective_chat, user_id), update.effective_user
    )
    if not answered:
        await answer_callback(query, toast("bot_stale_button", lang))
    elif isinstance(query.message, Message):
        await query.get_bot().send_message(query.message.chat.id, text("bot_stale_button", lang))
    if isinstance(query.message, Message) and query.message.reply_markup is not None:
        try:
            await query.edit_message_reply_markup(reply_markup=None)
        except BadRequest as error:
            logger.info("could not remove a stale keyboard: %s", error.message)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CallbackQueryHandler(on_press)]
