"""Questions and commands: private chats answer any text; commands work in groups too (compact there).

Handlers translate Telegram into calls to bot.answer and send what it renders; no arithmetic here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any

from telegram import Chat, Message, Update
from telegram.ext import BaseHandler, CommandHandler, ContextTypes, MessageHandler, filters

from bot import session
from bot.answer import Answer, ChatContext, Lang, answer_message, card_answer, compare_answer, help_answer
from bot.hub.lookup import HUB_LOOKUP_KEY
from bot.keyboards import lang_keyboard, payload_question
from bot.replies import label, reply_html, send_answer, text
from core.catalog import load_catalog
from core.query import Currency, Query

logger = logging.getLogger(__name__)

# Edited messages are not asked again: the answer to the original stays.
NEW_MESSAGES = filters.UpdateType.MESSAGE


def in_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type != Chat.PRIVATE


def command_text(message: Message) -> str:
    """What follows `/cmd` or `/cmd@bot`, newlines kept (context.args would split them away)."""
    raw = message.text or message.caption or ""
    head, _, tail = raw.partition(" ")
    if "\n" in head:
        head, _, rest = head.partition("\n")
        tail = rest + (" " + tail if tail else "")
    return tail.strip()


async def chat_context(
    update: Update, context: ContextTypes.DEFAULT_TYPE, *, previous: Query | None = None
) -> ChatContext:
    """What this chat knows before a message — the user's language choice, the group's currency, the last
    question and vision job — as the answer service's inputs."""
    chat = update.effective_chat
    chat_id, user_id = session.ids(update)
    memory = await session.chat_memory(context, chat_id, user_id)
    return ChatContext(
        lang=session.lang_from(memory, chat),
        currency=chat_currency(memory.group.currency),
        previous=memory.last_query or previous,
        previous_vision=memory.last_vision,
    )


def chat_currency(value: str | None) -> Currency | None:
    """A chat's stored /settings currency, or None (unset, or a value this version does not know)."""
    try:
        return Currency(value.upper()) if value else None
    except ValueError:
        return None


async def ask(update: Update, context: ContextTypes.DEFAULT_TYPE, question: str) -> None:
    """Answer one question in its chat's context; remember the query for follow-ups; compact in groups."""
    _, user_id = session.ids(update)
    inputs = await chat_context(update, context)
    # A model the registry lacks is looked up on the Hub (I/O, a few seconds at most): in a worker thread.
    lookup = context.bot_data.get(HUB_LOOKUP_KEY)
    group = in_group(update)
    reply = await asyncio.to_thread(answer_message, question, inputs, lookup=lookup, compact=group)
    # remembered for the next message and the buttons' query stored in one commit, before it is sent
    await send_answer(update, context, reply, compact=group, remember_for=user_id)


async def remember(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int, reply: Answer) -> None:
    """The answer's query (or vision job) is the context of this user's next message here."""
    await session.remember_answer(context, chat_id, user_id, reply.query, reply.vision)


async def lang_for_words(update: Update, context: ContextTypes.DEFAULT_TYPE) -> str:
    """The language of the bot's own messages for this user here (no question text to detect from)."""
    _, user_id = session.ids(update)
    override = await session.lang_override(context, update.effective_chat, user_id)
    return session.ui_lang(override, update.effective_user)


def examples(lang: str) -> list[str]:
    """Example questions: the ones core offers as buttons under its help answer."""
    found = [
        b.action.removeprefix("ask=")
        for row in help_answer("zh" if lang == "zh" else "en").buttons
        for b in row
        if b.action.startswith("ask=")
    ]
    return found


async def text_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Any text in a private chat is a question."""
    message = update.effective_message
    if message is None or not message.text:
        return
    await ask(update, context, message.text)


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/start, with a deep-link payload carrying a shared question."""
    message = update.effective_message
    if message is None:
        return
    payload = context.args[0] if context.args else ""
    question = payload_question(payload) if payload else None
    if question:
        await ask(update, context, question)
        return
    lang = await lang_for_words(update, context)
    user = update.effective_user
    name = user.first_name.strip() if user and not in_group(update) else ""
    await reply_html(message, text("bot_start", lang, user_name=name, examples=examples(lang)))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/help: examples (as buttons) and the commands, in the user's language."""
    lang = await lang_for_words(update, context)
    reply = help_answer("zh" if lang == "zh" else "en")
    commands = text("bot_commands_help", lang, group=in_group(update), bot_username=context.bot.username)
    await send_answer(
        update,
        context,
        reply.model_copy(
            update={
                "html": f"{reply.html}\n\n{commands}",
                "compact": reply.compact.with_html(lambda _: f"{reply.html}\n\n{commands}"),
            }
        ),
        compact=False,
    )


async def fit_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/fit <question> (and /fit@bot in groups)."""
    message = update.effective_message
    if message is None:
        return
    question = command_text(message)
    if question:
        await ask(update, context, question)
        return
    lang = await lang_for_words(update, context)
    sample = next(iter(examples(lang)), "13b lora 4090")
    await reply_html(
        message,
        text(
            "bot_fit_usage", lang, group=in_group(update), bot_username=context.bot.username, example=sample
        ),
    )


async def cmd_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cmd: the launch line of the last answer (vllm serve …, llama-server -m … -ngl … -c …, a DeepSpeed
    config), or of the question after it ('/cmd serve qwen2.5-72b on 4 H100')."""
    message = update.effective_message
    if message is None:
        return
    question = command_text(message)
    await ask(update, context, f"/cmd {question}" if question else "/cmd")


async def cards_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cards: the catalog, grouped by segment."""
    message = update.effective_message
    if message is None:
        return
    lang = await lang_for_words(update, context)
    groups: dict[str, list[Any]] = defaultdict(list)
    for card in load_catalog().cards:
        groups[card.segment.value].append(card)
    order = ("consumer", "workstation", "datacenter")
    ordered = sorted(
        groups.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)
    )
    await reply_html(message, text("bot_cards", lang, groups=ordered))


async def card_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/card <name>: one card's facts."""
    await _cards_answer(update, context, "card")


async def compare_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/compare <a> <b> …: cards side by side (with the user's last question, if any)."""
    await _cards_answer(update, context, "compare")


async def _cards_answer(update: Update, context: ContextTypes.DEFAULT_TYPE, command: str) -> None:
    message = update.effective_message
    if message is None:
        return
    lang: Lang = "zh" if await lang_for_words(update, context) == "zh" else "en"
    names = [a for a in (context.args or []) if a.lower() not in ("vs", "and", "和", "对比")]
    if (command == "card" and not names) or (command == "compare" and len(names) < 2):
        await reply_html(message, text("bot_card_usage", lang, command=command))
        return
    chat_id, user_id = session.ids(update)
    previous = await session.last_query(context, chat_id, user_id)
    if command == "card":
        reply = card_answer(lang, " ".join(names), previous)
    else:
        reply = compare_answer(lang, names, previous)
    await send_answer(update, context, reply, compact=in_group(update))


# What `/lang <word>` accepts, to the stored choice.
_LANG_ARGS = {
    "en": "en", "english": "en", "英文": "en", "英语": "en",
    "zh": "zh", "cn": "zh", "chinese": "zh", "中文": "zh", "汉语": "zh",
    "auto": "auto", "自动": "auto",
}  # fmt: skip


async def lang_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/lang: buttons English / 中文 / auto; `/lang zh` (en, auto, 中文, english) switches directly."""
    message = update.effective_message
    if message is None:
        return
    chat_id, user_id = session.ids(update)
    wanted = _LANG_ARGS.get((context.args or [""])[0].strip().lower()) if context.args else None
    if wanted is not None:
        choice = None if wanted == "auto" else wanted
        saved = await session.set_lang(context, chat_id, user_id, choice)
        words = session.ui_lang(choice, update.effective_user)
        reply = text("bot_lang_set", words, choice=wanted) if saved else text("bot_forget", words, ok=False)
        await reply_html(message, reply)
        return
    current = await session.lang_override(context, update.effective_chat, user_id)
    lang = session.ui_lang(current, update.effective_user)
    labels = {c: label(f"lang_{c}", lang) for c in ("en", "zh", "auto")}
    await reply_html(message, text("bot_lang", lang, current=current), reply_markup=lang_keyboard(labels))


async def forget_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/forget: delete every row about this user, in every chat."""
    message = update.effective_message
    if message is None:
        return
    lang = await lang_for_words(update, context)
    _, user_id = session.ids(update)
    deleted = await session.forget(context, user_id)
    await reply_html(message, text("bot_forget", lang, ok=deleted is not None))


async def cancel_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel outside any running step (the checklist handles its own /cancel first)."""
    message = update.effective_message
    if message is None:
        return
    await reply_html(message, text("bot_cancel", await lang_for_words(update, context)))


async def unknown_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A /command nobody handles, in a private chat: a pointer to /help rather than silence."""
    message = update.effective_message
    if message is None:
        return
    await reply_html(message, text("bot_unknown_command", await lang_for_words(update, context)))


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    """Commands (private and groups) and the private catch-all text handler, in matching order."""
    return [
        CommandHandler("start", start, NEW_MESSAGES),
        CommandHandler("help", help_command, NEW_MESSAGES),
        CommandHandler("fit", fit_command, NEW_MESSAGES),
        CommandHandler("cmd", cmd_command, NEW_MESSAGES),
        CommandHandler("cards", cards_command, NEW_MESSAGES),
        CommandHandler("card", card_command, NEW_MESSAGES),
        CommandHandler("compare", compare_command, NEW_MESSAGES),
        CommandHandler("lang", lang_command, NEW_MESSAGES),
        CommandHandler("forget", forget_command, NEW_MESSAGES),
        CommandHandler("cancel", cancel_command, NEW_MESSAGES),
    ]


def private_text_handlers() -> list[BaseHandler[Any, Any, Any]]:
    """Registered after every command handler: any other text is a question, any other /command is unknown."""
    return [
        MessageHandler(
            NEW_MESSAGES & filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND, text_message
        ),
        MessageHandler(NEW_MESSAGES & filters.ChatType.PRIVATE & filters.COMMAND, unknown_command),
    ]
