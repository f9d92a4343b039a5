"""The pre-rental checklist in Telegram: /checklist, its buttons and typed answers, /back, /skip, /cancel.

State lives in the session store, not in a ConversationHandler: every answer is committed (compare-and-set on
the step) before the bot replies, so a restart resumes at the same step and a double tap is applied once.
Register `handlers()` in `HANDLER_GROUP`, before the catch-all text handler: a message that answers an active
checklist stops there (ApplicationHandlerStop); any other message goes on to the plain-question handlers.

Callback data: ``ck:v1:<user id>:<step index>:<choice>`` for a step's buttons (a press on an older step's
buttons is stale), ``ck:v1:<user id>:x:<action>`` for resume / restart / show again / export. The user id
keeps one group member's buttons from moving another's checklist.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from telegram import (
    CallbackQuery,
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    Message,
    Update,
    User,
)
from telegram.constants import CallbackQueryLimit, InlineKeyboardButtonLimit, ParseMode
from telegram.error import BadRequest
from telegram.ext import (
    ApplicationHandlerStop,
    BaseHandler,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot import session
from bot.render import plain_text, render
from bot.replies import send_html
from bot.store import SessionStore, StoreUnavailable
from core import checklist as ck

logger = logging.getLogger(__name__)

HANDLER_GROUP = -1
PREFIX = "ck:v1:"
MAX_CALLBACK_BYTES = int(InlineKeyboardButtonLimit.MAX_CALLBACK_DATA)
CONTROL_STEP = "x"
_CALLBACK = re.compile(r"^ck:v1:(\d{1,20}):(\d{1,2}|x):([A-Za-z0-9_.:-]{1,40})$")
_STEP_CONTROLS = ("_back", "_skip", "_cancel")
_RESULT_CONTROLS = ("_resend", "_export", "_restart")
_ROW_WIDTH = {ck.Step.JOB: 2, ck.Step.PRECISION: 1, ck.Step.CARD: 2}


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    """The checklist's handlers, for `application.add_handlers(handlers(), group=HANDLER_GROUP)`."""
    return [
        CommandHandler("checklist", checklist_command),
        CommandHandler("back", back_command),
        CommandHandler("skip", skip_command),
        CommandHandler("cancel", cancel_command),
        CallbackQueryHandler(checklist_button, pattern=r"^ck:v1:"),
        MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT & ~filters.COMMAND, checklist_text),
    ]


# -- callback data ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Press:
    user_id: int
    step: int | None  # None: a control that does not belong to a step
    choice: str


def callback_data(user_id: int, step: int | None, choice: str) -> str:
    data = f"{PREFIX}{user_id}:{CONTROL_STEP if step is None else step}:{choice}"
    if len(data.encode("utf-8")) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data over {MAX_CALLBACK_BYTES} bytes: {data!r}")
    return data


def parse_callback(data: str) -> Press | None:
    match = _CALLBACK.match(data)
    if match is None:
        return None
    step = None if match.group(2) == CONTROL_STEP else int(match.group(2))
    return Press(user_id=int(match.group(1)), step=step, choice=match.group(3))


# -- rendering --------------------------------------------------------------------------------------------


def _labels(lang: str, views: list[ck.Choice]) -> list[str]:
    rendered = render("checklist_buttons", lang, choices=views)
    labels = [" ".join(plain_text(line).split()) for line in rendered.split("\n")]
    return [label for label in labels if label]


def _control_views(ids: tuple[str, ...]) -> list[ck.Choice]:
    return [ck.control(choice) for choice in ids]


def step_keyboard(state: ck.ChecklistState, user_id: int) -> InlineKeyboardMarkup:
    step = state.current
    assert step is not None
    views = ck.choice_views(step, state.lang, state.answers)
    labels = _labels(state.lang, views)
    width = _ROW_WIDTH.get(step, 3)
    buttons = [
        InlineKeyboardButton(label, callback_data=callback_data(user_id, state.step, view.id))
        for label, view in zip(labels, views, strict=True)
    ]
    rows = [buttons[i : i + width] for i in range(0, len(buttons), width)]
    controls = _STEP_CONTROLS if state.step > 0 else _STEP_CONTROLS[1:]
    control_labels = _labels(state.lang, _control_views(controls))
    rows.append(
        [
            InlineKeyboardButton(label, callback_data=callback_data(user_id, state.step, choice))
            for label, choice in zip(control_labels, controls, strict=True)
        ]
    )
    return InlineKeyboardMarkup(rows)


def control_keyboard(lang: str, user_id: int, controls: tuple[str, ...]) -> InlineKeyboardMarkup:
    labels = _labels(lang, _control_views(controls))
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(label, callback_data=callback_data(user_id, None, choice))
                for label, choice in zip(labels, controls, strict=True)
            ]
        ]
    )


def step_text(state: ck.ChecklistState, *, group: bool, mention: str | None, resumed: bool = False) -> str:
    names = ck.step_view(state).context()
    return render("checklist_step", state.lang, **names, group=group, mention=mention, resumed=resumed)


def note_text(lang: str, note: str, **data: Any) -> str:
    return render("checklist_note", lang, note=note, **data)


def html_to_markdown(html: str) -> str:
    """The export: bold and italics as Markdown, every other tag dropped, entities decoded."""
    marked = re.sub(r"</?(b|strong)>", "**", html)
    marked = re.sub(r"</?(i|em)>", "_", marked)
    marked = re.sub(r"</?code>", "`", marked)
    return plain_text(marked).strip() + "\n"


# -- shared plumbing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Who:
    chat: Chat
    user: User
    lang: str

    @property
    def group(self) -> bool:
        return self.chat.type != Chat.PRIVATE

    @property
    def mention(self) -> str | None:
        return self.user.first_name if self.group else None


async def _who(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Who | None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return None
    lang = session.ui_lang(await session.lang_override(context, chat, user.id), user)
    return Who(chat=chat, user=user, lang=lang)


def _store(context: ContextTypes.DEFAULT_TYPE) -> SessionStore:
    store = session.store_of(context)
    if store is None:
        raise StoreUnavailable("no session store configured")
    return store


async def _reply(who: Who, context: ContextTypes.DEFAULT_TYPE, html: str, **kwargs: Any) -> Message | None:
    return await send_html(context.bot, who.chat.id, html, **kwargs)


async def _show_step(
    who: Who,
    context: ContextTypes.DEFAULT_TYPE,
    state: ck.ChecklistState,
    *,
    edit: CallbackQuery | None = None,
    reply_to: int | None = None,
    resumed: bool = False,
) -> None:
    """Show the current step (editing the pressed message when there is one) and remember its message id."""
    html = step_text(state, group=who.group, mention=who.mention, resumed=resumed)
    keyboard = step_keyboard(state, who.user.id)
    message_id: int | None = None
    if edit is not None and isinstance(edit.message, Message):
        try:
            await edit.edit_message_text(html, parse_mode=ParseMode.HTML, reply_markup=keyboard)
            message_id = edit.message.message_id
        except BadRequest as error:
            if "not modified" not in error.message.lower():
                raise
            message_id = edit.message.message_id
    else:
        sent = await _reply(who, context, html, reply_markup=keyboard, reply_to=reply_to)
        message_id = sent.message_id if sent else None
    if message_id is not None and message_id != state.prompt_message_id:
        remembered = state.model_copy(update={"prompt_message_id": message_id})
        await _store(context).save_checklist(who.chat.id, who.user.id, remembered, expected_step=state.step)


async def _show_result(
    who: Who, context: ContextTypes.DEFAULT_TYPE, state: ck.ChecklistState, *, reply_to: int | None = None
) -> None:
    try:
        found = await asyncio.to_thread(ck.result, state)
    except Exception:  # a result that cannot be computed must not leave the user without an answer
        logger.exception("checklist result failed for answers %s", state.answers.model_dump_json())
        await _reply(who, context, note_text(state.lang, "result_failed"), reply_to=reply_to)
        return
    html = render("checklist_result", state.lang, v=ck.result_view(found, state), mention=who.mention)
    keyboard = control_keyboard(state.lang, who.user.id, _RESULT_CONTROLS)
    await _reply(who, context, html, reply_markup=keyboard, reply_to=reply_to)


async def _send_export(who: Who, context: ContextTypes.DEFAULT_TYPE, state: ck.ChecklistState) -> None:
    try:
        found = await asyncio.to_thread(ck.result, state)
    except Exception:
        logger.exception("checklist export failed for answers %s", state.answers.model_dump_json())
        await _reply(who, context, note_text(state.lang, "result_failed"))
        return
    view = ck.result_view(found, state)
    document = html_to_markdown(render("checklist_export", state.lang, v=view)).encode("utf-8")
    slug = re.sub(r"[^a-z0-9]+", "-", found.model_name.lower()).strip("-")[:40] or "job"
    await context.bot.send_document(
        who.chat.id,
        InputFile(BytesIO(document), filename=f"gpufit-checklist-{slug}.md"),
        caption=note_text(state.lang, "export_caption", model_name=found.model_name),
        parse_mode=ParseMode.HTML,
    )


async def _after_move(
    who: Who,
    context: ContextTypes.DEFAULT_TYPE,
    state: ck.ChecklistState,
    *,
    edit: CallbackQuery | None = None,
    reply_to: int | None = None,
) -> None:
    """After a committed move: the next prompt, or the result once the last step is answered."""
    if state.done:
        if edit is not None:
            await _drop_keyboard(edit)
        await _show_result(who, context, state, reply_to=reply_to)
    else:
        await _show_step(who, context, state, edit=edit, reply_to=reply_to)


async def _drop_keyboard(query: CallbackQuery) -> None:
    try:
        await query.edit_message_reply_markup(reply_markup=None)
    except BadRequest as error:
        logger.debug("could not drop the checklist keyboard: %s", error.message)


async def _move(
    who: Who,
    context: ContextTypes.DEFAULT_TYPE,
    state: ck.ChecklistState,
    moved: ck.ChecklistState,
) -> bool:
    """Commit `moved` only if the stored step is still `state.step` (False: a double tap got there first)."""
    return await _store(context).save_checklist(who.chat.id, who.user.id, moved, expected_step=state.step)


async def _store_down(who: Who, context: ContextTypes.DEFAULT_TYPE, lang: str | None = None) -> None:
    await _reply(who, context, note_text(lang or who.lang, "store_down"))


# -- commands ---------------------------------------------------------------------------------------------


async def checklist_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/checklist: start the checklist, or offer to resume or restart the one in progress."""
    who = await _who(update, context)
    if who is None:
        return
    await _start_or_offer(update, context, who)
    raise ApplicationHandlerStop


async def _start_or_offer(update: Update, context: ContextTypes.DEFAULT_TYPE, who: Who) -> None:
    message = update.effective_message
    args = context.args or []
    restart = bool(args) and args[0].lower() in ("restart", "new", "重来", "重新开始")
    try:
        store = _store(context)
        state = await store.get_checklist(who.chat.id, who.user.id)
        if state is None or restart:
            fresh = ck.start(who.lang)
            await store.save_checklist(who.chat.id, who.user.id, fresh)
            await _show_step(
                who, context, fresh, reply_to=message.message_id if message and who.group else None
            )
            return
        index = min(state.step, len(ck.STEPS) - 1)
        if state.done:
            html = note_text(state.lang, "finished_exists")
            keyboard = control_keyboard(state.lang, who.user.id, ("_resend", "_restart"))
        else:
            html = note_text(
                state.lang,
                "resume_or_restart",
                index=state.step + 1,
                total=len(ck.steps_for(state)),
                step=ck.STEPS[index].value,
            )
            keyboard = control_keyboard(state.lang, who.user.id, ("_resume", "_restart"))
        await _reply(who, context, html, reply_markup=keyboard)
    except StoreUnavailable:
        await _store_down(who, context)


async def _step_command(update: Update, context: ContextTypes.DEFAULT_TYPE, action: str) -> None:
    who = await _who(update, context)
    if who is None:
        return
    try:
        store = _store(context)
        state = await store.get_checklist(who.chat.id, who.user.id)
        if state is None or (state.done and action != "_back"):
            if action == "_cancel":
                return  # nothing of ours to cancel: other flows' /cancel handlers may answer
            await _reply(who, context, note_text(who.lang, "no_checklist"))
            raise ApplicationHandlerStop
        if action == "_cancel":
            await store.clear_checklist(who.chat.id, who.user.id)
            await _reply(who, context, note_text(state.lang, "cancelled"))
            raise ApplicationHandlerStop
        if action == "_back" and state.step == 0:
            await _reply(who, context, note_text(state.lang, "first_step"))
            await _show_step(who, context, state)
            raise ApplicationHandlerStop
        moved = ck.back(state) if action == "_back" else ck.skip(state)
        if await _move(who, context, state, moved):
            await _after_move(who, context, moved)
    except StoreUnavailable:
        await _store_down(who, context)
    raise ApplicationHandlerStop


async def back_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/back: one step back in the checklist."""
    await _step_command(update, context, "_back")


async def skip_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/skip: take the stated default for this step."""
    await _step_command(update, context, "_skip")


async def cancel_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel: drop the checklist and its answers."""
    await _step_command(update, context, "_cancel")


# -- buttons ----------------------------------------------------------------------------------------------


async def checklist_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A checklist button: a step's choice, back / skip / cancel, or resume / restart / again / export."""
    query = update.callback_query
    who = await _who(update, context)
    if query is None or who is None:
        return
    await _button(query, who, context)
    raise ApplicationHandlerStop  # "ck:" buttons are the checklist's alone


async def _button(query: CallbackQuery, who: Who, context: ContextTypes.DEFAULT_TYPE) -> None:
    press = parse_callback(query.data or "")
    if press is None or not isinstance(query.message, Message):
        await query.answer(_toast(who.lang, "stale"))
        return
    if press.user_id != who.user.id:
        await query.answer(_toast(who.lang, "not_yours"), show_alert=True)
        return
    try:
        store = _store(context)
        state = await store.get_checklist(who.chat.id, who.user.id)
        if state is None:
            await query.answer(_toast(who.lang, "no_checklist"))
            await _drop_keyboard(query)
            return
        if press.step is None:
            await _control(who, context, query, state, press.choice)
            return
        if press.step != state.step:
            await query.answer(_toast(state.lang, "stale"))
            return
        if press.choice == "_cancel":
            await store.clear_checklist(who.chat.id, who.user.id)
            await query.answer()
            await query.edit_message_text(note_text(state.lang, "cancelled"), parse_mode=ParseMode.HTML)
            return
        if press.choice == "_back":
            moved = ck.back(state)
        elif press.choice == "_skip":
            moved = ck.skip(state)
        else:
            moved, error = ck.answer_step(state, press.choice)
            if error is not None:
                await query.answer(_toast(state.lang, "stale"))
                return
        if not await _move(who, context, state, moved):
            await query.answer(_toast(state.lang, "stale"))
            return
        await query.answer()
        await _after_move(who, context, moved, edit=query)
    except StoreUnavailable:
        await query.answer(_toast(who.lang, "store_down"), show_alert=True)


async def _control(
    who: Who, context: ContextTypes.DEFAULT_TYPE, query: CallbackQuery, state: ck.ChecklistState, action: str
) -> None:
    store = _store(context)
    if action == "_restart":
        fresh = ck.start(state.lang)
        await store.save_checklist(who.chat.id, who.user.id, fresh)
        await query.answer()
        await _show_step(who, context, fresh, edit=query)
    elif action == "_resume" and not state.done:
        await query.answer()
        await _show_step(who, context, state, edit=query, resumed=True)
    elif action == "_resend" and state.done:
        await query.answer()
        await _show_result(who, context, state)
    elif action == "_export" and state.done:
        await query.answer()
        await _send_export(who, context, state)
    else:
        await query.answer(_toast(state.lang, "stale"))


def _toast(lang: str, note: str) -> str:
    words = " ".join(plain_text(note_text(lang, note)).split())
    limit = int(CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH)
    return words if len(words) <= limit else words[: limit - 1] + "…"


# -- free text --------------------------------------------------------------------------------------------


async def checklist_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A typed answer to the current step; other messages go on to the plain-question handlers."""
    message = update.effective_message
    chat, user = update.effective_chat, update.effective_user
    if message is None or chat is None or user is None or not message.text:
        return
    reply = message.reply_to_message
    group = chat.type != Chat.PRIVATE
    if group and (reply is None or reply.from_user is None or reply.from_user.id != context.bot.id):
        return  # in a group only a reply to the bot's prompt is an answer
    if session.store_of(context) is None:
        return  # no memory: let the message be answered as a plain question
    # Read with the rest of this chat's memory and kept for the question handler (session.chat_memory); a
    # store that is down reads as no checklist.
    state = (await session.chat_memory(context, chat.id, user.id, keep=True)).checklist
    if state is None or state.done:
        return  # most messages: a question (the user's language is not read for them)
    who = await _who(update, context)
    if who is None:
        return
    if who.group and (reply is None or reply.message_id != state.prompt_message_id):
        return  # a reply to another bot message is a follow-up question, not an answer
    # The checklist keeps the language it started in (the user's /lang or Telegram's): an answer such as
    # '1万条数据' is a data amount, not a request to switch, and /lang changes the language.
    moved, error = ck.answer_step(state, message.text)
    reply_to = message.message_id if who.group else None
    try:
        if error is not None:
            html = render("checklist_error", state.lang, error=error)
            await _reply(who, context, html, reply_to=reply_to)
            if who.group:
                await _show_step(who, context, state)
            raise ApplicationHandlerStop
        if await _move(who, context, state, moved):
            await _after_move(who, context, moved, reply_to=reply_to)
    except StoreUnavailable:
        await _store_down(who, context, state.lang)
    raise ApplicationHandlerStop
