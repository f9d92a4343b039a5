"""Groups and supergroups: answer only when addressed, let admins change the chat's settings.

The bot answers commands (`/fit …`, `/fit@<bot> …`, registered in bot/private.py), messages that mention it
and replies to its own messages; everything else in a group is left alone, so it behaves the same with
privacy mode on or off. Sessions are keyed by (chat, user): each member's follow-ups are their own.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Chat, ChatMember, ChatMemberUpdated, Message, MessageEntity, Update
from telegram.constants import ChatMemberStatus
from telegram.error import BadRequest, Forbidden
from telegram.ext import BaseHandler, ChatMemberHandler, CommandHandler, ContextTypes, MessageHandler, filters

from bot import session
from bot.private import ask, command_text, examples, lang_for_words
from bot.replies import reply_html, send_html, text

logger = logging.getLogger(__name__)

ANONYMOUS_ADMIN_ID = 1087968824  # "GroupAnonymousBot", the sender of anonymous admins' messages
LANG_VALUES = {"en": "en", "zh": "zh", "auto": None}
CURRENCY_VALUES = {"usd": "USD", "cny": "CNY", "rmb": "CNY", "auto": None}


class AddressedToBot(filters.MessageFilter):
    """A group message that mentions the bot or replies to one of its messages."""

    def filter(self, message: Message) -> bool:
        bot = message.get_bot()
        reply = message.reply_to_message
        if reply is not None and reply.from_user is not None and reply.from_user.id == bot.id:
            return True
        return bool(mentions_of_bot(message))


def mentions_of_bot(message: Message) -> list[str]:
    """The exact mention strings (as written) that address this bot."""
    bot = message.get_bot()
    username = (bot.username or "").lower()
    found: list[str] = []
    for entity, value in message.parse_entities([MessageEntity.MENTION, MessageEntity.TEXT_MENTION]).items():
        if (entity.type == MessageEntity.MENTION and username and value.lower() == f"@{username}") or (
            entity.type == MessageEntity.TEXT_MENTION and entity.user is not None and entity.user.id == bot.id
        ):
            found.append(value)
    return found


async def group_question(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A mention of the bot or a reply to it: the text, without the mention, is the question."""
    message = update.effective_message
    if message is None or not message.text:
        return
    question = message.text
    for mention in mentions_of_bot(message):
        question = question.replace(mention, " ")
    question = " ".join(question.split())
    if not question:
        lang = await lang_for_words(update, context)
        sample = next(iter(examples(lang)), "13b lora 4090")
        await reply_html(
            message,
            text("bot_fit_usage", lang, group=True, bot_username=context.bot.username, example=sample),
        )
        return
    await ask(update, context, question)


async def is_admin(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether the sender may change this chat's settings (checked with Telegram, not cached)."""
    chat, message, user = update.effective_chat, update.effective_message, update.effective_user
    if chat is None or chat.type == Chat.PRIVATE:
        return True
    if message is not None and message.sender_chat is not None and message.sender_chat.id == chat.id:
        return True  # an anonymous admin posts as the group itself
    if user is None or user.id == ANONYMOUS_ADMIN_ID:
        return False
    try:
        member = await context.bot.get_chat_member(chat.id, user.id)
    except (BadRequest, Forbidden) as error:
        logger.info("admin check failed in chat %s: %s", chat.id, error.message)
        return False
    return member.status in (ChatMember.ADMINISTRATOR, ChatMember.OWNER)


async def settings_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/settings [lang en|zh|auto] [currency usd|cny|auto]: show, or change (admins only in groups)."""
    message, chat = update.effective_message, update.effective_chat
    if message is None or chat is None:
        return
    lang = await lang_for_words(update, context)
    words = command_text(message).lower().split()
    changes: dict[str, str | None] = {}
    for name, value in zip(words[::2], words[1::2], strict=False):
        if name in ("lang", "language", "语言") and value in LANG_VALUES:
            changes["lang"] = LANG_VALUES[value]
        elif name in ("currency", "币种") and value in CURRENCY_VALUES:
            changes["currency"] = CURRENCY_VALUES[value]
        else:
            changes = {}
            break
    if words and (not changes or len(words) % 2):
        await reply_html(message, text("group_settings", lang, error="invalid"))
        return
    if changes:
        if not await is_admin(update, context):
            await reply_html(message, text("group_settings", lang, error="denied"))
            return
        if not await session.set_group_settings(context, chat.id, **changes):
            await reply_html(message, text("group_settings", lang, error="store"))
            return
        lang = changes.get("lang") or lang
    current = await session.group_settings(context, chat.id)
    await reply_html(
        message,
        text(
            "group_settings",
            lang,
            error=None,
            changed=bool(changes),
            chat_lang=current.lang,
            currency=current.currency,
        ),
    )


async def my_membership(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot was added to or removed from a chat, or a user blocked / unblocked it."""
    change: ChatMemberUpdated | None = update.my_chat_member
    if change is None:
        return
    old, new = change.old_chat_member.status, change.new_chat_member.status
    chat = change.chat
    gone = (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED)
    logger.info("bot membership in %s chat %s: %s -> %s", chat.type, chat.id, old, new)
    if new in gone:
        await session.mark_blocked(context, chat.id)
        return
    if chat.type == Chat.PRIVATE or old not in gone:
        return
    settings = await session.group_settings(context, chat.id)
    lang = session.ui_lang(settings.lang, change.from_user)
    try:
        await send_html(context.bot, chat.id, text("group_hello", lang, bot_username=context.bot.username))
    except (Forbidden, BadRequest) as error:
        logger.info("could not greet chat %s: %s", chat.id, error.message)


async def migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A group became a supergroup (new id); its settings start fresh under the new id."""
    message = update.effective_message
    if message is not None and message.migrate_to_chat_id:
        logger.info("chat %s migrated to %s", message.chat_id, message.migrate_to_chat_id)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("settings", settings_command, filters.UpdateType.MESSAGE),
        MessageHandler(
            filters.UpdateType.MESSAGE
            & filters.ChatType.GROUPS
            & filters.TEXT
            & ~filters.COMMAND
            & AddressedToBot(),
            group_question,
        ),
        MessageHandler(filters.StatusUpdate.MIGRATE, migrated),
        ChatMemberHandler(my_membership, ChatMemberHandler.MY_CHAT_MEMBER),
    ]
